/**
 * "Which objects refer to object N at the final revision", answered without parsing every object of the file.
 * A first pass reads each object's raw bytes (up to its stream data or `endobj`) for number tokens followed by
 * `G R`, building no objects: every reference the reader's lexer would read is among them, so the objects listed under N are a
 * superset of N's referrers. Only those candidates are then parsed and their references collected, exactly as a
 * full index would (the answer is the same; verdicts do not depend on this shortcut). Objects inside object
 * streams, and bodies the scan cannot delimit within its bound, are parsed up front instead. Hand-written: no
 * library offers a byte-level pre-filter over a PDF's raw objects, and the scan must stay bounded.
 */
import { collectRefs, type PdfDocument } from '../pdf/index.js';

export interface ReferrerIndex {
  get(num: number): ReadonlySet<number> | undefined;
}

/** Bytes of one object's dictionary/array part the scan reads before parsing the object instead. */
const MAX_SCAN_BYTES = 64 * 1024;

const isWhite = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x0c || c === 0x00;
const isDelim = (c: number) =>
  c === 0x28 || c === 0x29 || c === 0x3c || c === 0x3e || c === 0x5b || c === 0x5d || c === 0x7b || c === 0x7d || c === 0x2f || c === 0x25;
const isRegular = (c: number | undefined) => c !== undefined && !isWhite(c) && !isDelim(c);
const word = (buf: Uint8Array, i: number, w: string) => {
  for (let k = 0; k < w.length; k++) if (buf[i + k] !== w.charCodeAt(k)) return false;
  return !isRegular(buf[i + w.length]);
};

function skipWhite(buf: Uint8Array, p: number, stop: number): number {
  for (;;) {
    while (p < stop && isWhite(buf[p]!)) p++;
    if (p < stop && buf[p] === 0x25) {
      while (p < stop && buf[p] !== 0x0a && buf[p] !== 0x0d) p++;
      continue;
    }
    return p;
  }
}

/**
 * The end of a plain `N G obj` header at `p` (digits, white space, digits, white space, `obj` ending the token;
 * at most 48 bytes, as the reader reads one), or -1.
 */
function plainHeaderEnd(buf: Uint8Array, p: number): number {
  const limit = Math.min(buf.length, p + 48);
  for (let part = 0; part < 2; part++) {
    const start = p;
    while (p < limit && buf[p]! >= 0x30 && buf[p]! <= 0x39) p++;
    if (p === start) return -1;
    const white = p;
    while (p < limit && isWhite(buf[p]!)) p++;
    if (p === white) return -1;
  }
  if (p + 3 > limit || buf[p] !== 0x6f || buf[p + 1] !== 0x62 || buf[p + 2] !== 0x6a || isRegular(buf[p + 3])) return -1;
  return p + 3;
}

/** Whether `gen R` follows at `p` (whitespace and comments allowed between the tokens). */
function refFollows(buf: Uint8Array, p: number, stop: number): boolean {
  p = skipWhite(buf, p, stop);
  const start = p;
  while (p < stop && buf[p]! >= 0x30 && buf[p]! <= 0x39) p++;
  if (p === start || isRegular(buf[p])) return false;
  p = skipWhite(buf, p, stop);
  return buf[p] === 0x52 && !isRegular(buf[p + 1]);
}

/** Byte classes of the PDF lexer, one table lookup per byte in the scan's loop. */
const REGULAR = 0;
const WHITE = 1;
const DELIM = 2;
const DIGIT = 3;
const CLASS = new Uint8Array(256);
for (const c of [0x20, 0x0a, 0x0d, 0x09, 0x0c, 0x00]) CLASS[c] = WHITE;
for (const c of [0x28, 0x29, 0x3c, 0x3e, 0x5b, 0x5d, 0x7b, 0x7d, 0x2f, 0x25]) CLASS[c] = DELIM;
for (let c = 0x30; c <= 0x39; c++) CLASS[c] = DIGIT;
CLASS[0x2e] = DIGIT; // `.`: part of a number token

/**
 * Calls `add` with the integer part of every number token followed by `gen R` in the object at `offset`, skipping
 * literal strings, hex strings, names and comments, until the keyword `stream` or `endobj` outside any
 * dictionary or array. False when neither is met within `end` and the scan bound (the caller then parses the
 * object). A name is skipped whole, as the reader's lexer reads it (`/` and the regular characters after it,
 * digits included), so `/F9 0 R` is no candidate; every other regular run is stepped through byte by byte, so
 * a signed number (`+1 0 R`) still is.
 */
