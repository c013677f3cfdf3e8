/**
 * Catalog rules: what a later revision may change in the document catalog besides its form and validation
 * data. /Extensions may gain developer-extension entries (ADBE, ESIC: what DSS and document timestamps
 * declare); any other change of /Extensions is OTHER.
 */
import { sameValue, type PdfDocument, type PdfValue } from '../../pdf/index.js';
import type { ModificationLevel } from '../modifications.js';

/**
 * Catalog /Extensions: adding developer-extension entries (ADBE, ESIC: what DSS and document timestamps
 * declare) is part of signing; changing or removing an existing entry, or anything not shaped as an
 * extension, is OTHER.
 */
export function extensionsLevel(doc: PdfDocument, aRaw: PdfValue | undefined, fromRev: number, bRaw: PdfValue | undefined): ModificationLevel {
  const a = doc.dictAt(aRaw, fromRev);
  const b = doc.dictAt(bRaw, doc.last);
  if (!b) return 'OTHER';
  for (const [k, v] of a?.map ?? []) {
    const bv = b.map.get(k);
    if (bv === undefined || !sameValue(doc.buf, doc.deref(v, fromRev) ?? null, doc.deref(bv, doc.last) ?? null)) return 'OTHER';
  }
  for (const [k, v] of b.map) {
    if (a?.map.has(k) || k === 'Type') continue;
    if (!['ADBE', 'ESIC'].includes(k)) return 'OTHER';
    const ext = doc.dictAt(v, doc.last);
    if (!ext || ![...ext.map.keys()].every((x) => ['Type', 'BaseVersion', 'ExtensionLevel', 'URL', 'ExtensionRevision'].includes(x))) return 'OTHER';
  }
  return 'SIGNATURES_ONLY';
}
