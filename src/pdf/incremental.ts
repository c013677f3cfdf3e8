/**
 * Incremental updates (ISO 32000-1 §7.5.6): the original bytes are never touched; new and changed objects
 * are appended with a cross-reference section that points back (/Prev) at the previous one. The section
 * has the same form as the document's last one — a classic `xref` table, or a cross-reference stream when
 * the document uses them — so readers that follow the chain of either kind find every revision.
 *
 * What the writer knows of the existing document (the last startxref, the trailer's /Size /Root /Info /ID,
 * the xref kind, the offsets and generations of the objects it checks) comes from the forensic reader
 * (reader.ts): there is one xref reader, with one set of bounds, for sign and verify.
 */
import { FolioError } from '../errors.js';
import { isRef, isString, type PdfRef } from './objects.js';
import { PdfDocument } from './reader.js';

export interface LastXref {
  /** Byte offset of the last cross-reference section (the file's final `startxref` value). */
  offset: number;
  /**
   * `rebuilt`: the file's own cross-reference information is unusable, so the update carries a complete
   * table of every object found by scanning the bytes (`scanned`) and no /Prev.
   */
  kind: 'table' | 'stream' | 'rebuilt';
  scanned?: Map<number, { generation: number; offset: number }>;
  /** The trailer's /Size: one more than the highest object number in use. */
  size: number;
  /** False when a classic table entry points at the wrong bytes (readers reconstruct such files). */
  entriesValid: boolean;
  /** The trailer in force, as the reader found it: the update's trailer carries /Root, /Info and /ID[0] on. */
  root?: PdfRef;
  info?: PdfRef;
  /** The first /ID string, hex. */
  firstId?: string;
}

/** The PDF implementation limit on object numbers (ISO 32000-1, Annex C): a larger /Size is a lie. */
export const MAX_OBJECT_NUMBER = 8_388_607;

/** The trailer facts an update carries on (read by the forensic reader, as of its last revision). */
function trailerFacts(doc: PdfDocument): Pick<LastXref, 'root' | 'info' | 'firstId'> {
  const trailer = doc.trailerAt(doc.last);
  const info = trailer?.map.get('Info');
  const ids = trailer?.map.get('ID');
  const first = Array.isArray(ids) ? ids[0] : undefined;
  return {
    root: doc.catalogRefAt(doc.last),
    info: isRef(info) ? info : undefined,
    firstId: isString(first) ? Buffer.from(first.bytes).toString('hex') : undefined,
  };
}

/**
 * The cross-reference section an update is chained to, from the forensic reader's parsed revisions (one
 * xref reader for sign and verify, with its bounds: /Size, xref entries, /Prev hops, revisions). Returns
 * undefined for a document whose cross-reference information is broken (it then needs repair first);
 * throws UNPROCESSABLE_DOCUMENT for a /Size beyond the PDF object-number limit or an encrypted document
 * (a trailer /Encrypt in any revision).
 *
 * This is the writer's precondition, stricter than the reader on purpose: the reader tolerates and
 * silently repairs what viewers tolerate (offsets a few bytes off, 19/21-byte rows, a body found by
 * scanning, a /Prev that loops), whereas an update may only be chained to a section the reader read as
 * it is, whose classic-table entries are all exact.
 */
