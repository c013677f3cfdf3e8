/**
 * The one ZIP writer (src/docx/zip-writer.ts) and the one DOCX opener (src/docx/package.ts's openDocx):
 * archives any ZIP reader opens, byte for byte, with correct CRCs and the documented policy (UTF-8 flag,
 * fixed date, stored media, untouched entries copied raw); and "is this a DOCX" answered the same way for
 * every caller.
 */
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { unzipSync } from 'fflate';
import { portableCrc32, writeZip, ZIP_DOS_DATE } from '../../src/docx/zip-writer.js';
import { DocxPackage, openDocx, readZipDirectory } from '../../src/docx/package.js';
import { refusal } from '../support/refusal.js';

const utf8 = (s: string) => Buffer.from(s, 'utf8');
const CT = '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>';
const rels = (target: string) =>
  `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="${target}"/></Relationships>`;

describe('zip writer', () => {
  it('computes CRC-32 (IEEE) in JavaScript as zlib does', () => {
    expect(portableCrc32(Buffer.from('123456789'))).toBe(0xcbf43926);
    expect(portableCrc32(new Uint8Array(0))).toBe(0);
    const random = new Uint8Array(100_000).map((_, i) => (i * 2654435761) >>> 24);
    const native = (zlib as unknown as { crc32?: (d: Uint8Array) => number }).crc32;
    if (native) expect(portableCrc32(random)).toBe(native(random) >>> 0);
  });

  it('writes deflated and stored entries that read back unchanged, [Content_Types].xml first', () => {
    const xml = Buffer.from('<w:p>'.repeat(50_000) + 'ü€😀', 'utf8');
    const png = new Uint8Array(5000).map((_, i) => (i * 7919) & 0xff);
    const zip = writeZip([
      { name: 'word/document.xml', data: xml },
      { name: '[Content_Types].xml', data: Buffer.from('<Types/>') },
      { name: 'word/media/image1.png', data: png },
      { name: 'empty.xml', data: new Uint8Array(0) },
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

  it('flags UTF-8 names, pins the date, and gives the same bytes for the same input', () => {
    const entries = [
      { name: '[Content_Types].xml', data: utf8(CT) },
      { name: 'word/média/naïve.xml', data: utf8('<x/>') },
    ];
    const zip = writeZip(entries);
    expect(Buffer.from(writeZip(entries)).equals(Buffer.from(zip))).toBe(true);
    for (const e of readZipDirectory(zip)) {
      expect(e.flags & 0x0800).toBe(0x0800);
      expect(e.date).toBe(ZIP_DOS_DATE);
      expect(e.time).toBe(0);
    }
    expect(Object.keys(unzipSync(zip))).toContain('word/média/naïve.xml');
  });

  it('copies an untouched entry compressed, byte for byte, with its own date', () => {
    const doc = utf8('<w:document>' + 'abc '.repeat(10_000) + '</w:document>');
    const compressed = zlib.deflateRawSync(doc, { level: 9 });
    const zip = writeZip([
      { name: '[Content_Types].xml', data: utf8(CT) },
      { name: 'word/document.xml', raw: { method: 8, crc: zlib.crc32(doc), uncompressedSize: doc.length, time: 0x6000, date: 0x5a21, compressed } },
    ]);
    expect(Buffer.from(zip).indexOf(compressed)).toBeGreaterThan(0);
    const e = readZipDirectory(zip).find((x) => x.name === 'word/document.xml')!;
    expect([e.time, e.date, e.compressedSize]).toEqual([0x6000, 0x5a21, compressed.length]);
    expect(Buffer.from(unzipSync(zip)['word/document.xml']!).equals(doc)).toBe(true);
  });
});

describe('DocxPackage', () => {
  const docx = () =>
    writeZip([
      { name: '[Content_Types].xml', data: utf8(CT) },
      { name: '_rels/.rels', data: utf8(rels('word/document.xml')) },
      { name: 'word/document.xml', data: utf8('<w:document/>') },
      { name: 'word/media/a.png', data: new Uint8Array(3000).map((_, i) => i & 0xff) },
      { name: 'word/comments.xml', data: utf8('<w:comments/>') },
    ]);

  it('inflates only what is asked for, copies the rest raw, and deletes and adds parts', () => {
    const source = docx();
    const pkg = openDocx(source);
    expect(pkg.mainDocumentPart()).toBe('word/document.xml');
    expect(pkg.modified).toBe(false);
    pkg.setText('word/document.xml', '<w:document><w:body/></w:document>');
    pkg.delete('word/comments.xml');
    pkg.setText('word/new.xml', '<new/>');
    expect(pkg.has('word/comments.xml')).toBe(false);
    expect(pkg.names()).toEqual(['[Content_Types].xml', '_rels/.rels', 'word/document.xml', 'word/media/a.png', 'word/new.xml']);
    const out = pkg.toBytes();
    const files = unzipSync(out);
    expect(Object.keys(files)).toEqual(pkg.names());
    expect(Buffer.from(files['word/document.xml']!).toString()).toBe('<w:document><w:body/></w:document>');
    // The media entry was never inflated: its stored bytes are copied, with its record unchanged.
    const before = readZipDirectory(source).find((e) => e.name === 'word/media/a.png')!;
    const after = readZipDirectory(out).find((e) => e.name === 'word/media/a.png')!;
    expect([after.method, after.crc, after.compressedSize]).toEqual([before.method, before.crc, before.compressedSize]);
  });
});

describe('openDocx: is this a DOCX', () => {
  it('names what the bytes are instead', () => {
    expect(refusal(() => openDocx(new Uint8Array(0))).message).toMatch(/empty/);
    const cfb = new Uint8Array(512);
    cfb.set([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
    expect(refusal(() => openDocx(cfb)).code).toBe('UNPROCESSABLE_DOCUMENT');
    expect(refusal(() => openDocx(utf8('%PDF-1.7\n%...'))).message).toMatch(/is a PDF/);
    expect(refusal(() => openDocx(utf8('hello'))).message).toMatch(/not a ZIP/);
    const noTypes = writeZip([{ name: 'word/document.xml', data: utf8('<w:document/>') }]);
    expect(refusal(() => openDocx(noTypes)).message).toMatch(/Content_Types/);
  });

  it('refuses a spreadsheet or presentation package, whose main part is not a Word one', () => {
    for (const target of ['xl/workbook.xml', 'ppt/presentation.xml']) {
      const zip = writeZip([
        { name: '[Content_Types].xml', data: utf8(CT) },
        { name: '_rels/.rels', data: utf8(rels(target)) },
        { name: target, data: utf8('<x/>') },
      ]);
      expect(refusal(() => openDocx(zip)).message).toMatch(/no Word main document part/);
    }
  });

  it('accepts a DOCX whose first kilobyte holds "%PDF-" (a stored part), which the PDF sniff used to refuse', () => {
    const zip = writeZip([
      { name: '[Content_Types].xml', data: utf8(CT) },
      { name: 'notes.txt', data: utf8('%PDF-1.7 is not the format of this file'), store: true },
      { name: 'word/document.xml', data: utf8('<w:document/>') },
    ]);
    expect(openDocx(zip).mainDocumentPart()).toBe('word/document.xml');
  });

  it('opens any bounded ZIP without the DOCX checks through DocxPackage.open', () => {
    const zip = writeZip([{ name: 'a.txt', data: utf8('a') }]);
    expect(DocxPackage.open(zip).text('a.txt')).toBe('a');
  });
});
