/**
 * The template's ZIP package, read and written for speed: annotate changes a handful of parts and leaves the
 * rest (fonts, media, glossary, themes) as they were, so unchanged entries are copied compressed, byte for
 * byte, and only changed or new parts are deflated (native zlib). Entries are inflated on first use.
 *
 * Bounds: src/docx/package.ts's readZipDirectory applies first (entry count, declared sizes, ratio, names,
 * local headers, overlapping entries); then every inflate stops at the smallest of the entry's declared size,
 * MAX_INFLATED_PART and what is left of the request's MAX_INFLATED_TOTAL, so neither a lying header nor a
 * package of many honest big parts can expand beyond them. Media are never inflated (copied as they are), so
 * they only count against the declared-size bounds.
 */
import zlib from 'node:zlib';
import { FolioError } from '../errors.js';
import { InflateBudget, inflateEntry, isCompoundFile, isZip, mainDocumentPartName, readZipDirectory, type ZipEntry } from '../docx/package.js';

type Entry = ZipEntry;

/** Largest part annotate inflates (only XML parts are ever inflated: content types, rels, parts it reads). */
export const MAX_INFLATED_PART = 64 * 1024 * 1024;
/** Everything annotate inflates for one request: it holds these bytes (and their text) while it works. */
export const MAX_INFLATED_TOTAL = 160 * 1024 * 1024;

const corrupt = (why: string) => new FolioError('UNPROCESSABLE_DOCUMENT', `The DOCX package is corrupt (${why})`);

export class ZipPackage {
  private readonly entries = new Map<string, Entry>();
  private readonly order: string[] = [];
  private readonly orderSet = new Set<string>();
  private readonly data = new Map<string, Uint8Array>();
  private readonly changed = new Set<string>();
  private readonly decoder = new TextDecoder('utf-8');
  private readonly budget = new InflateBudget(MAX_INFLATED_TOTAL);

  private constructor(private readonly zip: Uint8Array) {}

  static open(bytes: Uint8Array): ZipPackage {
    if (bytes.length === 0) throw new FolioError('INVALID_FILE_FORMAT', 'The file is empty');
    if (isCompoundFile(bytes)) {
      throw new FolioError('UNPROCESSABLE_DOCUMENT', 'The document is encrypted (password-protected OOXML) or a legacy binary file');
    }
    if (!isZip(bytes)) throw new FolioError('INVALID_FILE_FORMAT', 'The file is not a DOCX (not a ZIP package)');
    const pkg = new ZipPackage(bytes);
    pkg.index(readZipDirectory(bytes));
    return pkg;
  }

  /** Indexes the central directory read (and checked) by src/docx/package.ts. */
  private index(entries: ZipEntry[]): void {
    for (const entry of entries) {
      const { flags, method, name } = entry;
      if (flags & 1) throw new FolioError('UNPROCESSABLE_DOCUMENT', 'The DOCX package has encrypted entries');
      if (method !== 0 && method !== 8) throw corrupt(`unsupported compression method ${method}`);
      if (name.endsWith('/')) continue; // directory entry
      this.order.push(name);
      this.orderSet.add(name);
      this.entries.set(name, entry);
    }
  }

  private compressedData(e: Entry): Uint8Array {
    return this.zip.subarray(e.dataStart, e.dataStart + e.compressedSize);
  }

  has(name: string): boolean {
    return this.data.has(name) || this.entries.has(name);
  }

  /** Every entry name, in package order (new parts last: set() appends them). */
  names(): string[] {
    return [...this.order];
  }

  /** Declared (central directory) size of an unchanged entry, without inflating it. */
  declaredSize(name: string): number | undefined {
    return this.data.get(name)?.length ?? this.entries.get(name)?.uncompressedSize;
  }

  /** Entry bytes, inflated on first use within the part and request bounds (see the header). */
  get(name: string): Uint8Array | undefined {
    const cached = this.data.get(name);
    if (cached) return cached;
    const e = this.entries.get(name);
    if (!e) return undefined;
    const out = inflateEntry(this.zip, e, { maxBytes: MAX_INFLATED_PART, budget: this.budget, what: 'a part annotate reads' });
    this.data.set(name, out);
    return out;
  }

  text(name: string): string | undefined {
    const b = this.get(name);
    return b === undefined ? undefined : this.decoder.decode(b);
  }

