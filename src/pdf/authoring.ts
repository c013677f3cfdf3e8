/**
 * The one way from a caller's PDF bytes to @cantoo/pdf-lib (the authoring library: page copies, drawing,
 * in-memory edits). pdf-lib's parser is not safe on hostile bytes: it trusts every xref stream's /W and
 * /Index (a 603-byte file made it loop for minutes), inflates every object stream without a cap (a 1.5 MB
 * file asked it for 1.5 GB, outside the V8 heap that an engine thread's resourceLimits bound), and crawls
 * through bytes that belong to no object at microseconds per byte (20 MB of noise: about a minute).
 *
 * So the bounded forensic reader (reader.ts: xref sizes, object counts, inflation caps, nesting) reads the
 * document, the caller's own checks run on what it read, and pdf-lib is handed a clean image of the objects
 * in force at the last revision: plain `num gen obj` bodies, streams with their raw bytes and a direct
 * /Length, no object or xref streams, nesting already capped. pdf-lib only ever sees what the reader
 * accepted. The ESLint config holds the boundary: only src/pdf may import pdf-lib, and only this file may
 * call PDFDocument.load.
 */
import { ParseSpeeds, PDFDocument } from '@cantoo/pdf-lib';
import { FolioError, isFolioError } from '../errors.js';
import { isName, isStream, type PdfDict } from './objects.js';
import { MAX_OBJECT_NUMBER } from './incremental.js';
import { PdfDocument } from './reader.js';
import { ChunkWriter, serialize } from './serialize.js';

/** Objects a document may have for authoring by default: beyond what pdf-lib can hold without a huge heap. */
export const MAX_AUTHORING_OBJECTS = 500_000;

export interface AuthoringLimits {
  /** Objects the document may define, all revisions together (each becomes a pdf-lib object). */
  maxObjects: number;
  /** What the document is opened for, in messages ("sign", "merge"). */
  purpose: string;
  /**
   * The caller's checks on the reader's document, before any image is built (page-tree walks, page limits):
   * throw a FolioError to refuse. Runs after encryption, the catalog and /Size are checked.
   */
  inspect?: (doc: PdfDocument) => void;
}

export interface AuthoringDocument {
  /** The bounded reader's view of the input (revisions, last xref, offsets: what an incremental update chains to). */
  reader: PdfDocument;
  /** pdf-lib's document, loaded from the clean image. */
  doc: PDFDocument;
}

const unprocessable = (message: string, cause?: unknown) => new FolioError('UNPROCESSABLE_DOCUMENT', message, { cause });

/**
 * Reads `bytes` with the bounded reader and opens what it read in pdf-lib. Refusals are 422
 * UNPROCESSABLE_DOCUMENT FolioErrors whose message starts "The PDF …" (the reader's bounds, encryption, no
 * catalog, too many objects, pdf-lib failing on the image); the caller's `inspect` errors pass unchanged.
 */
export async function openForAuthoring(bytes: Uint8Array, limits: AuthoringLimits): Promise<AuthoringDocument> {
  let reader: PdfDocument;
  try {
    reader = new PdfDocument(bytes);
  } catch (e) {
    // The reader's own bounds answer a FolioError; anything else is a file it could not read at all.
    if (isFolioError(e)) throw unprocessable(e.message.replace('the verifier', 'Folio'), e);
    throw unprocessable('The PDF could not be read', e);
  }
  if (reader.isEncrypted()) throw unprocessable(`The PDF is encrypted; remove the encryption (or password) before you ${limits.purpose} it`);
  if (reader.revisions.length === 0 || !reader.catalogAt(reader.last)) {
    throw unprocessable('The PDF has no readable document catalog (corrupt, truncated, or not a PDF after its header)');
  }
  const size = reader.trailerAt(reader.last)?.map.get('Size');
  if (typeof size === 'number' && size > MAX_OBJECT_NUMBER + 1) {
    throw unprocessable(`The PDF's trailer declares /Size ${size}, beyond the PDF limit of ${MAX_OBJECT_NUMBER + 1} objects`);
  }
  limits.inspect?.(reader);
  const image = cleanImage(reader, limits);
  let doc: PDFDocument;
  try {
    // pdf-lib yields to the event loop (a setTimeout each) every `parseSpeed` objects, 100 by default: that
    // only costs time (bench/README.md, merge: −16% CPU for 20 five-page inputs with Fast).
    doc = await PDFDocument.load(image, {
      ignoreEncryption: true,
      updateMetadata: false,
      throwOnInvalidObject: false,
      parseSpeed: ParseSpeeds.Fast,
    });
  } catch (e) {
    throw unprocessable('The PDF could not be parsed', e);
  }
  return { reader, doc };
}

/**
 * A clean PDF holding every object in force at the last revision (as the reader resolves it), with a
 * classic xref table and a trailer carrying the last /Root, /Info, /ID and /Size. Objects the reader cannot
 * read (broken, too deeply nested, in an object stream over its budget) are left out, as a viewer would.
 */
function cleanImage(doc: PdfDocument, limits: AuthoringLimits): Uint8Array {
  const last = doc.last;
  // Every object number defined by some revision; the reader resolves each as of the last one.
  const numbers = new Set<number>();
  for (const rev of doc.revisions) {
    for (const n of rev.entries.keys()) {
      numbers.add(n);
      if (numbers.size > limits.maxObjects)
        throw unprocessable(`The PDF has more than ${limits.maxObjects} objects; it is too large to ${limits.purpose}`);
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