export function scanNumbers(buf: Uint8Array, offset: number, end: number, add: (n: number) => void): boolean {
  const stop = Math.min(end, buf.length, offset + MAX_SCAN_BYTES);
  let depth = 0;
  let i = offset;
  while (i < stop) {
    const c = buf[i]!;
    const k = CLASS[c]!;
    if (k === WHITE) {
      i++;
      continue;
    }
    if (k === DIGIT) {
      // A number token; its integer part is a candidate when `gen R` follows, as the reader's lexer reads a
      // reference (gen digits, whitespace or comments, then R ending the token).
      let v = 0;
      let dot = false;
      for (; i < stop; i++) {
        const d = buf[i]!;
        if (d === 0x2e) dot = true;
        else if (d >= 0x30 && d <= 0x39) {
          if (!dot && v < 1e9) v = v * 10 + (d - 0x30);
        } else break;
      }
      // The usual spelling `N 0 R` checked directly; anything else through the general reading.
      if (
        i + 3 < stop && buf[i] === 0x20 && buf[i + 1] === 0x30 && buf[i + 2] === 0x20 && buf[i + 3] === 0x52
          ? !isRegular(buf[i + 4])
          : refFollows(buf, i, stop)
      )
        add(v);
      continue;
    }
    if (k === REGULAR) {
      if (depth === 0 && (c === 0x73 || c === 0x65) && !isRegular(buf[i - 1]) && (word(buf, i, 'stream') || word(buf, i, 'endobj'))) return true;
      i++;
      continue;
    }
    // Delimiters.
    if (c === 0x2f) {
      // A name: the regular characters after `/`.
      i++;
      for (; i < stop; i++) {
        const n = CLASS[buf[i]!]!;
        if (n === WHITE || n === DELIM) break;
      }
      continue;
    }
    if (c === 0x28) {
      // Literal string: nested parentheses, backslash escapes.
      let nest = 1;
      i++;
      while (i < stop && nest > 0) {
        const d = buf[i]!;
        if (d === 0x5c) i++;
        else if (d === 0x28) nest++;
        else if (d === 0x29) nest--;
        i++;
      }
      continue;
    }
    if (c === 0x3c) {
      if (buf[i + 1] === 0x3c) {
        depth += 2; // `<<`, closed by two `>`
        i += 2;
        continue;
      }
      // Hex string (a signature's /Contents: tens of kilobytes): no reference inside.
      const close = buf.indexOf(0x3e, i + 1);
      if (close < 0 || close >= stop) return false;
      i = close + 1;
      continue;
    }
    if (c === 0x25) {
      while (i < stop && buf[i] !== 0x0a && buf[i] !== 0x0d) i++;
      continue;
    }
    if (c === 0x5b) depth++;
    else if (c === 0x3e || c === 0x5d) depth = Math.max(0, depth - 1);
    i++;
  }
  return false;
}

/** The referrer index of `doc` at its final revision over `nums` (the first `max` of them, as a full index would). */
export function lazyReferrerIndex(doc: PdfDocument, nums: Iterable<number>, max: number): ReferrerIndex {
  const last = doc.last;
  const candidates = new Map<number, number[]>();
  const exact = new Map<number, Set<number>>();
  const note = (map: Map<number, number[]>, ref: number, from: number) => {
    const list = map.get(ref);
    if (!list) map.set(ref, [from]);
    else if (list[list.length - 1] !== from) list.push(from);
  };
  const add = (from: number) => (v: number) => note(candidates, v, from);
  const parsedRefs = new Map<number, number[]>();
  let count = 0;
  for (const n of nums) {
    if (++count > max) break;
    const found = doc.entryAt(n, last);
    if (!found || found.entry.type === 0) continue;
    if (found.entry.type === 1) {
      let offset = found.entry.offset;
      // The same tolerance as the reader: a few whitespace bytes before the header.
      for (let k = 0; k < 256 && offset < doc.buf.length && isWhite(doc.buf[offset]!); k++) offset++;
      // Only a body with a plain `N G obj` header is scanned (else the reader may fall back to another body).
      const body = plainHeaderEnd(doc.buf, offset);
      if (body >= 0 && scanNumbers(doc.buf, body, doc.revisions[found.revision]!.end, add(n))) continue;
    }
    // Compressed, or not delimited by the scan: parsed now, its references exact.
    collectRefs(doc.resolve(n, last)?.value, (ref) => note(parsedRefs, ref, n));
  }
  // What each parsed candidate refers to, read once: a page whose /Annots names thousands of annotations is a
  // candidate for each of them.
  const refsOf = new Map<number, Set<number>>();
  const refersTo = (r: number, num: number) => {
    let set = refsOf.get(r);
    if (!set) {
      const into = (set = new Set<number>());
      collectRefs(doc.resolve(r, last)?.value, (ref) => into.add(ref));
      refsOf.set(r, set);
    }
    return set.has(num);
  };
  return {
    get(num: number) {
      const hit = exact.get(num);
      if (hit) return hit.size ? hit : undefined;
      const out = new Set<number>();
      for (const r of parsedRefs.get(num) ?? []) out.add(r);
      for (const r of candidates.get(num) ?? []) {
        if (!out.has(r) && refersTo(r, num)) out.add(r);
      }
      exact.set(num, out);
      return out.size ? out : undefined;
    },
  };
}
