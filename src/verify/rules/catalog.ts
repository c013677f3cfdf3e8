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
function extensionsStep(doc: PdfDocument, aRaw: PdfValue | undefined, fromRev: number, bRaw: PdfValue | undefined, toRev: number): ModificationLevel {
  const a = doc.dictAt(aRaw, fromRev);
  const b = doc.dictAt(bRaw, toRev);
  if (!a && !b) return 'NONE';
  if (!b) return 'OTHER';
  for (const [k, v] of a?.map ?? []) {
    const bv = b.map.get(k);
    if (bv === undefined || !sameValue(doc.buf, doc.deref(v, fromRev) ?? null, doc.deref(bv, toRev) ?? null)) return 'OTHER';
  }
  for (const [k, v] of b.map) {
    if (a?.map.has(k) || k === 'Type') continue;
    if (!['ADBE', 'ESIC'].includes(k)) return 'OTHER';
    const ext = doc.dictAt(v, toRev);
    if (!ext || ![...ext.map.keys()].every((x) => ['Type', 'BaseVersion', 'ExtensionLevel', 'URL', 'ExtensionRevision'].includes(x))) return 'OTHER';
  }
  return 'SIGNATURES_ONLY';
}

/**
 * /Extensions judged revision by revision from `fromRev` to the last: an entry changed in one revision and
 * changed back (or extended) in a later one is still seen.
 */
export function extensionsLevel(doc: PdfDocument, fromRev: number): ModificationLevel {
  let level: ModificationLevel = 'NONE';
  for (let r = fromRev + 1; r <= doc.last; r++) {
    const step = extensionsStep(doc, doc.catalogAt(r - 1)?.map.get('Extensions'), r - 1, doc.catalogAt(r)?.map.get('Extensions'), r);
    if (step === 'OTHER') return 'OTHER';
    if (step !== 'NONE') level = step;
  }
  return level === 'NONE' ? 'SIGNATURES_ONLY' : level;
}
