/**
 * The PDF object model of the forensic reader and a byte-level parser for one object at a given offset.
 * Strings keep their byte span in the file because signature checks compare the `/ByteRange` gap with the
 * exact position of the `/Contents` hex string; dictionaries remember keys that occur twice, a trick used to
 * show one value to one reader and another to a second one.
 */

export interface PdfName {
  kind: 'name';
  name: string;
}
export interface PdfString {
  kind: 'string';
  bytes: Uint8Array;
  hex: boolean;
  start: number;
  end: number;
}
export interface PdfRef {
  kind: 'ref';
  num: number;
  gen: number;
}
export interface PdfDict {
  kind: 'dict';
  map: Map<string, PdfValue>;
  duplicateKeys?: string[];
  start: number;
  end: number;
}
export interface PdfStream {
  kind: 'stream';
  dict: PdfDict;
  dataStart: number;
  dataEnd: number;
  lengthMismatch?: boolean;
}
export type PdfValue = null | boolean | number | PdfName | PdfString | PdfRef | PdfDict | PdfStream | PdfValue[];

export class PdfSyntaxError extends Error {}

/** Array/dictionary nesting beyond this is refused: no real document comes close, recursion must stay bounded. */
export const MAX_NESTING = 100;

const WS = new Uint8Array(256);
for (const c of [0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20]) WS[c] = 1;
const DELIM = new Uint8Array(256);
for (const c of '()<>[]{}/%') DELIM[c.charCodeAt(0)] = 1;

export const isWhite = (c: number) => WS[c] === 1;
export const isDelim = (c: number) => DELIM[c] === 1;
const isRegular = (c: number) => WS[c] === 0 && DELIM[c] === 0;

export const isDict = (v: PdfValue | undefined): v is PdfDict => typeof v === 'object' && v !== null && !Array.isArray(v) && v.kind === 'dict';
export const isStream = (v: PdfValue | undefined): v is PdfStream => typeof v === 'object' && v !== null && !Array.isArray(v) && v.kind === 'stream';
export const isRef = (v: PdfValue | undefined): v is PdfRef => typeof v === 'object' && v !== null && !Array.isArray(v) && v.kind === 'ref';
export const isName = (v: PdfValue | undefined, name?: string): v is PdfName =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && v.kind === 'name' && (name === undefined || v.name === name);
export const isString = (v: PdfValue | undefined): v is PdfString => typeof v === 'object' && v !== null && !Array.isArray(v) && v.kind === 'string';
export const dictOf = (v: PdfValue | undefined): PdfDict | undefined => (isDict(v) ? v : isStream(v) ? v.dict : undefined);

export class Lexer {
  pos: number;
  constructor(
    readonly buf: Uint8Array,
    pos = 0,
    readonly end = buf.length,
  ) {
    this.pos = pos;
  }

  skipWhite(): void {
    const { buf, end } = this;
    let p = this.pos;
    for (;;) {
      while (p < end && WS[buf[p]!] === 1) p++;
      if (p < end && buf[p] === 0x25 /* % */) {
        while (p < end && buf[p] !== 0x0a && buf[p] !== 0x0d) p++;
        continue;
      }
      break;
    }
    this.pos = p;
  }

  /** A run of regular characters (keyword or number) at the current position, without consuming it. */
  peekWord(): string {
    this.skipWhite();
    let p = this.pos;
    while (p < this.end && isRegular(this.buf[p]!) && p - this.pos < 64) p++;
    return latin1(this.buf, this.pos, p);
  }

  readWord(): string {
    const w = this.peekWord();
    this.pos += w.length;
    return w;
  }

  /** An unsigned integer token at the position, or undefined (position unchanged). */
  readUInt(): number | undefined {
    this.skipWhite();
    let p = this.pos;
    let v = 0;
    while (p < this.end && this.buf[p]! >= 0x30 && this.buf[p]! <= 0x39 && p - this.pos < 16) v = v * 10 + (this.buf[p++]! - 0x30);
    if (p === this.pos || (p < this.end && isRegular(this.buf[p]!))) return undefined;
    this.pos = p;
    return v;
  }

