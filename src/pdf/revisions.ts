/**
 * The forensic reader's first pass over the bytes (reader.ts): every `num gen obj` header, and the revisions
 * (each `%%EOF` that closes a `startxref`, plus trailing bytes after the last one). Both are single linear
 * scans with native string searches; the revision count is bounded (MAX_REVISIONS).
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
export function scanBodies(t: string): Body[] {
  const bodies: Body[] = [];
  const isWs = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x0c || c === 0x00;
  const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
  for (let p = t.indexOf('obj'); p >= 0; p = t.indexOf('obj', p + 3)) {
    const after = t.charCodeAt(p + 3);
    if (!Number.isNaN(after) && /[A-Za-z0-9_]/.test(t[p + 3]!)) continue;
    let q = p - 1;
    if (!isWs(t.charCodeAt(q))) continue;
    while (q >= 0 && isWs(t.charCodeAt(q))) q--;
    const genEnd = q + 1;
    while (q >= 0 && isDigit(t.charCodeAt(q)) && genEnd - q <= 5) q--;
    if (q + 1 === genEnd || !isWs(t.charCodeAt(q))) continue;
    const genStart = q + 1;
    while (q >= 0 && isWs(t.charCodeAt(q))) q--;
    const numEnd = q + 1;
    while (q >= 0 && isDigit(t.charCodeAt(q)) && numEnd - q <= 10) q--;
    if (q + 1 === numEnd) continue;
    if (q >= 0 && isDigit(t.charCodeAt(q))) continue;
    bodies.push({ num: Number(t.slice(q + 1, numEnd)), gen: Number(t.slice(genStart, genEnd)), offset: q + 1 });
  }
  return bodies;
}

export function findRevisions(buf: Uint8Array, t: string, anomaly: (code: string, message: string, revision: number) => void): Revision[] {
  const revisions: Revision[] = [];
  let start = 0;
  for (let p = t.indexOf('%%EOF'); p >= 0; p = t.indexOf('%%EOF', p + 5)) {
    // Only an %%EOF that closes a `startxref n` ends a revision; others live inside streams.
    // Only the 64 bytes before %%EOF can hold its startxref: a search further back would make a file of
    // many bare %%EOF markers quadratic.
    const windowStart = Math.max(start, p - 64);
    const rel = t.slice(windowStart, p).lastIndexOf('startxref');
    if (rel < 0) continue;
    const sx = windowStart + rel;
    if (revisions.length >= MAX_REVISIONS) {
      throw new FolioError(
        'UNPROCESSABLE_DOCUMENT',
        `The PDF has more than ${MAX_REVISIONS} revisions (incremental updates); it is too large to process`,
      );
    }
    let end = p + 5;
    if (t.charCodeAt(end) === 0x0d) end++;
    if (t.charCodeAt(end) === 0x0a) end++;
    const lx = new Lexer(buf, sx + 9, p);
    const startxref = lx.readUInt();
    revisions.push({ index: revisions.length, start, end, startxref, xref: 'none', entries: new Map(), repaired: false });
    start = end;
  }
  // A linearized file ends its first-page section with `startxref 0 %%EOF`: not a revision of its own.
  if (revisions.length > 1 && revisions[0]!.startxref === 0 && /\/Linearized/.test(t.slice(0, 1024))) {
    revisions.shift();
    revisions[0]!.start = 0;
    revisions.forEach((r, i) => (r.index = i));
  }
  // eslint-disable-next-line no-control-regex -- NUL is PDF whitespace
  if (start < buf.length && /[^\x00\t\n\f\r ]/.test(t.slice(start))) {
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
