/**
 * The forensic reader's first pass over the bytes (reader.ts): every `num gen obj` header, and the revisions
 * (each `%%EOF` that closes a `startxref`, plus trailing bytes after the last one). Both are single linear
 * scans with native byte searches (no string of the whole file); the revision count is bounded (MAX_REVISIONS).
 */
import { FolioError } from '../errors.js';
import { Lexer, type PdfDict } from './objects.js';

export interface XrefEntry {
  /** 0 free, 1 at a byte offset, 2 inside an object stream. */
  type: 0 | 1 | 2;
  offset: number;
  gen: number;
  stream: number;
  index: number;
}

export type XrefKind = 'table' | 'stream' | 'hybrid' | 'empty' | 'broken' | 'none';

export interface Anomaly {
  code: string;
  message: string;
  revision?: number;
  object?: number;
}

export interface Revision {
  index: number;
  /** This revision's own bytes are [start, end); `end` is after `%%EOF` and its end-of-line. */
  start: number;
  end: number;
  startxref?: number;
  xref: XrefKind;
  trailer?: PdfDict;
  /** Objects (re)defined by this revision. */
  entries: Map<number, XrefEntry>;
  /** The entries were rebuilt by scanning object bodies because the xref was unusable. */
  repaired: boolean;
  /** The /Prev chain of this revision's xref sections came back to a section it had already read. */
  prevCycle?: boolean;
}

/** Incremental updates per document: real documents, even signed many times, stay far below. */
export const MAX_REVISIONS = 1_000;

/** An object header found in the bytes. */
export interface Body {
  num: number;
  gen: number;
  offset: number;
}

/** Finds every `num gen obj` header: a native search for "obj", then the two integers read backwards. */
export function scanBodies(buf: Uint8Array): Body[] {
  const bodies: Body[] = [];
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.length);
  const isWs = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x0c || c === 0x00;
  const isDigit = (c: number | undefined) => c !== undefined && c >= 0x30 && c <= 0x39;
  // [A-Za-z0-9_] after `obj`: a longer word (`objects`, `obj1`), not the keyword.
  const isWordChar = (c: number | undefined) =>
    c !== undefined && ((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x5f);
  const int = (from: number, to: number) => {
    let v = 0;
    for (let i = from; i < to; i++) v = v * 10 + (b[i]! - 0x30);
    return v;
  };
  for (let p = b.indexOf('obj', 0, 'latin1'); p >= 0; p = b.indexOf('obj', p + 3, 'latin1')) {
    if (isWordChar(b[p + 3])) continue;
    let q = p - 1;
    if (!isWs(b[q])) continue;
    while (q >= 0 && isWs(b[q])) q--;
    const genEnd = q + 1;
    while (q >= 0 && isDigit(b[q]) && genEnd - q <= 5) q--;
    if (q + 1 === genEnd || !isWs(b[q])) continue;
    const genStart = q + 1;
    while (q >= 0 && isWs(b[q])) q--;
    const numEnd = q + 1;
    while (q >= 0 && isDigit(b[q]) && numEnd - q <= 10) q--;
    if (q + 1 === numEnd) continue;
    if (q >= 0 && isDigit(b[q])) continue;
    bodies.push({ num: int(q + 1, numEnd), gen: int(genStart, genEnd), offset: q + 1 });
  }
  return bodies;
}

export function findRevisions(buf: Uint8Array, anomaly: (code: string, message: string, revision: number) => void): Revision[] {
  const revisions: Revision[] = [];
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.length);
  let start = 0;
  for (let p = b.indexOf('%%EOF', 0, 'latin1'); p >= 0; p = b.indexOf('%%EOF', p + 5, 'latin1')) {
    // Only an %%EOF that closes a `startxref n` ends a revision; others live inside streams.
    // Only the 64 bytes before %%EOF can hold its startxref: a search further back would make a file of
    // many bare %%EOF markers quadratic.
    const windowStart = Math.max(start, p - 64);
    const rel = b.toString('latin1', windowStart, p).lastIndexOf('startxref');
    if (rel < 0) continue;
    const sx = windowStart + rel;
    if (revisions.length >= MAX_REVISIONS) {
      throw new FolioError(
        'UNPROCESSABLE_DOCUMENT',
        `The PDF has more than ${MAX_REVISIONS} revisions (incremental updates); it is too large to process`,
      );
    }
    let end = p + 5;
    if (b[end] === 0x0d) end++;
    if (b[end] === 0x0a) end++;
    const lx = new Lexer(buf, sx + 9, p);
    const startxref = lx.readUInt();
    revisions.push({ index: revisions.length, start, end, startxref, xref: 'none', entries: new Map(), repaired: false });
    start = end;
  }
  // A linearized file ends its first-page section with `startxref 0 %%EOF`: not a revision of its own.
  if (revisions.length > 1 && revisions[0]!.startxref === 0 && b.toString('latin1', 0, Math.min(1024, b.length)).includes('/Linearized')) {
    revisions.shift();
    revisions[0]!.start = 0;
    revisions.forEach((r, i) => (r.index = i));
  }
  // eslint-disable-next-line no-control-regex -- NUL is PDF whitespace
  if (start < buf.length && /[^\x00\t\n\f\r ]/.test(b.toString('latin1', start, b.length))) {
    // Bytes after the last %%EOF (or a file with none): a pseudo-revision, read by scanning.
    revisions.push({ index: revisions.length, start, end: buf.length, xref: 'none', entries: new Map(), repaired: false });
    if (revisions.length > 1) {
      anomaly('TRAILING_BYTES', `${buf.length - start} bytes follow the last %%EOF`, revisions.length - 1);
    } else {
      anomaly('NO_EOF', 'the file has no %%EOF after a startxref (truncated?)', 0);
    }
  } else if (revisions.length > 0) {
    revisions[revisions.length - 1]!.end = buf.length;
  }
  return revisions;
}