export function lastXrefOf(doc: PdfDocument): LastXref | undefined {
  refuseEncrypted(doc);
  // The last revision closed by `startxref n %%EOF` (bytes after it form a pseudo-revision of their own).
  let i = doc.last;
  while (i >= 0 && doc.revisions[i]!.startxref === undefined) i--;
  const rev = doc.revisions[i];
  if (!rev || rev.startxref === undefined || rev.startxref <= 0 || rev.startxref >= doc.buf.length) return undefined;
  const size = rev.trailer?.map.get('Size');
  if (typeof size !== 'number' || !Number.isInteger(size) || size < 0) return undefined;
  if (size > MAX_OBJECT_NUMBER + 1) {
    throw new FolioError(
      'UNPROCESSABLE_DOCUMENT',
      `The PDF's trailer declares /Size ${size}, beyond the PDF limit of ${MAX_OBJECT_NUMBER + 1} objects`,
    );
  }
  const offset = rev.startxref;
  if (rev.xref === 'stream') return { offset, kind: 'stream', size, entriesValid: true, ...trailerFacts(doc) };
  if (rev.xref !== 'table' && rev.xref !== 'hybrid') return undefined;
  if (!isRef(rev.trailer?.map.get('Root'))) return undefined;
  // Walk back through the chain of classic tables and check that every in-use entry points at its object:
  // a shifted or truncated table must be repaired before anything is appended to it. The chain ends at an
  // xref stream (hybrid history, not validated here) or at a revision without an xref of its own.
  let entriesValid = true;
  for (let r = i; r >= 0; r--) {
    const section = doc.revisions[r]!;
    if (section.xref === 'broken' || section.prevCycle) return undefined;
    if (section.xref !== 'table' && section.xref !== 'hybrid') break;
    for (const [num, e] of section.entries) {
      if (e.type === 1 && !objectHeaderAt(doc, e.offset, num, e.gen)) {
        entriesValid = false;
        break;
      }
    }
    if (!entriesValid || section.trailer?.map.get('Prev') === undefined) break;
  }
  return { offset, kind: 'table', size, entriesValid, ...trailerFacts(doc) };
}

/** Reads the bytes with the forensic reader, then `lastXrefOf`. */
export function readLastXref(bytes: Uint8Array): LastXref | undefined {
  return lastXrefOf(new PdfDocument(bytes));
}

/**
 * Every `N G obj` the reader found in a file without object streams, the last definition of a number
 * winning, as readers do when they reconstruct a damaged cross-reference table. Undefined when the file
 * has object streams (their objects cannot be addressed by a classic table).
 */
export function scanObjects(doc: PdfDocument): LastXref | undefined {
  refuseEncrypted(doc);
  if (/\/Type\s*\/ObjStm\b/.test(doc.text)) return undefined;
  const scanned = new Map<number, { generation: number; offset: number }>();
  for (const b of doc.bodies) if (b.num <= MAX_OBJECT_NUMBER) scanned.set(b.num, { generation: b.gen, offset: b.offset });
  if (scanned.size === 0) return undefined;
  // A loop, not Math.max(...keys): spreading a million arguments overflows the stack.
  let size = 0;
  for (const n of scanned.keys()) if (n + 1 > size) size = n + 1;
  return { offset: 0, kind: 'rebuilt', size, entriesValid: true, scanned, ...trailerFacts(doc) };
}

/** An update to an encrypted document would have to encrypt its objects with the document's key. */
function refuseEncrypted(doc: PdfDocument): void {
  if (doc.isEncrypted()) {
    throw new FolioError('UNPROCESSABLE_DOCUMENT', 'The PDF is encrypted; remove the encryption (or password) before signing');
  }
}

/** Reads 32 bytes at `at`, not the reader's whole-file string (a copy of the document per update). */
function objectHeaderAt(doc: PdfDocument, at: number, num: number, gen: number): boolean {
  if (at <= 0 || at >= doc.buf.length) return false;
  const m = /^\s*(\d+)\s+(\d+)\s+obj/.exec(doc.latin1(at, at + 32));
  return !!m && Number(m[1]) === num && Number(m[2]) === gen;
}

export interface UpdateObject {
  objectNumber: number;
  generation: number;
  /** The complete `N G obj … endobj` bytes, ending with a newline. */
  bytes: Uint8Array;
}

export interface TrailerEntries {
  /** e.g. "12 0 R" */
  root: string;
  info?: string;
  /** Hex strings without angle brackets: the first is kept from the original, the second is new. */
  id?: [string, string];
}

export interface IncrementalUpdate {
  /** Original bytes followed by the update. */
  bytes: Uint8Array;
  /** Byte offset of each written object in `bytes`, by object number. */
  offsets: Map<number, number>;
  /** Byte offset of the update's cross-reference section (its `startxref`): what a further update chains to. */
  xrefOffset: number;
}

