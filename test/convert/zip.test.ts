/** The DOCX package's ZIP writer: archives any ZIP reader opens, byte for byte, with correct CRCs. */
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { unzipSync } from 'fflate';
import { portableCrc32, zipEntries } from '../../src/convert/zip.js';

describe('zip writer', () => {
  it('computes CRC-32 (IEEE) in JavaScript as zlib does', () => {
    expect(portableCrc32(Buffer.from('123456789'))).toBe(0xcbf43926);
    expect(portableCrc32(new Uint8Array(0))).toBe(0);
    const random = new Uint8Array(100_000).map((_, i) => (i * 2654435761) >>> 24);
    const native = (zlib as unknown as { crc32?: (d: Uint8Array) => number }).crc32;
    if (native) expect(portableCrc32(random)).toBe(native(random) >>> 0);
  });

  it('writes deflated and stored entries that read back unchanged, in order', () => {
    const xml = Buffer.from('<w:p>'.repeat(50_000) + 'ü€😀', 'utf8');
    const png = new Uint8Array(5000).map((_, i) => (i * 7919) & 0xff);
    const zip = zipEntries([
      { name: '[Content_Types].xml', data: Buffer.from('<Types/>'), deflate: true },
      { name: 'word/document.xml', data: xml, deflate: true },
      { name: 'word/media/image1.png', data: png, deflate: false },
      { name: 'empty.xml', data: new Uint8Array(0), deflate: true },
    ]);
    const files = unzipSync(zip);
    expect(Object.keys(files)).toEqual(['[Content_Types].xml', 'word/document.xml', 'word/media/image1.png', 'empty.xml']);
    expect(Buffer.from(files['word/document.xml']!).equals(xml)).toBe(true);
    expect(Buffer.from(files['word/media/image1.png']!).equals(Buffer.from(png))).toBe(true);
    expect(files['empty.xml']!.length).toBe(0);
    // The first local header's CRC field is the CRC of the entry's uncompressed bytes.
    expect(Buffer.from(zip).readUInt32LE(14)).toBe(portableCrc32(Buffer.from('<Types/>')));
    // The XML is compressed, the image stored: its bytes appear verbatim in the archive.
    expect(zip.length).toBeLessThan(xml.length / 10);
    expect(Buffer.from(zip).indexOf(Buffer.from(png))).toBeGreaterThan(0);
  });
});
