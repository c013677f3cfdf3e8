/**
 * Form-filling rule: a field's value (/V) is what form filling changes; its appearances (direct, or through
 * indirect /AP dictionaries and streams) may change with it. An appearance re-pointed while the value stays is
 * not form filling (the "sneaky" appearance variant).
 */
import { dictOf, isRef, sameValue, type PdfDocument } from '../../pdf/index.js';

/** Whether the value (/V) of a field, or of a field above a widget, differs between `fromRev` and now. */
export function fieldValueChanged(doc: PdfDocument, num: number, fromRev: number): boolean {
  let n: number | undefined = num;
  for (let depth = 0; n !== undefined && depth < 16; depth++) {
    const a = dictOf(doc.resolve(n, fromRev)?.value);
    const b = dictOf(doc.resolve(n, doc.last)?.value);
    if (!a || !b) return true;
    const va = doc.deref(a.map.get('V'), fromRev);
    const vb = doc.deref(b.map.get('V'), doc.last);
    if ((va === undefined) !== (vb === undefined) || (va !== undefined && !sameValue(doc.buf, va, vb!))) return true;
    const parent = b.map.get('Parent');
    n = isRef(parent) && parent.num !== n ? parent.num : undefined;
  }
  return false;
}