/** Groups sorted object numbers into runs of consecutive numbers (the xref subsections). */
function runs(numbers: number[]): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const n of numbers) {
    const last = out[out.length - 1];
    if (last && last[0] + last[1] === n) last[1]++;
    else out.push([n, 1]);
  }
  return out;
}

/**
 * Appends `objects` to `original` with a cross-reference section of the same kind as the last one.
 * `size` is the new trailer /Size (highest object number + 1, including the xref stream if any).
 */
export function appendIncrementalUpdate(
  original: Uint8Array,
  last: LastXref,
  objects: UpdateObject[],
  trailer: TrailerEntries,
  size: number,
): IncrementalUpdate {
  const parts: Uint8Array[] = [original];
  let pos = original.length;
  const push = (b: Uint8Array | string) => {
    const bytes = typeof b === 'string' ? Buffer.from(b, 'latin1') : b;
    parts.push(bytes);
    pos += bytes.length;
  };
  // The update starts on a fresh line even when the original does not end with an EOL.
  const endsWithEol = original.length > 0 && (original[original.length - 1] === 0x0a || original[original.length - 1] === 0x0d);
  if (!endsWithEol) push('\n');

  const offsets = new Map<number, number>();
  for (const o of objects) {
    offsets.set(o.objectNumber, pos);
    push(o.bytes);
  }
  const generations = new Map(objects.map((o) => [o.objectNumber, o.generation]));
  const xrefOffset = pos;
  const trailerText =
    `/Size ${size} /Root ${trailer.root}` +
    (trailer.info ? ` /Info ${trailer.info}` : '') +
    (trailer.id ? ` /ID [<${trailer.id[0]}> <${trailer.id[1]}>]` : '') +
    (last.kind === 'rebuilt' ? '' : ` /Prev ${last.offset}`);

  if (last.kind === 'table' || last.kind === 'rebuilt') {
    // A rebuilt table lists every object of the file (ours win) and the head of the free list.
    const rows = new Map<number, string>();
    if (last.kind === 'rebuilt') {
      rows.set(0, '0000000000 65535 f\r\n');
      for (const [n, o] of last.scanned!) rows.set(n, `${String(o.offset).padStart(10, '0')} ${String(o.generation).padStart(5, '0')} n\r\n`);
    }
    for (const [n, at] of offsets) rows.set(n, `${String(at).padStart(10, '0')} ${String(generations.get(n)).padStart(5, '0')} n\r\n`);
    let table = 'xref\n';
    for (const [start, count] of runs([...rows.keys()].sort((a, b) => a - b))) {
      table += `${start} ${count}\n`;
      for (let n = start; n < start + count; n++) table += rows.get(n)!;
    }
    push(table);
    push(`trailer\n<< ${trailerText} >>\nstartxref\n${xrefOffset}\n%%EOF\n`);
  } else {
    // Cross-reference stream: object number size-1 is reserved for it by the caller.
    const xrefNumber = size - 1;
    offsets.set(xrefNumber, xrefOffset);
    generations.set(xrefNumber, 0);
    const numbers = [...offsets.keys()].sort((a, b) => a - b);
    const w = [1, 8, 2];
    const rows = Buffer.alloc(numbers.length * 11);
    numbers.forEach((n, i) => {
      rows[i * 11] = 1;
      rows.writeBigUInt64BE(BigInt(offsets.get(n)!), i * 11 + 1);
      rows.writeUInt16BE(generations.get(n)!, i * 11 + 9);
    });
    const index = runs(numbers)
      .map(([s, c]) => `${s} ${c}`)
      .join(' ');
    push(`${xrefNumber} 0 obj\n<< /Type /XRef ${trailerText} /W [${w.join(' ')}] /Index [${index}] /Length ${rows.length} >>\nstream\n`);
    push(rows);
    push(`\nendstream\nendobj\nstartxref\n${xrefOffset}\n%%EOF\n`);
  }
  const bytes = new Uint8Array(pos);
  let o = 0;
  for (const p of parts) {
    bytes.set(p, o);
    o += p.length;
  }
  return { bytes, offsets, xrefOffset };
}
