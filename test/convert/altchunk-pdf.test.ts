/**
 * Embedded chunks (w:altChunk) in DOCX → PDF (issue 27): never a 422, and the content of every chunk kind in the
 * PDF — DOCX chunks rendered by LibreOffice itself, HTML, MIME web archive, RTF and text chunks (which LibreOffice
 * 7.4 leaves out) as paragraphs of their text (src/docx/wordml/alt-chunks.ts, applied by src/office/prepare.ts);
 * a hostile chunk's markup never reaches the document as markup.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { strFromU8, unzipSync } from 'fflate';
import { markdownToDocx } from '../../src/convert/index.js';
import { DocxPackage } from '../../src/docx/package.js';
import { expandTextChunks } from '../../src/docx/wordml/alt-chunks.js';
import { OfficePool } from '../../src/office/index.js';
import { docx } from '../docx/build.js';
import { pdfText } from '../office/helpers.js';

const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships/aFChunk';
const para = (t: string) => `<w:p><w:r><w:t>${t}</w:t></w:r></w:p>`;
const withChunk = (name: string, type: string, data: string | Uint8Array, inCell = false) => {
  const chunk = '<w:altChunk r:id="c1"/>';
  const inner = inCell ? `<w:tbl><w:tr><w:tc>${chunk}</w:tc></w:tr></w:tbl>` : chunk;
  return docx(`${para('Before')}${inner}${para('After')}`, {
    rels: { c1: [REL, name] },
    parts: { [`word/${name}`]: data },
    types: `<Override PartName="/word/${name}" ContentType="${type}"/>`,
  });
};

const CASES: Record<string, Uint8Array> = {
  html: withChunk(
    'afchunk.htm',
    'text/html',
    '<html><head><title>t</title><script>alert(1)</script></head><body><h1>Html heading</h1><p>Html &amp; text</p></body></html>',
  ),
  mht: withChunk(
    'afchunk.mht',
    'message/rfc822',
    'MIME-Version: 1.0\r\nContent-Type: multipart/related; boundary="b"\r\n\r\n--b\r\nContent-Type: text/html; charset="utf-8"\r\n\r\n<p>Archive text</p>\r\n--b--',
  ),
  rtf: withChunk('chunk.rtf', 'application/rtf', '{\\rtf1\\ansi Rtf text\\par}'),
  text: withChunk('chunk.txt', 'text/plain', 'Plain text', true),
  docx: withChunk('chunk.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', markdownToDocx('Docx text')),
};

describe('altChunk expansion for the office engine', () => {
  it('replaces HTML, archive, RTF and text chunks with paragraphs of their text, leaves DOCX chunks', () => {
    const text = (b: Uint8Array) => {
      const pkg = DocxPackage.open(b);
      expandTextChunks(pkg);
      return strFromU8(unzipSync(pkg.toBytes())['word/document.xml']!);
    };
    expect(text(CASES.html!)).toContain('<w:t xml:space="preserve">Html &amp; text</w:t>');
    expect(text(CASES.html!)).not.toMatch(/altChunk|alert|<title|Html heading<\/w:t><\/w:r><w:r>/);
    expect(text(CASES.mht!)).toContain('Archive text');
    expect(text(CASES.rtf!)).toContain('Rtf text');
    expect(text(CASES.text!)).toMatch(/<w:tc><w:p><w:r><w:t xml:space="preserve">Plain text<\/w:t><\/w:r><\/w:p><\/w:tc>/);
    expect(text(CASES.docx!)).toContain('<w:altChunk r:id="c1"/>');
  });

  it('keeps an empty chunk in a cell a valid cell (one paragraph)', () => {
    const pkg = DocxPackage.open(withChunk('chunk.txt', 'text/plain', '   ', true));
    expect(expandTextChunks(pkg)).toBe(true);
    expect(strFromU8(unzipSync(pkg.toBytes())['word/document.xml']!)).toContain('<w:tc><w:p/></w:tc>');
  });
});

describe('DOCX → PDF with embedded chunks', () => {
  let pool: OfficePool;
  beforeAll(async () => {
    pool = new OfficePool({ workers: 1, queueSize: 8, timeoutMs: 120_000 });
    await pool.start();
  }, 120_000);
  afterAll(async () => {
    await pool?.close();
  });

  for (const [kind, bytes] of Object.entries(CASES)) {
    it(`converts a ${kind} chunk and prints its text`, async () => {
      const r = await pool.docxToPdf(bytes);
      const pdf = (r as { pdf?: Uint8Array }).pdf ?? (r as unknown as Uint8Array);
      const text = pdfText(pdf).replace(/\s+/g, ' ');
      expect(text).toContain('Before');
      expect(text).toContain('After');
      const want = { html: 'Html & text', mht: 'Archive text', rtf: 'Rtf text', text: 'Plain text', docx: 'Docx text' }[kind]!;
      expect(text).toContain(want);
      expect(text).not.toContain('alert');
    }, 120_000);
  }
});
