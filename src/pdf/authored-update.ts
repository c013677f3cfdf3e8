/**
 * What an authoring session on an opened document (openForAuthoring: pdf-lib's objects built from the
 * reader's) adds to it, as the objects of one incremental update: every object numbered after the original
 * ones, and the originals the caller rewrote, each as its own `N G obj … endobj` bytes, in number order.
 * pdf-lib writes the values (fonts, content streams, dictionaries); the framing is written here, so no
 * capability writes PDF syntax itself.
 */
import type { PDFDocument, PDFObject, PDFRef } from '@cantoo/pdf-lib';
import type { UpdateObject } from './incremental.js';

function indirectObject(ref: PDFRef, obj: PDFObject): Uint8Array {
  const header = `${ref.objectNumber} ${ref.generationNumber} obj\n`;
  const footer = '\nendobj\n';
  const out = new Uint8Array(header.length + obj.sizeInBytes() + footer.length);
  out.set(Buffer.from(header, 'latin1'), 0);
  const n = obj.copyBytesInto(out, header.length);
  out.set(Buffer.from(footer, 'latin1'), header.length + n);
  return out;
}

/**
 * The objects of `doc` numbered above `originalLargest`, and those in `rewritten` (object numbers of the
 * original the caller changed), except `leaveOut` (e.g. a signature dictionary the caller writes itself).
 */
export function authoredObjects(doc: PDFDocument, originalLargest: number, rewritten: ReadonlySet<number>, leaveOut?: number): UpdateObject[] {
  const objects: UpdateObject[] = [];
  for (const [ref, obj] of doc.context.enumerateIndirectObjects()) {
    if (ref.objectNumber === leaveOut) continue;
    if (ref.objectNumber > originalLargest || rewritten.has(ref.objectNumber)) {
      objects.push({ objectNumber: ref.objectNumber, generation: ref.generationNumber, bytes: indirectObject(ref, obj) });
    }
  }
  return objects.sort((a, b) => a.objectNumber - b.objectNumber);
}