  parseValue(depth = 0): PdfValue {
    if (depth > MAX_NESTING) throw new PdfSyntaxError('objects nested too deeply');
    this.skipWhite();
    const { buf } = this;
    if (this.pos >= this.end) throw new PdfSyntaxError('unexpected end of data');
    const c = buf[this.pos]!;
    if (c === 0x2f /* / */) return this.parseName();
    if (c === 0x28 /* ( */) return this.parseLiteralString();
    if (c === 0x3c /* < */) {
      if (buf[this.pos + 1] === 0x3c) return this.parseDict(depth);
      return this.parseHexString();
    }
    if (c === 0x5b /* [ */) {
      this.pos++;
      const arr: PdfValue[] = [];
      for (;;) {
        this.skipWhite();
        if (this.pos >= this.end) throw new PdfSyntaxError('unterminated array');
        if (buf[this.pos] === 0x5d) {
          this.pos++;
          return arr;
        }
        arr.push(this.parseValue(depth + 1));
      }
    }
    const start = this.pos;
    if ((c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2d || c === 0x2e) {
      const n = this.readNumber();
      if (n !== undefined) {
        if (Number.isInteger(n) && n >= 0 && c !== 0x2b && c !== 0x2d) {
          // `num gen R` is a reference: look ahead without committing.
          const save = this.pos;
          const gen = this.readUInt();
          if (gen !== undefined) {
            this.skipWhite();
            if (buf[this.pos] === 0x52 /* R */ && (this.pos + 1 >= this.end || !isRegular(buf[this.pos + 1]!))) {
              this.pos++;
              return { kind: 'ref', num: n, gen };
            }
          }
          this.pos = save;
        }
        return n;
      }
    }
    const word = this.readWord();
    if (word === '') {
      this.pos++;
      throw new PdfSyntaxError(`unexpected character 0x${c.toString(16)} at ${start}`);
    }
    if (word === 'null') return null;
    if (word === 'true') return true;
    if (word === 'false') return false;
    throw new PdfSyntaxError(`unexpected keyword "${word.slice(0, 20)}" at ${start}`);
  }

  /** A number token (integer or real) read straight from the bytes, or undefined (position unchanged). */
  private readNumber(): number | undefined {
    const { buf, end } = this;
    let p = this.pos;
    let neg = false;
    if (buf[p] === 0x2b || buf[p] === 0x2d) neg = buf[p++] === 0x2d;
    let v = 0;
    let digits = 0;
    while (p < end && buf[p]! >= 0x30 && buf[p]! <= 0x39) {
      v = v * 10 + (buf[p++]! - 0x30);
      digits++;
    }
    if (buf[p] === 0x2e) {
      p++;
      let scale = 0.1;
      while (p < end && buf[p]! >= 0x30 && buf[p]! <= 0x39) {
        v += (buf[p++]! - 0x30) * scale;
        scale /= 10;
        digits++;
      }
    }
    if (digits === 0 || (p < end && isRegular(buf[p]!))) return undefined;
    this.pos = p;
    return neg ? -v : v;
  }

  private parseName(): PdfName {
    const { buf } = this;
    let p = this.pos + 1;
    let s = '';
    while (p < this.end && isRegular(buf[p]!)) {
      if (buf[p] === 0x23 /* # */ && p + 2 < this.end) {
        const h = parseInt(latin1(buf, p + 1, p + 3), 16);
        if (!Number.isNaN(h)) {
          s += String.fromCharCode(h);
          p += 3;
          continue;
        }
      }
      s += String.fromCharCode(buf[p]!);
      p++;
    }
    this.pos = p;
    return { kind: 'name', name: s };
  }

  private parseLiteralString(): PdfString {
    const { buf } = this;
    const start = this.pos;
    let p = this.pos + 1;
    let nest = 1;
    const out: number[] = [];
    while (p < this.end) {
      const c = buf[p++]!;
      if (c === 0x5c /* \ */) {
        const n = buf[p++];
        if (n === undefined) break;
        const map: Record<number, number> = { 0x6e: 10, 0x72: 13, 0x74: 9, 0x62: 8, 0x66: 12, 0x28: 0x28, 0x29: 0x29, 0x5c: 0x5c };
        if (map[n] !== undefined) out.push(map[n]!);
        else if (n >= 0x30 && n <= 0x37) {
          let v = n - 0x30;
          for (let k = 0; k < 2 && buf[p]! >= 0x30 && buf[p]! <= 0x37; k++) v = v * 8 + (buf[p++]! - 0x30);
          out.push(v & 0xff);
        } else if (n === 0x0d) {
          if (buf[p] === 0x0a) p++;
        } else if (n !== 0x0a) out.push(n);
        continue;
      }
      if (c === 0x28) nest++;
      else if (c === 0x29 && --nest === 0) break;
      out.push(c);
    }
    if (nest !== 0) throw new PdfSyntaxError('unterminated string');
    this.pos = p;
    return { kind: 'string', bytes: Uint8Array.from(out), hex: false, start, end: p };
  }

  private parseHexString(): PdfString {
    const { buf } = this;
    const start = this.pos;
    const close = buf.indexOf(0x3e, start + 1);
    if (close < 0 || close >= this.end) throw new PdfSyntaxError('unterminated hex string');
    // Fast path for the common case (signature /Contents: kilobytes of hex, no white space): Node's decoder.
    const len = close - start - 1;
    if (len % 2 === 0 && len >= 64) {
      // Node's hex decoder stops at the first pair that is not hex: a full-length result means all of it was.
      const bytes = Buffer.from(latin1(buf, start + 1, close), 'hex');
      if (bytes.length * 2 === len) {
        this.pos = close + 1;
        // A plain Uint8Array of its own (small results come from Buffer's shared pool: copied).
        const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? new Uint8Array(bytes.buffer) : new Uint8Array(bytes);
        return { kind: 'string', bytes: own, hex: true, start, end: close + 1 };
      }
    }
    const out = new Uint8Array(Math.ceil((close - start - 1) / 2));
    let n = 0;
    let hi = -1;
    for (let p = start + 1; p < close; p++) {
      const v = hexVal(buf[p]!);
      if (v < 0) {
        if (WS[buf[p]!] === 1) continue;
        throw new PdfSyntaxError('bad character in hex string');
      }
      if (hi < 0) hi = v;
      else {
        out[n++] = (hi << 4) | v;
        hi = -1;
      }
    }
    if (hi >= 0) out[n++] = hi << 4;
    this.pos = close + 1;
    return { kind: 'string', bytes: out.subarray(0, n), hex: true, start, end: close + 1 };
  }

  private parseDict(depth: number): PdfDict {
    const start = this.pos;
    this.pos += 2;
    const map = new Map<string, PdfValue>();
    let duplicateKeys: string[] | undefined;
    for (;;) {
      this.skipWhite();
      if (this.pos >= this.end) throw new PdfSyntaxError('unterminated dictionary');
      if (this.buf[this.pos] === 0x3e && this.buf[this.pos + 1] === 0x3e) {
        this.pos += 2;
        const d: PdfDict = { kind: 'dict', map, start, end: this.pos };
        if (duplicateKeys) d.duplicateKeys = duplicateKeys;
        return d;
      }
      const key = this.parseValue(depth + 1);
      if (!isName(key)) throw new PdfSyntaxError('dictionary key is not a name');
      const value = this.parseValue(depth + 1);
      if (map.has(key.name)) (duplicateKeys ??= []).push(key.name);
      map.set(key.name, value);
    }
  }
}

function hexVal(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  return -1;
}

export function latin1(buf: Uint8Array, start: number, end: number): string {
  return Buffer.from(buf.buffer, buf.byteOffset + start, Math.max(0, Math.min(end, buf.length) - start)).toString('latin1');
}

export interface IndirectObject {
  num: number;
  gen: number;
  value: PdfValue;
  /** Offset of the `num gen obj` header and the end of the body (after `endobj` when present). */
  offset: number;
  end: number;
}

/**
 * Parses `num gen obj … endobj` at `offset`. A stream's `/Length` may be indirect, so the caller resolves it;
 * a length that does not land on `endstream` is replaced by a search for the keyword (bounded by the file),
 * as every viewer does, and flagged.
 */
export function parseIndirectAt(buf: Uint8Array, offset: number, resolveLength: (ref: PdfRef) => number | undefined): IndirectObject {
  const lx = new Lexer(buf, offset);
  const num = lx.readUInt();
  const gen = lx.readUInt();
  if (num === undefined || gen === undefined || lx.readWord() !== 'obj') throw new PdfSyntaxError(`no object header at ${offset}`);
  let value = lx.parseValue();
  lx.skipWhite();
  if (isDict(value) && lx.peekWord() === 'stream') {
    lx.pos += 6;
    if (buf[lx.pos] === 0x0d) lx.pos++;
    if (buf[lx.pos] === 0x0a) lx.pos++;
    const dataStart = lx.pos;
    const lenVal = value.map.get('Length');
    const length = typeof lenVal === 'number' ? lenVal : isRef(lenVal) ? resolveLength(lenVal) : undefined;
    let dataEnd = length !== undefined && length >= 0 && Number.isInteger(length) ? dataStart + length : -1;
    let lengthMismatch = false;
    if (dataEnd < 0 || dataEnd > buf.length || !endstreamAt(buf, dataEnd)) {
      const k = indexOfAscii(buf, 'endstream', dataStart);
      if (k < 0) throw new PdfSyntaxError('stream without endstream');
      dataEnd = k;
      if (buf[dataEnd - 1] === 0x0a) dataEnd--;
      if (buf[dataEnd - 1] === 0x0d) dataEnd--;
      lengthMismatch = length !== undefined;
    }
    const stream: PdfStream = { kind: 'stream', dict: value, dataStart, dataEnd };
    if (lengthMismatch) stream.lengthMismatch = true;
    value = stream;
    lx.pos = indexOfAscii(buf, 'endstream', dataEnd) + 9;
    lx.skipWhite();
  }
  let end = lx.pos;
  if (lx.peekWord() === 'endobj') end = lx.pos + 6;
  return { num, gen, value, offset, end };
}

function endstreamAt(buf: Uint8Array, p: number): boolean {
  let q = p;
  while (q < buf.length && q < p + 4 && WS[buf[q]!] === 1) q++;
  return latin1(buf, q, q + 9) === 'endstream';
}

export function indexOfAscii(buf: Uint8Array, needle: string, from = 0): number {
  return Buffer.from(buf.buffer, buf.byteOffset, buf.length).indexOf(needle, from, 'latin1');
}

/** Structural equality of two values; streams compare their dictionaries and raw data bytes. */
export function sameValue(buf: Uint8Array, a: PdfValue, b: PdfValue, depth = 0): boolean {
  if (a === b) return true;
  if (depth > MAX_NESTING) return false;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return a === b;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => sameValue(buf, x, b[i]!, depth + 1));
  }
  if (a.kind !== b.kind) return false;
  switch (a.kind) {
    case 'name':
      return a.name === (b as PdfName).name;
    case 'string':
      return Buffer.compare(a.bytes, (b as PdfString).bytes) === 0;
    case 'ref':
      return a.num === (b as PdfRef).num && a.gen === (b as PdfRef).gen;
    case 'dict': {
      const bm = (b as PdfDict).map;
      if (a.map.size !== bm.size) return false;
      for (const [k, v] of a.map) if (!bm.has(k) || !sameValue(buf, v, bm.get(k)!, depth + 1)) return false;
      return true;
    }
    case 'stream': {
      const s = b as PdfStream;
      const ad = { ...a.dict, map: new Map(a.dict.map) };
      const bd = { ...s.dict, map: new Map(s.dict.map) };
      ad.map.delete('Length');
      bd.map.delete('Length');
      if (!sameValue(buf, ad, bd, depth + 1)) return false;
      if (a.dataEnd - a.dataStart !== s.dataEnd - s.dataStart) return false;
      return Buffer.compare(buf.subarray(a.dataStart, a.dataEnd), buf.subarray(s.dataStart, s.dataEnd)) === 0;
    }
  }
}

/** Calls `add` with the number of every reference in a value (dictionaries, arrays, a stream's dict), bounded. */
export function collectRefs(v: PdfValue | undefined, add: (n: number) => void, depth = 0): void {
  if (v === null || v === undefined || typeof v !== 'object' || depth > 50) return;
  if (Array.isArray(v)) {
    for (const x of v) collectRefs(x, add, depth + 1);
    return;
  }
  if (v.kind === 'ref') add(v.num);
  else if (v.kind === 'dict') for (const x of v.map.values()) collectRefs(x, add, depth + 1);
  else if (v.kind === 'stream') collectRefs(v.dict, add, depth + 1);
}

/** Keys of two dictionaries whose direct values differ (references compared by number), `skip` aside. */
export function differingKeys(buf: Uint8Array, a: PdfDict | undefined, b: PdfDict, skip?: string): string[] {
  const keys = new Set([...(a?.map.keys() ?? []), ...b.map.keys()]);
  const out: string[] = [];
  for (const k of keys) {
    if (k === skip) continue;
    const x = a?.map.get(k);
    const y = b.map.get(k);
    if (x === undefined || y === undefined || !sameValue(buf, x, y)) out.push(k);
  }
  return out;
}
