/** Hostile inputs built in memory: a ZIP bomb expanding to 1 GB, an entry-count bomb, a ZIP with no Word parts. */
import zlib from 'node:zlib';
import { strToU8, zipSync } from 'fflate';
import { buildZip } from '../support/zip.js';

/** A ZIP whose document part inflates to `size` zero bytes (deflate of zeros, ~1000:1), CRC left 0; built by test/support/zip.ts. */
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
  // CRCs left 0 in both entries: the bomb must be refused from its size before any CRC could be checked.
  const contentTypes = '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>';
  return new Uint8Array(
    buildZip([
      { name: '[Content_Types].xml', data: contentTypes, store: true, crc: 0 },
      { name: 'word/document.xml', compressed: data, size, crc: 0 },
    ]),
  );
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
