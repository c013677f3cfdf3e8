/**
 * The tests' own ZIP builder, written byte by byte from APPNOTE.TXT so that every header can lie: sizes that
 * disagree with the data, wrong CRCs, local names that differ from the directory, central records that alias
 * another entry's bytes, entries the directory does not list. Hostile packages cannot be made with a writer
 * that gets these right (fflate, pizzip), and the inputs must not come from the code under test either: this
 * file is deliberately independent of src/docx/zip-writer.ts and src/docx/package.ts (it imports nothing from
 * src/), so that a bug there cannot shape the archives that test it.
 */
import zlib from 'node:zlib';

/** The values written in a local header and in a central record (they may lie). */
export interface ZipHeader {
  name: string;
  method: number;
  crc: number;
  compressedSize: number;
  /** Uncompressed size as written (capped at 0xffffffff; no ZIP64). */
  size: number;
  /** General purpose flags: 0 unless given (0x0800 marks UTF-8 names). */
  flags?: number;
  /** DOS date: 0 unless given. The time is always 0. */
  date?: number;
}

const u16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(n & 0xffff);
  return b;
};
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0);
  return b;
};

/** The fields a local header and a central record share, from "version needed" to "extra field length". */
function sharedFields(h: ZipHeader, name: Buffer): Buffer {
  const size = Math.min(h.size, 0xffffffff);
  return Buffer.concat([
    u16(20),
    u16(h.flags ?? 0),
    u16(h.method),
    u16(0),
    u16(h.date ?? 0),
    u32(h.crc),
    u32(h.compressedSize),
    u32(size),
    u16(name.length),
    u16(0),
  ]);
}

/** A local file header (signature PK\3\4) followed by the name; the entry's bytes come after it. */
export function localHeader(h: ZipHeader): Buffer {
  const name = Buffer.from(h.name, 'utf8');
  return Buffer.concat([u32(0x04034b50), sharedFields(h, name), name]);
}

/** A central directory record (signature PK\1\2) pointing at the local header at `offset`. */
export function centralRecord(h: ZipHeader, offset: number): Buffer {
  const name = Buffer.from(h.name, 'utf8');
  // version made by, the shared fields, comment length, disk, internal and external attributes, offset.
  return Buffer.concat([u32(0x02014b50), u16(20), sharedFields(h, name), u16(0), u16(0), u16(0), u32(0), u32(offset), name]);
}

/** The end of central directory record for `count` records (capped at 0xffff). */
export function endOfDirectory(count: number, directorySize: number, directoryOffset: number): Buffer {
  const n = Math.min(count, 0xffff);
  return Buffer.concat([u32(0x06054b50), u16(0), u16(0), u16(n), u16(n), u32(directorySize), u32(directoryOffset), u16(0)]);
}

/** One entry of `buildZip`. Everything but the name is optional; what is not given is written honestly. */
export interface ZipEntry {
  name: string;
  /** The content: deflated (method 8), or stored with `store`. Ignored when `compressed` is given. */
  data?: Uint8Array | string;
  /** Store instead of deflate. */
  store?: boolean;
  /** Bytes written as the entry's data as they are (already compressed with `method`; then give `crc` and `size`). */
  compressed?: Uint8Array;
  /** Method written for `compressed` data (default 8). */
  method?: number;
  /** The real uncompressed size of `compressed` data (default 0). */
  size?: number;
  /** Uncompressed size written in both headers instead of the real one. */
  declared?: number;
  /** CRC written instead of the real one. */
  crc?: number;
  /** Name written in the local header instead of `name`. */
  localName?: string;
  /** Uncompressed size written in the local header only. */
  localDeclared?: number;
  /** No central record: the local entry is reachable only through `aliases`. */
  unlisted?: boolean;
  flags?: number;
  date?: number;
}

export interface ZipOptions {
  /** Extra central records with their own name for the bytes of entry `of` (an index into the entries, or a name). */
  aliases?: Array<{ name: string; of: number | string }>;
  /** zlib deflate level (default: zlib's). The same data object (or string) is deflated once. */
  level?: number;
}

/** A ZIP of the entries, in order: local entries, then the central directory and its end record. */
export function buildZip(entries: ZipEntry[], opts: ZipOptions = {}): Buffer {
  const chunks: Buffer[] = [];
  const central: Buffer[] = [];
  const written: Array<{ header: ZipHeader; offset: number }> = [];
  const deflated = new Map<Uint8Array | string, Buffer>();
  let offset = 0;
  for (const e of entries) {
    let body: Buffer;
    let crc: number;
    let size: number;
    let method: number;
    if (e.compressed) {
      body = Buffer.from(e.compressed.buffer, e.compressed.byteOffset, e.compressed.byteLength);
      [crc, size, method] = [e.crc ?? 0, e.size ?? 0, e.method ?? 8];
    } else {
      const data = e.data ?? '';
      const raw = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
      method = e.store ? 0 : 8;
      if (e.store) body = raw;
      else {
        body = deflated.get(data) ?? zlib.deflateRawSync(raw, opts.level === undefined ? {} : { level: opts.level });
        deflated.set(data, body);
      }
      [crc, size] = [e.crc ?? zlib.crc32(raw) >>> 0, raw.length];
    }
    const header: ZipHeader = { name: e.name, method, crc, compressedSize: body.length, size: e.declared ?? size, flags: e.flags, date: e.date };
    const local = localHeader({ ...header, name: e.localName ?? e.name, size: e.localDeclared ?? header.size });
    chunks.push(local, body);
    written.push({ header, offset });
    if (!e.unlisted) central.push(centralRecord(header, offset));
    offset += local.length + body.length;
  }
  for (const a of opts.aliases ?? []) {
    const target = typeof a.of === 'number' ? written[a.of] : written.find((w) => w.header.name === a.of);
    if (!target) throw new Error(`alias ${a.name}: no entry ${a.of}`);
    central.push(centralRecord({ ...target.header, name: a.name }, target.offset));
  }
  const cd = Buffer.concat(central);
  return Buffer.concat([...chunks, cd, endOfDirectory(central.length, cd.length, offset)]);
}
