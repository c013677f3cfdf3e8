/**
 * Annotation rule: an annotation added or changed after signing is ANNOTATIONS; one that draws over the page
 * (an appearance, or a kind that always renders: free text, stamps, shapes, ink, redactions, watermarks) is
 * the evil-annotation attack, never permitted whatever DocMDP allows. Links, pop-ups and notes are inert.
 */
import { dictOf, isName, type PdfDocument, type PdfValue } from '../../pdf/index.js';
import { hasVisibleAppearance } from '../signatures.js';
import type { ModificationDetail, ModificationLevel } from '../modifications.js';

const INERT_ANNOTS = new Set(['Link', 'Popup', 'Text']);
const ALWAYS_VISIBLE = new Set(['FreeText', 'Stamp', 'Redact', 'Square', 'Circle', 'Ink', 'Watermark']);

export interface AnnotationJudgement {
  level: ModificationLevel;
  issue: string;
  attack?: ModificationDetail['attack'];
}

export function judgeAnnotation(doc: PdfDocument, num: number, kind: 'added' | 'changed', value: PdfValue): AnnotationJudgement {
  const d = dictOf(value)!;
  const sub = d.map.get('Subtype');
  const subName = isName(sub) ? sub.name : '?';
  const visible = !INERT_ANNOTS.has(subName) && (hasVisibleAppearance(doc, d, doc.last) || ALWAYS_VISIBLE.has(subName));
  return {
    level: 'ANNOTATIONS',
    issue: `${subName} annotation ${num} ${kind}${visible ? ' (visible over the page)' : ''}`,
    ...(visible ? { attack: 'EVIL_ANNOTATION' as const } : {}),
  };
}
