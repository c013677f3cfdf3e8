/**
 * Trailer rule: changes reaching the document only through a later trailer. Another /Root is another
 * document (OTHER); another /Info is judged by the metadata rule.
 */
import { isRef, type PdfDict, type PdfDocument } from '../../pdf/index.js';
import type { ModificationDetail } from '../modifications.js';
import { judgeInfo } from './metadata.js';

/**
 * Changes reaching the document only through the trailer: another /Root is a different document (OTHER);
 * another /Info is a metadata update (METADATA), whatever the new dictionary looks like.
 */
export function trailerChanges(doc: PdfDocument, fromRev: number, infoBefore: PdfDict | undefined): ModificationDetail[] {
  const out: ModificationDetail[] = [];
  const refOf = (t: PdfDict | undefined, k: string) => {
    const v = t?.map.get(k);
    return isRef(v) ? v.num : v === undefined ? undefined : -1;
  };
  for (let r = fromRev + 1; r <= doc.last; r++) {
    const t = doc.trailerAt(r);
    const a = doc.trailerAt(r - 1);
    if (!t || t === a) continue;
    const root = refOf(t, 'Root');
    if (root !== refOf(a, 'Root'))
      out.push({ revision: r, kind: 'structure', level: 'OTHER', issue: `the trailer of revision ${r + 1} points /Root at another catalog` });
    const info = refOf(t, 'Info');
    if (info !== undefined && info !== refOf(a, 'Info')) {
      const j = judgeInfo(doc.buf, infoBefore, doc.dictAt(t.map.get('Info'), r));
      const what = j.what.length ? ` (${j.what.join(', ')})` : ' (bookkeeping only)';
      out.push({
        object: info >= 0 ? info : undefined,
        revision: r,
        kind: 'changed',
        level: j.level,
        issue: `the trailer points /Info at another document information dictionary${what}`,
        ...(j.level === 'SIGNATURES_ONLY' ? { ltaUpdate: true } : {}),
      });
    }
  }
  return out;
}
