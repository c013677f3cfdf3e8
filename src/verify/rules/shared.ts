/** Small helpers shared by the modification rules. */
import { decodePdfText, differingKeys, dictOf, isDict, isStream, sameValue, type PdfDict, type PdfDocument, type PdfValue } from '../../pdf/index.js';

/** A document information dictionary holds text strings, dates and names only. */
export function isInfoLike(d: PdfDict): boolean {
  if (d.map.has('Type')) return false;
  for (const v of d.map.values()) {
    if (v === null || typeof v !== 'object' || Array.isArray(v) || (v.kind !== 'string' && v.kind !== 'name')) return false;
  }
  return true;
}

export function isEmptyValue(v: PdfValue): boolean {
  return v === null || (isDict(v) && v.map.size === 0);
}

export function hasRealContents(d: PdfDict): boolean {
  const c = d.map.get('Contents');
  return typeof c === 'object' && c !== null && !Array.isArray(c) && c.kind === 'string' && c.bytes.some((x) => x !== 0);
}

export function changedKeys(doc: PdfDocument, aV: PdfValue, bV: PdfValue): string[] {
  const a = dictOf(aV);
  const b = dictOf(bV);
  if (!a || !b) return ['(type)'];
  const out = differingKeys(doc.buf, a, b, 'Length');
  if (isStream(aV) && isStream(bV) && !sameValue(doc.buf, aV, bV) && out.length === 0) out.push('(stream data)');
  return out;
}

export function fieldName(doc: PdfDocument, v: PdfValue | undefined): string | undefined {
  const d = dictOf(v);
  const t = d?.map.get('T');
  if (typeof t === 'object' && t !== null && !Array.isArray(t) && t.kind === 'string') return decodePdfText(t.bytes);
  const parent = d ? doc.dictAt(d.map.get('Parent'), doc.last) : undefined;
  return parent && parent !== d ? fieldName(doc, parent) : undefined;
}
