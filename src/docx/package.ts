/**
 * Reading and writing OOXML packages (ZIP) in memory with bounds: entry count, per-entry and total
 * uncompressed size are capped before inflating, so zip bombs are refused without expanding them.
 * Shared by office (input validation), annotate, convert's reader and tests.
 */
import { unzipSync, zipSync, strFromU8, strToU8, type Unzipped, type Zippable } from 'fflate';
import { FolioError } from '../errors.js';

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

const CFB_MAGIC = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];

export const isZip = (b: Uint8Array) => b.length >= 4 && b[0] === 0x50 && b[1] === 0x4b && (b[2] === 3 || b[2] === 5);
export const isPdf = (b: Uint8Array) => {
  const head = Buffer.from(b.subarray(0, 1024)).toString('latin1');
  return head.includes('%PDF-');
};
/** OLE compound file: encrypted OOXML (and legacy .doc) look like this. */
export const isCompoundFile = (b: Uint8Array) => b.length >= 8 && CFB_MAGIC.every((v, i) => b[i] === v);

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

/** An unpacked OOXML package: part name (no leading slash) → bytes. */
/** The main document part named by the package relationships (`_rels/.rels`), else word/document.xml if present. */
export function mainDocumentPartName(packageRels: string | undefined, has: (name: string) => boolean): string | undefined {
  if (packageRels) {
    const m = /<Relationship\b[^>]*Type="[^"]*\/officeDocument"[^>]*>/.exec(packageRels);
    const target = m && /Target="([^"]+)"/.exec(m[0]);
    if (target?.[1]) return target[1].replace(/^\//, '');
  }
  return has('word/document.xml') ? 'word/document.xml' : undefined;
}

export class OoxmlPackage {
  constructor(readonly parts: Map<string, Uint8Array>) {}

  static read(bytes: Uint8Array, limits: PackageLimits = DEFAULT_PACKAGE_LIMITS): OoxmlPackage {
    if (isCompoundFile(bytes)) {
      throw new FolioError('UNPROCESSABLE_DOCUMENT', 'The document is encrypted (password-protected OOXML) or a legacy binary file');
    }
    if (!isZip(bytes)) throw new FolioError('INVALID_FILE_FORMAT', 'The file is not a DOCX (not a ZIP package)');
    const entries = checkZipBounds(bytes, limits);
    const declared = new Map(entries.map((e) => [e.name, e.uncompressedSize]));
    let unzipped: Unzipped;
    try {
      unzipped = unzipSync(bytes, {
        filter: (f) => (declared.get(f.name) ?? f.originalSize) <= limits.maxEntryUncompressed,
      });
    } catch (e) {
      throw new FolioError('UNPROCESSABLE_DOCUMENT', 'The DOCX package is corrupt and cannot be unpacked', { cause: e });
    }
    let total = 0;
    const parts = new Map<string, Uint8Array>();
    for (const [name, data] of Object.entries(unzipped)) {
      total += data.length;
      if (total > limits.maxTotalUncompressed) {
        throw new FolioError('UNPROCESSABLE_DOCUMENT', 'The package expands beyond the size limit (zip bomb?)');
      }
      parts.set(name.replace(/^\//, ''), data);
    }
    return new OoxmlPackage(parts);
  }

  has(name: string): boolean {
    return this.parts.has(name);
  }

  text(name: string): string | undefined {
    const b = this.parts.get(name);
    return b === undefined ? undefined : strFromU8(b);
  }

  setText(name: string, xml: string): void {
    this.parts.set(name, strToU8(xml));
  }

  /** The main document part named by the package relationships (usually word/document.xml). */
  mainDocumentPart(): string | undefined {
    return mainDocumentPartName(this.text('_rels/.rels'), (name) => this.has(name));
  }

  toBytes(): Uint8Array {
    const z: Zippable = {};
    // [Content_Types].xml first, as Word writes it (some readers sniff it there).
    const names = [...this.parts.keys()].sort((a, b) => (a === '[Content_Types].xml' ? -1 : b === '[Content_Types].xml' ? 1 : 0));
    for (const n of names) z[n] = [this.parts.get(n)!, { level: /\.(png|jpe?g|gif)$/i.test(n) ? 0 : 6 }];
    return zipSync(z);
  }
}

/** Validates that bytes are a DOCX: a ZIP with [Content_Types].xml and a word-processing main part. */
export function readDocx(bytes: Uint8Array, limits?: PackageLimits): OoxmlPackage {
  if (bytes.length === 0) throw new FolioError('INVALID_FILE_FORMAT', 'The file is empty');
  const pkg = OoxmlPackage.read(bytes, limits);
  if (!pkg.has('[Content_Types].xml')) {
    throw new FolioError('INVALID_FILE_FORMAT', 'The ZIP package has no [Content_Types].xml; it is not a DOCX');
  }
  const main = pkg.mainDocumentPart();
  if (!main || !pkg.has(main)) throw new FolioError('INVALID_FILE_FORMAT', 'The package has no Word main document part');
  return pkg;
}

/** XML parts must not declare a DOCTYPE (entity expansion, external entities). */
export function assertNoDoctype(xml: string, part: string): void {
  if (/<!DOCTYPE/i.test(xml) || /<!ENTITY/i.test(xml)) {
    throw new FolioError('UNPROCESSABLE_DOCUMENT', `The part ${part} declares a DOCTYPE or entities, which are not allowed`);
  }
}
