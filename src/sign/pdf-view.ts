/**
 * What signing reads of an input PDF goes through the shared bounded reader (src/pdf/), not
 * through pdf-lib's parser. pdf-lib parses a file byte by byte from its header: it trusts every xref
 * stream's /W and /Index (a 603-byte file made it loop for minutes), inflates every object stream without
 * a cap (a 1.5 MB file asked it for 1.5 GB), and crawls through bytes that belong to no object at
 * microseconds per byte (20 MB of noise: about a minute). The bounded reader has none of these costs, so
 * the signer reads the document with it and hands pdf-lib a clean image of the objects in force at the
 * last revision: plain `num gen obj` bodies, streams with their raw bytes and a direct /Length, no object
 * or xref streams, nesting already capped. pdf-lib only ever sees what the reader accepted; the update is
 * still appended to the caller's original bytes.
 */
import { FolioError } from '../errors.js';
import { ChunkWriter, MAX_OBJECT_NUMBER, PdfDocument, isName, isRef, isStream, serialize, type PdfDict, type PdfValue } from '../pdf/index.js';

/** Objects a document may have for signing: beyond what pdf-lib can hold without a huge heap. */
export const MAX_SIGN_OBJECTS = 500_000;
/** Page-tree nodes visited, counting a node reached twice twice (pdf-lib walks the tree that way). */
export const MAX_PAGE_TREE_VISITS = 200_000;
const MAX_PAGE_TREE_DEPTH = 64;

const unprocessable = (message: string) => new FolioError('UNPROCESSABLE_DOCUMENT', message);

/** Reads the PDF with the bounded reader and checks what signing needs; throws a FolioError otherwise. */
export function readForSigning(bytes: Uint8Array): PdfDocument {
  const doc = new PdfDocument(bytes);
  if (doc.isEncrypted()) throw unprocessable('The PDF is encrypted; remove the encryption (or password) before signing');
  if (doc.revisions.length === 0 || !doc.catalogAt(doc.last)) {
    throw unprocessable('The PDF has no readable document catalog (corrupt, truncated, or not a PDF after its header)');
  }
  const size = doc.trailerAt(doc.last)?.map.get('Size');
  if (typeof size === 'number' && size > MAX_OBJECT_NUMBER + 1) {
    throw unprocessable(`The PDF's trailer declares /Size ${size}, beyond the PDF limit of ${MAX_OBJECT_NUMBER + 1} objects`);
  }
  checkPageTree(doc);
  return doc;
}

/**
 * Walks the page tree as pdf-lib will (every Kids entry, repeats included) and refuses a tree that loops, is
 * deeper than any real one, or fans out into more visits than a document can have pages.
 */
function checkPageTree(doc: PdfDocument): void {
  const last = doc.last;
  const root = doc.catalogAt(last)!.map.get('Pages');
  let visits = 0;
  const path = new Set<number>();
  const walk = (ref: PdfValue | undefined, depth: number): void => {
    if (++visits > MAX_PAGE_TREE_VISITS) throw unprocessable(`The PDF page tree has more than ${MAX_PAGE_TREE_VISITS} nodes (counting repeats)`);
    if (depth > MAX_PAGE_TREE_DEPTH) throw unprocessable(`The PDF page tree is nested deeper than ${MAX_PAGE_TREE_DEPTH} levels`);
    const num = isRef(ref) ? ref.num : undefined;
    if (num !== undefined && path.has(num)) throw unprocessable('The PDF page tree contains a cycle');
    const node = doc.dictAt(ref, last);
    if (!node || !isName(node.map.get('Type'), 'Pages')) return;
    const kids = doc.deref(node.map.get('Kids'), last);
    if (!Array.isArray(kids)) return;
    if (num !== undefined) path.add(num);
    for (const kid of kids) walk(kid, depth + 1);
    if (num !== undefined) path.delete(num);
  };
  walk(root, 0);
}

/**
 * A clean PDF holding every object in force at the last revision (as the reader resolves it), with a
 * classic xref table and a trailer carrying the last /Root, /Info, /ID and /Size. Objects the reader cannot
 * read (broken, too deeply nested, in an object stream over its budget) are left out, as a viewer would.
 */
export function cleanImage(doc: PdfDocument): Uint8Array {
  const last = doc.last;
  // Every object number defined by some revision; the reader resolves each as of the last one.
  const numbers = new Set<number>();
  for (const rev of doc.revisions) {
    for (const n of rev.entries.keys()) {
      numbers.add(n);
      if (numbers.size > MAX_SIGN_OBJECTS) throw unprocessable(`The PDF has more than ${MAX_SIGN_OBJECTS} objects; it is too large to sign`);
    }
  }
  const version = /%PDF-(\d\.\d)/.exec(doc.latin1(0, 1024))?.[1] ?? '1.7';
  const out = new ChunkWriter();
  out.text(`%PDF-${version}\n%\xe2\xe3\xcf\xd3\n`);
  const offsets: Array<[number, number, number]> = [];
  let largest = 0;
  for (const num of [...numbers].sort((a, b) => a - b)) {
    if (num <= 0 || num > MAX_OBJECT_NUMBER) continue;
    const obj = doc.resolve(num, last);
    if (!obj) continue;
    // Cross-reference and object streams are the reader's business: pdf-lib would parse them again, with
    // their /W, /Index and /N taken at face value and their data inflated without a cap.
    if (isStream(obj.value) && (isName(obj.value.dict.map.get('Type'), 'XRef') || isName(obj.value.dict.map.get('Type'), 'ObjStm'))) continue;
    const gen = obj.entry.type === 1 && obj.offset !== undefined ? (doc.objectAt(obj.offset, last)?.gen ?? obj.entry.gen) : 0;
    offsets.push([num, gen, out.length]);
    largest = Math.max(largest, num);
    out.text(`${num} ${gen} obj\n`);
    if (isStream(obj.value)) {
      const data = doc.buf.subarray(obj.value.dataStart, obj.value.dataEnd);
      const dict = new Map(obj.value.dict.map);
      dict.set('Length', data.length);
      out.text(`${serialize({ kind: 'dict', map: dict, start: 0, end: 0 } as PdfDict)}\nstream\n`);
      out.bytes(data);
      out.text('\nendstream\nendobj\n');
    } else {
      out.text(`${serialize(obj.value)}\nendobj\n`);
    }
  }
  const trailer = doc.trailerAt(last);
  const declared = trailer?.map.get('Size');
  const size = Math.max(largest + 1, typeof declared === 'number' && Number.isInteger(declared) ? declared : 0);
  const xrefAt = out.length;
  // One subsection per object keeps the table trivially valid however sparse the numbers are.
  let xref = 'xref\n0 1\n0000000000 65535 f \n';
  for (const [num, gen, at] of offsets) xref += `${num} 1\n${String(at).padStart(10, '0')} ${String(gen).padStart(5, '0')} n \n`;
  out.text(xref);
  const root = trailer?.map.get('Root') ?? doc.catalogRefAt(last);
  const entries = [`/Size ${size}`];
  if (root) entries.push(`/Root ${serialize(root)}`);
  for (const key of ['Info', 'ID']) {
    const v = trailer?.map.get(key);
    if (v !== undefined) entries.push(`/${key} ${serialize(v)}`);
  }
  out.text(`trailer\n<< ${entries.join(' ')} >>\nstartxref\n${xrefAt}\n%%EOF\n`);
  return out.join();
}
