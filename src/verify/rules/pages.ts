/**
 * Page-tree rule: pages and page-tree nodes are signed content. A page may only gain annotations in /Annots
 * (judged by what was added: signature widgets, annotations); a page added, or any other change of a page
 * or of a page-tree node, is OTHER. (Folio's own audit pages are judged apart, see audit-revision.ts.)
 */
import { dictOf, type PdfDocument, type PdfValue } from '../../pdf/index.js';
import type { ModificationLevel } from '../modifications.js';
import { changedKeys } from './shared.js';

export function judgePageTree(
  doc: PdfDocument,
  role: 'page' | 'pages',
  num: number,
  kind: 'added' | 'changed',
  a: PdfValue | undefined,
  b: PdfValue,
  compareAnnots: (before: PdfValue | undefined, after: PdfValue | undefined) => ModificationLevel,
): { level: ModificationLevel; issue: string } {
  if (role === 'pages') return { level: 'OTHER', issue: `page tree node ${num} ${kind}` };
  if (a === undefined) return { level: 'OTHER', issue: `page ${num} added` };
  const changed = changedKeys(doc, a, b);
  if (changed.every((k) => k === 'Annots'))
    return { level: compareAnnots(dictOf(a)?.map.get('Annots'), dictOf(b)?.map.get('Annots')), issue: `annotations of page ${num} changed` };
  return { level: 'OTHER', issue: `page ${num} changed (${changed.join(', ')})` };
}