  set(name: string, bytes: Uint8Array): void {
    this.data.set(name, bytes);
    this.changed.add(name);
    if (!this.orderSet.has(name)) {
      this.order.push(name);
      this.orderSet.add(name);
    }
  }

  setText(name: string, text: string): void {
    this.set(name, Buffer.from(text, 'utf8'));
  }

  /** The main document part named by the package relationships (usually word/document.xml). */
  mainDocumentPart(): string | undefined {
    return mainDocumentPartName(this.text('_rels/.rels'), (name) => this.has(name));
  }

  /** Writes the package: unchanged entries copied compressed, changed and new ones deflated. */
  toBytes(): Uint8Array {
    const chunks: Buffer[] = [];
    const central: Buffer[] = [];
    let offset = 0;
    const names = this.order.filter((n) => this.has(n));
    // [Content_Types].xml first, as Word writes it (some readers sniff it there).
    names.sort((a, b) => (a === '[Content_Types].xml' ? -1 : b === '[Content_Types].xml' ? 1 : 0));
    for (const name of names) {
      const e = this.entries.get(name);
      let method: number, crc: number, csize: number, usize: number, body: Uint8Array, time: number, date: number;
      if (e && !this.changed.has(name)) {
        ({ method, crc, time, date } = e);
        body = this.compressedData(e);
        csize = e.compressedSize;
        usize = e.uncompressedSize;
      } else {
        const bytes = this.data.get(name)!;
        const store = /\.(png|jpe?g|gif)$/i.test(name);
        body = store ? bytes : zlib.deflateRawSync(bytes, { level: bytes.length > 1024 * 1024 ? 4 : 6 });
        method = store ? 0 : 8;
        crc = zlib.crc32(bytes) >>> 0;
        csize = body.length;
        usize = bytes.length;
        time = 0;
        date = 0x21; // 1980-01-01, as the DOCX writers that pin dates do
      }
      const nameBytes = Buffer.from(name, 'utf8');
      const local = Buffer.alloc(30);
      local.writeUInt32LE(0x04034b50, 0);
      local.writeUInt16LE(20, 4);
      local.writeUInt16LE(0x0800, 6); // UTF-8 names, sizes in the header (no data descriptor)
      local.writeUInt16LE(method, 8);
      local.writeUInt16LE(time, 10);
      local.writeUInt16LE(date, 12);
      local.writeUInt32LE(crc, 14);
      local.writeUInt32LE(csize, 18);
      local.writeUInt32LE(usize, 22);
      local.writeUInt16LE(nameBytes.length, 26);
      local.writeUInt16LE(0, 28);
      const cd = Buffer.alloc(46);
      cd.writeUInt32LE(0x02014b50, 0);
      cd.writeUInt16LE(20, 4);
      cd.writeUInt16LE(20, 6);
      cd.writeUInt16LE(0x0800, 8);
      cd.writeUInt16LE(method, 10);
      cd.writeUInt16LE(time, 12);
      cd.writeUInt16LE(date, 14);
      cd.writeUInt32LE(crc, 16);
      cd.writeUInt32LE(csize, 20);
      cd.writeUInt32LE(usize, 24);
      cd.writeUInt16LE(nameBytes.length, 28);
      cd.writeUInt32LE(offset, 42);
      central.push(cd, nameBytes);
      chunks.push(local, nameBytes, Buffer.from(body.buffer, body.byteOffset, body.byteLength));
      offset += 30 + nameBytes.length + body.length;
    }
    const cdBuf = Buffer.concat(central);
    const end = Buffer.alloc(22);
    end.writeUInt32LE(0x06054b50, 0);
    end.writeUInt16LE(names.length, 8);
    end.writeUInt16LE(names.length, 10);
    end.writeUInt32LE(cdBuf.length, 12);
    end.writeUInt32LE(offset, 16);
    const out = Buffer.concat([...chunks, cdBuf, end]);
    return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
  }
}

/** Opens and checks that bytes are a DOCX: a ZIP with [Content_Types].xml and a word-processing main part. */
export function openDocx(bytes: Uint8Array): ZipPackage {
  const pkg = ZipPackage.open(bytes);
  if (!pkg.has('[Content_Types].xml')) {
    throw new FolioError('INVALID_FILE_FORMAT', 'The ZIP package has no [Content_Types].xml; it is not a DOCX');
  }
  const main = pkg.mainDocumentPart();
  if (!main || !pkg.has(main)) throw new FolioError('INVALID_FILE_FORMAT', 'The package has no Word main document part');
  return pkg;
}
