/**
 * Reading a signature dictionary the PDF parser refused (issue 23). A `/ByteRange` written as
 * `[0 1.5e3 2000 100]` is not PDF syntax (no exponents in PDF numbers), so the object holding it does not
 * parse, and the signature used to vanish: `NO_SIGNATURE_FOUND` for a document that plainly carries one. A
 * verifier must report it as a signature that is not valid. The object's bytes are copied, the `/ByteRange`
 * array's contents blanked to spaces (every other offset unchanged), and the copy parsed; the array's text is
 * kept for the report. When the object is broken elsewhere too, a stub dictionary stands in, so the signature
 * is still counted and named as malformed.
 *
 * By hand because it is a repair of Folio's own reader's input, specific to this one dictionary; the copy is
 * parsed by the same reader (a PdfDocument over the copy), so no second parser exists.
 */
import { isDict, isString, PdfDocument, type PdfDict } from '../pdf/index.js';

export interface SalvagedSignature {
  num: number;
  sigDict: PdfDict;
  /** The object's body in the file (header to `endobj`). */
  offset: number;
  end: number;
  /** The `/ByteRange` array as written, between the brackets (trimmed, at most 200 characters). */
  byteRangeText?: string;
  /** The dictionary could not be read even with the array blanked: `sigDict` is an empty stand-in. */
  stub: boolean;
}

/** A signature dictionary holds at most a 4 MB CMS (8 MB as hex) and a few small entries. */
const MAX_OBJECT_BYTES = 9 * 1024 * 1024;
/** Longest `/ByteRange` array text taken as one (four numbers need a few dozen characters). */
const MAX_ARRAY_CHARS = 512;
/**
 * Objects re-read per document. Each costs a search for `endobj` (up to MAX_OBJECT_BYTES) and a copy: a file
 * of many thousands of broken `/ByteRange` objects must not make that quadratic. Past it the rest are not
 * looked at — the document is reported invalid by the ones that were.
 */
export const MAX_SALVAGED_PER_DOCUMENT = 50;
/** Per document: each offset's outcome (findSignatures scans twice; a re-scan reuses it and costs nothing). */
const outcomes = new WeakMap<PdfDocument, Map<number, SalvagedSignature | undefined>>();

/** PDF numbers (ISO 32000-1 §7.3.3): optional sign, digits with at most one point, no exponent. */
export const PDF_NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)$/;

/**
 * The signature dictionary in the object at `offset`, when that object does not parse and holds a `/ByteRange`;
 * undefined otherwise (it parses, it is not there, or it is too large to be a signature dictionary).
 */
export function salvageSignatureAt(doc: PdfDocument, offset: number): SalvagedSignature | undefined {
  let known = outcomes.get(doc);
  if (!known) outcomes.set(doc, (known = new Map()));
  if (known.has(offset)) return known.get(offset);
  if (known.size >= MAX_SALVAGED_PER_DOCUMENT) return undefined;
  const outcome = salvage(doc, offset);
  known.set(offset, outcome);
  return outcome;
}

function salvage(doc: PdfDocument, offset: number): SalvagedSignature | undefined {
  const header = /^(\d+)\s+(\d+)\s+obj\b/.exec(doc.latin1(offset, offset + 40));
  if (!header) return undefined;
  if (doc.objectAt(offset, doc.last)) return undefined;
  // `endobj` within a signature dictionary's largest size, searched in that window only.
  const windowEnd = Math.min(doc.buf.length, offset + MAX_OBJECT_BYTES);
  const endobj = Buffer.from(doc.buf.buffer, doc.buf.byteOffset + offset, windowEnd - offset).indexOf('endobj');
  const nextObj = /\d+\s+\d+\s+obj\b/g;
  if (endobj < 0) return undefined;
  const end = offset + endobj + 6;
  const text = doc.latin1(offset, end);
  // The body ends at the next object header when `endobj` was left out.
  nextObj.lastIndex = header[0].length;
  const next = nextObj.exec(text);
  const bodyText = next ? text.slice(0, next.index) : text;
  const key = bodyText.indexOf('/ByteRange');
  if (key < 0) return undefined;
  const m = new RegExp(`^/ByteRange\\s*\\[([^\\]]{0,${MAX_ARRAY_CHARS}})\\]`).exec(bodyText.slice(key));
  const num = Number(header[1]);
  const base = { num, offset, end: offset + bodyText.length };
  const stub = (byteRangeText?: string): SalvagedSignature => ({
    ...base,
    sigDict: { kind: 'dict', map: new Map(), start: offset, end: base.end },
    ...(byteRangeText !== undefined ? { byteRangeText } : {}),
    stub: true,
  });
  if (!m) return stub();
  const byteRangeText = m[1]!.trim().replace(/\s+/g, ' ').slice(0, 200);
  const window = Uint8Array.from(doc.buf.subarray(offset, base.end));
  const open = key + m[0].indexOf('[');
  window.fill(0x20, open + 1, key + m[0].length - 1);
  const value = new PdfDocument(window).objectAt(0, 0)?.value;
  if (!isDict(value)) return stub(byteRangeText);
  // Back to file offsets: the dictionary's span and its strings (/Contents' position is compared with the gap).
  const shifted: PdfDict = { ...value, start: value.start + offset, end: value.end + offset, map: new Map() };
  for (const [k, v] of value.map) shifted.map.set(k, isString(v) ? { ...v, start: v.start + offset, end: v.end + offset } : v);
  return { ...base, sigDict: shifted, byteRangeText, stub: false };
}

/** The object `num` of revision `rev` when it is a signature dictionary the reader refused (see above). */
export function salvageSignatureObject(doc: PdfDocument, num: number, rev: number): SalvagedSignature | undefined {
  const found = doc.entryAt(num, rev);
  if (!found || found.entry.type !== 1) return undefined;
  let offset = found.entry.offset;
  // As the reader: an offset may land on the whitespace before the header.
  for (let k = 0; k < 256 && offset < doc.buf.length && /\s/.test(String.fromCharCode(doc.buf[offset]!)); k++) offset++;
  const s = salvageSignatureAt(doc, offset);
  return s && s.num === num ? s : undefined;
}
