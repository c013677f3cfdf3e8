/**
 * Long-term-validation updates (PAdES, ETSI EN 319 142-1 §5.4/5.5; ISO 32000-2 §12.8.4.3 and §12.8.5): a
 * Document Security Store and document timestamps added after a signature, with the catalog, form and page
 * entries that carry them and a signer's metadata bookkeeping. pyHanko calls this level LTA_UPDATES; ISO
 * 32000-2 lets them follow even a P=1 certification, so each modification detail they make is marked
 * `ltaUpdate` and DocMDP P=1 permits exactly those.
 */
import { dictOf, isName, isRef, type PdfDict, type PdfDocument } from '../../pdf/index.js';

/** A document timestamp's signature dictionary: /Type /DocTimeStamp or /SubFilter /ETSI.RFC3161. */
export function isDocTimestampDict(d: PdfDict | undefined): boolean {
  return !!d && (isName(d.map.get('Type'), 'DocTimeStamp') || isName(d.map.get('SubFilter'), 'ETSI.RFC3161'));
}

/** A signature field (or its widget kid) whose value, at the final revision, is a document timestamp. */
export function isDocTimestampField(doc: PdfDocument, num: number): boolean {
  const last = doc.last;
  const d = dictOf(doc.resolve(num, last)?.value);
  if (!d) return false;
  const owner = d.map.has('FT') || !isRef(d.map.get('Parent')) ? d : doc.dictAt(d.map.get('Parent'), last);
  if (!owner || !isName(owner.map.get('FT'), 'Sig')) return false;
  return isDocTimestampDict(doc.dictAt(owner.map.get('V'), last));
}

/** Catalog keys a long-term-validation update may change. */
export const LTA_CATALOG_KEYS = new Set(['AcroForm', 'DSS', 'Extensions', 'Version', 'Metadata']);
/** Form dictionary keys a document timestamp's field may change. */
export const LTA_ACROFORM_KEYS = new Set(['Fields', 'SigFlags']);

/** Whether every reference a list gained (form /Fields, page /Annots) is a document timestamp's field or widget. */
export function onlyDocTimestampsAdded(doc: PdfDocument, added: number[]): boolean {
  return added.length > 0 && added.every((n) => isDocTimestampField(doc, n));
}
