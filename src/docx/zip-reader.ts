/**
 * The bounded ZIP reader: entry count, per-entry and total uncompressed size are capped before inflating, so
 * zip bombs are refused without expanding them; and every inflate is capped again while it runs (the central
 * directory can lie about sizes), against the entry's declared size, a per-entry ceiling and a budget for the
 * whole request. The only ZIP reader of the service: package.ts (openDocx) builds on it.
 */
import zlib from 'node:zlib';
import { FolioError } from '../errors.js';
import { crc32 } from './zip-writer.js';

export interface PackageLimits {
  maxEntries: number;
  maxTotalUncompressed: number;
  maxEntryUncompressed: number;
  /** Largest compression ratio tolerated for entries above 1 MB (bomb heuristic). */
  maxRatio: number;
}

export const DEFAULT_PACKAGE_LIMITS: PackageLimits = {
  maxEntries: 10_000,
  maxTotalUncompressed: 512 * 1024 * 1024,
  maxEntryUncompressed: 256 * 1024 * 1024,
  maxRatio: 200,
};

/** One central-directory record: enough to bound, locate and copy or inflate the entry. */
export interface CentralEntry {
  name: string;
  /** General-purpose flags (bit 0: encrypted). */
  flags: number;
  /** 0 stored, 8 deflated. */
  method: number;
  /** DOS time and date, kept so an unchanged entry can be copied as it was. */
  time: number;
  date: number;
  crc: number;
  compressedSize: number;
  uncompressedSize: number;
  /** Offset of the entry's local header. */
  localOffset: number;
}

