/**
 * Hostile packages: fflate/pizzip will not write lying sizes, overlapping entries or `../` names, so the
 * archives come from the tests' own byte-by-byte ZIP builder (test/support/zip.ts, independent of the code
 * under test); deflating gigabytes for real would take minutes, so bombs are built from a repeated deflate
 * chunk instead (see repeatedDeflate).
 */
import zlib from 'node:zlib';
import { buildZip as writeZip, type ZipEntry } from '../support/zip.js';

/** One entry as it will be written: the compressed bytes plus the header values (which may lie). */
export interface RawEntry {
  name: string;
  method: 0 | 8;
  compressed: Uint8Array;
  crc: number;
  size: number;
  /** Written instead of `size` in both headers (a lying size). */
  declaredSize?: number;
}

/** An honest entry: deflated (method 8) with its real CRC and size. */
export function entry(name: string, data: string | Uint8Array): RawEntry {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data);
  return { name, method: 8, compressed: zlib.deflateRawSync(bytes), crc: zlib.crc32(bytes), size: bytes.length };
}

/** A stored (method 0) entry: cheap to build by the tens of thousands. */
export function storedEntry(name: string, data: string): RawEntry {
  const bytes = Buffer.from(data, 'utf8');
  return { name, method: 0, compressed: bytes, crc: zlib.crc32(bytes), size: bytes.length };
}

/**
 * Raw deflate of `prefix` followed by `copies` copies of `unit`, without ever holding the output: the unit is
 * compressed once from a fresh state with a sync flush (non-final blocks, byte-aligned, back-references only
 * inside itself), so the same bytes can be repeated; an empty final block closes the stream. 1 MiB of zeros
 * compresses to ~1 KB, so 2 GiB costs ~2 MB. CRC and size are computed over the logical content.
 */
export function repeatedDeflate(unit: Uint8Array, copies: number, prefix: Uint8Array = new Uint8Array(0), suffix: Uint8Array = new Uint8Array(0)) {
  const flush = { finishFlush: zlib.constants.Z_SYNC_FLUSH, level: 9 } as const;
  const parts: Buffer[] = [];
  if (prefix.length) parts.push(zlib.deflateRawSync(prefix, flush));
  const unitZ = zlib.deflateRawSync(unit, flush);
  for (let i = 0; i < copies; i++) parts.push(unitZ);
  if (suffix.length) parts.push(zlib.deflateRawSync(suffix, flush));
  parts.push(Buffer.from([0x03, 0x00])); // final, fixed-Huffman block holding only end-of-block
  let crc = zlib.crc32(prefix);
  for (let i = 0; i < copies; i++) crc = zlib.crc32(unit, crc);
  crc = zlib.crc32(suffix, crc);
  // Adler-32 (for PDF FlateDecode, which is zlib-wrapped) combined per copy: from state (a, b), a chunk of
  // length L with its own adler (ac, bc) moves to (a + ac - 1, b + L·a + bc - L), all mod 65521.
  const M = 65521;
  const part = (d: Uint8Array) => {
    let a = 1,
      b = 0;
    for (let i = 0; i < d.length; i++) {
      a = (a + d[i]!) % M;
      b = (b + a) % M;
    }
    return { a, b, L: d.length % M };
  };
  let A = 1,
    B = 0;
  const apply = (p: { a: number; b: number; L: number }) => {
    B = (B + p.L * A + p.b - p.L + M * 2) % M;
    A = (A + p.a - 1) % M;
  };
  apply(part(prefix));
  const u = part(unit);
  for (let i = 0; i < copies; i++) apply(u);
  apply(part(suffix));
  const size = prefix.length + unit.length * copies + suffix.length;
  return { deflated: Buffer.concat(parts), crc: crc >>> 0, size, adler: ((B << 16) | A) >>> 0 };
}

/** `repeatedDeflate` wrapped as zlib (RFC 1950), as PDF /FlateDecode expects. */
export function repeatedZlib(unit: Uint8Array, copies: number, prefix?: Uint8Array, suffix?: Uint8Array): { bytes: Buffer; size: number } {
  const r = repeatedDeflate(unit, copies, prefix, suffix);
  const adler = Buffer.alloc(4);
  adler.writeUInt32BE(r.adler);
  return { bytes: Buffer.concat([Buffer.from([0x78, 0xda]), r.deflated, adler]), size: r.size };
}

/** A bomb entry: `unit` repeated, honest CRC; `declaredSize` may lie. */
export function bombEntry(
  name: string,
  unit: Uint8Array,
  copies: number,
  opts: { prefix?: Uint8Array; suffix?: Uint8Array; declaredSize?: number } = {},
): RawEntry {
  const r = repeatedDeflate(unit, copies, opts.prefix, opts.suffix);
  return { name, method: 8, compressed: r.deflated, crc: r.crc, size: r.size, declaredSize: opts.declaredSize };
}

/** The shared header fields of a hostile entry: UTF-8 names flagged, a fixed DOS date. */
const header = (e: RawEntry): ZipEntry => ({
  name: e.name,
  compressed: e.compressed,
  method: e.method,
  crc: e.crc,
  size: e.size,
  declared: e.declaredSize,
  flags: 0x0800,
  date: 0x21,
});

/** A ZIP of the given entries, in order. */
export function buildZip(entries: RawEntry[]): Buffer {
  return writeZip(entries.map(header));
}

/**
 * Overlapping entries (Fifield's non-recursive bomb, simplified): the honest entries, then one big local entry,
 * and `aliases` central-directory records with distinct names that all point at that one local entry, so a
 * reader that trusts the directory inflates it `aliases` times.
 */
export function overlappingZip(honest: RawEntry[], big: RawEntry, aliases: number, aliasName: (i: number) => string): Buffer {
  return writeZip([...honest.map(header), { ...header(big), unlisted: true }], {
    aliases: Array.from({ length: aliases }, (_, i) => ({ name: aliasName(i), of: honest.length })),
  });
}
