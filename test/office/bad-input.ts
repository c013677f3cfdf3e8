/** Hostile inputs built in memory: a ZIP bomb expanding to 1 GB, an entry-count bomb, a ZIP with no Word parts. */
import zlib from 'node:zlib';
import { strToU8, zipSync } from 'fflate';

/** A ZIP whose single entry inflates to `size` zero bytes (deflate of zeros, ~1000:1), CRC left 0. */
export async function zipBomb(size = 1024 * 1024 * 1024): Promise<Uint8Array> {
  const deflate = zlib.createDeflateRaw({ level: 1 });
  const chunks: Buffer[] = [];
  deflate.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<void>((resolve, reject) => {
    deflate.on('end', resolve);
    deflate.on('error', reject);
  });
  const zeros = Buffer.alloc(4 * 1024 * 1024);
  for (let written = 0; written < size; written += zeros.length) {
    if (!deflate.write(zeros)) await new Promise((r) => deflate.once('drain', r));
  }
  deflate.end();
  await done;
  const data = Buffer.concat(chunks);
  const name = Buffer.from('word/document.xml');
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(8, 8);
  local.writeUInt32LE(data.length, 18);
  local.writeUInt32LE(size >>> 0, 22);
  local.writeUInt16LE(name.length, 26);
  const ct = Buffer.from('[Content_Types].xml');
  const ctData = Buffer.from('<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>');
  const ctLocal = Buffer.alloc(30);
  ctLocal.writeUInt32LE(0x04034b50, 0);
  ctLocal.writeUInt16LE(20, 4);
  ctLocal.writeUInt32LE(ctData.length, 18);
  ctLocal.writeUInt32LE(ctData.length, 22);
  ctLocal.writeUInt16LE(ct.length, 26);
  const central = (fileName: Buffer, compressed: number, uncompressed: number, method: number, offset: number) => {
    const h = Buffer.alloc(46);
    h.writeUInt32LE(0x02014b50, 0);
    h.writeUInt16LE(20, 4);
    h.writeUInt16LE(20, 6);
    h.writeUInt16LE(method, 10);
    h.writeUInt32LE(compressed, 20);
    h.writeUInt32LE(uncompressed >>> 0, 24);
    h.writeUInt16LE(fileName.length, 28);
    h.writeUInt32LE(offset, 42);
    return Buffer.concat([h, fileName]);
  };
  const first = Buffer.concat([ctLocal, ct, ctData]);
  const second = Buffer.concat([local, name, data]);
  const cd = Buffer.concat([central(ct, ctData.length, ctData.length, 0, 0), central(name, data.length, size, 8, first.length)]);
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(2, 8);
  eocd.writeUInt16LE(2, 10);
  eocd.writeUInt32LE(cd.length, 12);
  eocd.writeUInt32LE(first.length + second.length, 16);
  return new Uint8Array(Buffer.concat([first, second, cd, eocd]));
}

/** A ZIP with 20 000 tiny entries (beyond the entry bound). */
export function manyEntries(): Uint8Array {
  const files: Record<string, Uint8Array> = { '[Content_Types].xml': strToU8('<Types/>'), 'word/document.xml': strToU8('<w:document/>') };
  for (let i = 0; i < 20_000; i++) files[`x/${i}`] = new Uint8Array(0);
  return zipSync(files, { level: 0 });
}

/** A valid ZIP that is not a Word document. */
export function zipWithoutWordParts(): Uint8Array {
  return zipSync({ 'hello.txt': strToU8('hello'), 'data/readme.md': strToU8('# not a docx') });
}

/** A tiny but real PDF. */
export const SMALL_PDF = strToU8(
  '%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj 3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n',
);