/** Reads the central directory without inflating anything. */
export function listZipEntries(zip: Uint8Array): CentralEntry[] {
  const dv = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  // End of central directory: last 22..(22+65535) bytes.
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 65535); i--) {
    if (dv.getUint32(i, true) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new FolioError('INVALID_FILE_FORMAT', 'The file is not a valid ZIP package (no central directory)');
  let count = dv.getUint16(eocd + 10, true);
  let cdOffset = dv.getUint32(eocd + 16, true);
  if (cdOffset === 0xffffffff || count === 0xffff) {
    // ZIP64: the locator sits just before the EOCD.
    const loc = eocd - 20;
    if (loc >= 0 && dv.getUint32(loc, true) === 0x07064b50) {
      const z64 = Number(dv.getBigUint64(loc + 8, true));
      if (z64 + 56 <= zip.length && dv.getUint32(z64, true) === 0x06064b50) {
        count = Number(dv.getBigUint64(z64 + 32, true));
        cdOffset = Number(dv.getBigUint64(z64 + 48, true));
      }
    }
  }
  const entries: CentralEntry[] = [];
  let p = cdOffset;
  for (let i = 0; i < count; i++) {
    if (p + 46 > zip.length || dv.getUint32(p, true) !== 0x02014b50) {
      throw new FolioError('UNPROCESSABLE_DOCUMENT', 'The ZIP package is corrupt (bad central directory)');
    }
    const flags = dv.getUint16(p + 8, true);
    const method = dv.getUint16(p + 10, true);
    const time = dv.getUint16(p + 12, true);
    const date = dv.getUint16(p + 14, true);
    const crc = dv.getUint32(p + 16, true);
    let compressedSize = dv.getUint32(p + 20, true);
    let uncompressedSize = dv.getUint32(p + 24, true);
    const nameLen = dv.getUint16(p + 28, true);
    const extraLen = dv.getUint16(p + 30, true);
    const commentLen = dv.getUint16(p + 32, true);
    let localOffset = dv.getUint32(p + 42, true);
    const name = Buffer.from(zip.subarray(p + 46, p + 46 + nameLen)).toString('utf8');
    if (uncompressedSize === 0xffffffff || compressedSize === 0xffffffff || localOffset === 0xffffffff) {
      // ZIP64 extra field (id 1): the saturated values, in this order, as 64-bit values.
      let e = p + 46 + nameLen;
      const end = Math.min(e + extraLen, zip.length);
      while (e + 4 <= end) {
        const id = dv.getUint16(e, true);
        const len = dv.getUint16(e + 2, true);
        if (id === 1 && e + 4 + len <= end) {
          let q = e + 4;
          const next = () => {
            const v = q + 8 <= e + 4 + len ? Number(dv.getBigUint64(q, true)) : 0xffffffff;
            q += 8;
            return v;
          };
          if (uncompressedSize === 0xffffffff) uncompressedSize = next();
          if (compressedSize === 0xffffffff) compressedSize = next();
          if (localOffset === 0xffffffff) localOffset = next();
        }
        e += 4 + len;
      }
    }
    entries.push({ name, flags, method, time, date, crc, compressedSize, uncompressedSize, localOffset });
    p += 46 + nameLen + extraLen + commentLen;
  }
  return entries;
}

/** Checks declared sizes against the limits; throws UNPROCESSABLE_DOCUMENT for bombs. */
export function checkZipBounds(zip: Uint8Array, limits: PackageLimits = DEFAULT_PACKAGE_LIMITS): CentralEntry[] {
  const entries = listZipEntries(zip);
  if (entries.length > limits.maxEntries) {
    throw new FolioError('UNPROCESSABLE_DOCUMENT', `The package has too many entries (${entries.length})`);
  }
  let total = 0;
  for (const e of entries) {
    total += e.uncompressedSize;
    if (e.uncompressedSize > limits.maxEntryUncompressed || total > limits.maxTotalUncompressed) {
      throw new FolioError('UNPROCESSABLE_DOCUMENT', 'The package expands beyond the size limit (zip bomb?)');
    }
    if (e.uncompressedSize > 1024 * 1024 && e.uncompressedSize / Math.max(1, e.compressedSize) > limits.maxRatio) {
      throw new FolioError('UNPROCESSABLE_DOCUMENT', 'The package has an implausible compression ratio (zip bomb?)');
    }
  }
  return entries;
}

const tooLarge = (message: string) => new FolioError('UNPROCESSABLE_DOCUMENT', message);
const corruptZip = (why: string) => new FolioError('UNPROCESSABLE_DOCUMENT', `The DOCX package is corrupt (${why})`);
/** Entry names go into messages: cut and stripped of control characters. */
export const shownName = (name: string) => JSON.stringify(name.length > 80 ? `${name.slice(0, 80)}…` : name);

/**
 * Why an entry name cannot be a part name, or undefined. OPC part names are relative, '/'-separated paths of
 * non-empty segments; anything else (`../x`, `/etc/x`, `C:x`, `a\\b`, `a//b`, NUL) is how a package smuggles a
 * path into whatever unpacks our output, so it is refused rather than rewritten.
 */
export function badEntryName(name: string): string | undefined {
  if (name.length === 0) return 'is empty';
  if (name.length > 1024) return 'is longer than 1024 characters';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'contains control characters';
  if (name.includes('\\')) return 'contains a backslash';
  if (name.startsWith('/')) return 'is an absolute path';
  if (/^[A-Za-z]:/.test(name)) return 'starts with a drive letter';
  const segments = name.split('/');
  // A trailing '/' marks a directory entry: its last, empty segment is allowed.
  const inner = name.endsWith('/') ? segments.slice(0, -1) : segments;
  if (inner.some((seg) => seg === '..' || seg === '.')) return 'contains a relative path segment (. or ..)';
  if (inner.some((seg) => seg === '')) return 'contains an empty path segment';
  return undefined;
}

/** A central-directory entry checked against its local header, with where its compressed data starts. */
export interface ZipEntry extends CentralEntry {
  dataStart: number;
}

/**
 * The central directory, bounded (checkZipBounds) and checked so that every entry is what it claims:
 * a valid part name, unique (part names compare case-insensitively), a local header that agrees with the
 * central record (name, method, sizes unless a data descriptor follows), and data that no other entry
 * shares — two records pointing at the same bytes are the classic way to multiply a bomb.
 */
export function readZipDirectory(zip: Uint8Array, limits: PackageLimits = DEFAULT_PACKAGE_LIMITS): ZipEntry[] {
  const central = checkZipBounds(zip, limits);
  const dv = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  const seen = new Set<string>();
  const entries: ZipEntry[] = [];
  for (const e of central) {
    const why = badEntryName(e.name);
    if (why) throw new FolioError('UNPROCESSABLE_DOCUMENT', `The DOCX package has an entry whose name ${why}: ${shownName(e.name)}`);
    const key = e.name.toLowerCase();
    if (seen.has(key)) throw new FolioError('UNPROCESSABLE_DOCUMENT', `The DOCX package has two entries named ${shownName(e.name)}`);
    seen.add(key);
    const o = e.localOffset;
    if (o + 30 > zip.length || dv.getUint32(o, true) !== 0x04034b50) throw corruptZip(`bad local header for ${shownName(e.name)}`);
    const nameLen = dv.getUint16(o + 26, true);
    const dataStart = o + 30 + nameLen + dv.getUint16(o + 28, true);
    if (dataStart > zip.length) throw corruptZip(`truncated entry ${shownName(e.name)}`);
    const localName = Buffer.from(zip.subarray(o + 30, o + 30 + nameLen)).toString('utf8');
    const localMethod = dv.getUint16(o + 8, true);
    if (localName !== e.name || localMethod !== e.method) {
      throw corruptZip(`the local header of ${shownName(e.name)} disagrees with the central directory`);
    }
    // Without a data descriptor (flag bit 3) the local sizes are the real ones; saturated values mean ZIP64.
    if (!(dv.getUint16(o + 6, true) & 8)) {
      const lc = dv.getUint32(o + 18, true);
      const lu = dv.getUint32(o + 22, true);
      if ((lc !== 0xffffffff && lc !== e.compressedSize) || (lu !== 0xffffffff && lu !== e.uncompressedSize)) {
        throw corruptZip(`the local header of ${shownName(e.name)} declares other sizes than the central directory`);
      }
    }
    if (dataStart + e.compressedSize > zip.length) throw corruptZip(`truncated entry ${shownName(e.name)}`);
    entries.push({ ...e, dataStart });
  }
  // Overlap: sorted by position, each entry's bytes must end before the next local header begins.
  const byOffset = [...entries].sort((a, b) => a.localOffset - b.localOffset);
  for (let i = 1; i < byOffset.length; i++) {
    const prev = byOffset[i - 1]!;
    if (prev.dataStart + prev.compressedSize > byOffset[i]!.localOffset) {
      throw new FolioError(
        'UNPROCESSABLE_DOCUMENT',
        `The DOCX package has overlapping entries (${shownName(prev.name)} and ${shownName(byOffset[i]!.name)} share bytes)`,
      );
    }
  }
  return entries;
}

/** Bytes inflated so far against a ceiling for the whole request: shared by every inflate of one package. */
export class InflateBudget {
  used = 0;
  constructor(readonly limit: number) {}
  get remaining(): number {
    return Math.max(0, this.limit - this.used);
  }
}

/**
 * Inflates one entry, never producing more than the smallest of its declared size, `maxBytes` and what the
 * budget has left: zlib stops at the cap (maxOutputLength) instead of expanding the whole stream, so a
 * lying size or a bomb costs at most the cap. The result must have exactly the declared size and CRC.
 * `what` names the limit in the message when maxBytes is what stopped it.
 */
export function inflateEntry(zip: Uint8Array, e: ZipEntry, opts: { maxBytes: number; budget?: InflateBudget; what?: string }): Uint8Array {
  if (e.flags & 1) throw new FolioError('UNPROCESSABLE_DOCUMENT', `The DOCX package has an encrypted entry ${shownName(e.name)}`);
  const mb = (n: number) => `${Math.round(n / (1024 * 1024))} MB`;
  const overPart = () => tooLarge(`The part ${shownName(e.name)} is too large: ${opts.what ?? 'a part'} may expand to at most ${mb(opts.maxBytes)}`);
  const overBudget = () =>
    tooLarge(`The package expands to more than ${mb(opts.budget!.limit)} in total (at ${shownName(e.name)}); it is too large to process`);
  if (e.uncompressedSize > opts.maxBytes) throw overPart();
  if (opts.budget && e.uncompressedSize > opts.budget.remaining) throw overBudget();
  const raw = zip.subarray(e.dataStart, e.dataStart + e.compressedSize);
  let out: Uint8Array;
  if (e.method === 0) out = raw;
  else if (e.method === 8) {
    try {
      // One byte beyond the declared size is enough to tell a lying header: zlib throws at the cap.
      out = zlib.inflateRawSync(raw, { maxOutputLength: Math.max(1, e.uncompressedSize + 1) });
    } catch (err) {
      if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE')
        throw corruptZip(`entry ${shownName(e.name)} inflates beyond its declared size`);
      throw corruptZip(`entry ${shownName(e.name)} cannot be inflated`);
    }
  } else throw corruptZip(`unsupported compression method ${e.method} for ${shownName(e.name)}`);
  if (out.length !== e.uncompressedSize) throw corruptZip(`entry ${shownName(e.name)} has the wrong size`);
  if (crc32(out) !== e.crc >>> 0) throw corruptZip(`entry ${shownName(e.name)} fails its CRC check`);
  if (opts.budget) opts.budget.used += out.length;
  return out;
}
