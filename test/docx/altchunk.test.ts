/**
 * Embedded chunks (w:altChunk): HTML, MIME web archives, RTF, plain text, DOCX packages and WordprocessingML
 * parts read in place by DOCX → Markdown/HTML, within the document's budgets (chunk count and nesting), and
 * hostile chunks kept inert.
 */
import { describe, expect, it } from 'vitest';
import { docxToHtml, docxToMarkdown, markdownToDocx } from '../../src/convert/index.js';
import { readDocxModel, MAX_CHUNKS, MAX_CHUNK_DEPTH } from '../../src/docx/read/reader.js';
import { mhtHtml, rtfText } from '../../src/docx/read/chunk-text.js';
import { docx } from './build.js';

const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships/aFChunk';
const para = (t: string) => `<w:p><w:r><w:t>${t}</w:t></w:r></w:p>`;

/** A document with text before and after one chunk of `type` stored as `name`. */
function withChunk(name: string, type: string, data: string | Uint8Array): Uint8Array {
  return docx(`${para('Before')}<w:altChunk r:id="c1"/>${para('After')}`, {
    rels: { c1: [REL, name] },
    parts: { [`word/${name}`]: data },
    types: `<Override PartName="/word/${name}" ContentType="${type}"/>`,
  });
}
const md = (b: Uint8Array) => docxToMarkdown(b).markdown.trim();

describe('altChunk in DOCX → Markdown/HTML', () => {
  it('reads an HTML chunk in place through the HTML reader: headings, lists, emphasis, links', () => {
    const html =
      '<html><body><h2>Title</h2><p>Some <b>bold</b> and a <a href="https://example.com/">link</a>.</p><ul><li>one</li><li>two</li></ul></body></html>';
    expect(md(withChunk('afchunk.htm', 'text/html', html))).toBe(
      'Before\n\n## Title\n\nSome **bold** and a [link](https://example.com/).\n\n- one\n- two\n\nAfter',
    );
  });

  it('keeps a hostile HTML chunk inert', () => {
    const html = '<p onclick="alert(1)">x<script>alert(2)</script><img src=x onerror=alert(3)><a href="javascript:alert(4)">y</a></p>';
    const out = docxToHtml(withChunk('afchunk.htm', 'text/html', html)).html;
    expect(out).not.toMatch(/<script|onerror|onclick|javascript:/i);
    expect(out).toContain('x');
  });

  it('reads the HTML part of a MIME web archive (quoted-printable, declared charset)', () => {
    const mht = [
      'MIME-Version: 1.0',
      'Content-Type: multipart/related; boundary="----=_NextPart_01"',
      '',
      '------=_NextPart_01',
      'Content-Location: file:///C:/chunk.htm',
      'Content-Transfer-Encoding: quoted-printable',
      'Content-Type: text/html; charset="windows-1252"',
      '',
      '<html><body><p>Caf=E9 cr=E8me, a long line that is =',
      'continued.</p></body></html>',
      '------=_NextPart_01--',
    ].join('\r\n');
    expect(mhtHtml(new TextEncoder().encode(mht))).toContain('Café crème, a long line that is continued.');
    expect(md(withChunk('afchunk.mht', 'message/rfc822', mht))).toBe('Before\n\nCafé crème, a long line that is continued.\n\nAfter');
  });

  it('reads an RTF chunk as its text, with a warning', () => {
    const rtf =
      "{\\rtf1\\ansi\\ansicpg1252{\\fonttbl{\\f0 Times;}}{\\*\\generator Writer;}\\f0 Hello \\b world\\b0 .\\par Caf\\'e9 \\u8364? {\\field{\\*\\fldinst HYPERLINK x}{\\fldrslt link}}\\par}";
    expect(rtfText(rtf)).toBe('Hello world.\nCafé € link\n');
    const r = docxToMarkdown(withChunk('chunk.rtf', 'application/rtf', rtf));
    expect(r.markdown.trim()).toBe('Before\n\nHello world.\n\nCafé € link\n\nAfter');
    expect(r.warnings.some((w) => w.includes('RTF'))).toBe(true);
  });

  it('reads a plain-text chunk as paragraphs', () => {
    expect(md(withChunk('chunk.txt', 'text/plain', 'line one\r\n\r\nline two'))).toBe('Before\n\nline one\n\nline two\n\nAfter');
  });

  it('reads a DOCX chunk as a document of its own, with its notes', () => {
    const inner = markdownToDocx('# Inner\n\nText with a note.[^1]\n\n[^1]: The note.\n');
    const r = md(withChunk('chunk.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', inner));
    expect(r).toContain('# Inner');
    expect(r).toContain('Text with a note.[^1]');
    expect(r).toContain('[^1]: The note.');
  });

  it('reads a WordprocessingML part of the same package', () => {
    const part = `<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${para('From the part')}</w:body></w:document>`;
    expect(md(withChunk('chunk1.xml', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml', part))).toBe(
      'Before\n\nFrom the part\n\nAfter',
    );
  });

  it('bounds DOCX chunks nested in DOCX chunks', () => {
    let bytes = docx(para('core'));
    for (let i = 0; i < MAX_CHUNK_DEPTH + 3; i++)
      bytes = withChunk('chunk.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', bytes);
    const r = docxToMarkdown(bytes);
    expect(r.warnings.some((w) => w.includes('nested more than'))).toBe(true);
    expect(r.markdown.split('Before').length - 1).toBe(MAX_CHUNK_DEPTH + 1);
    expect(r.markdown).not.toContain('core');
  });

  it('bounds a part that embeds itself', () => {
    const self = `<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><w:body>${para('again')}<w:altChunk r:id="c1"/></w:body></w:document>`;
    const bytes = docx(`<w:altChunk r:id="c1"/>`, {
      rels: { c1: [REL, 'loop.xml'] },
      parts: {
        'word/loop.xml': self,
        'word/_rels/loop.xml.rels': `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="c1" Type="${REL}" Target="loop.xml"/></Relationships>`,
      },
      types: '<Override PartName="/word/loop.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>',
    });
    const r = docxToMarkdown(bytes);
    expect(r.markdown.split('again').length - 1).toBe(MAX_CHUNK_DEPTH);
  });

  it('bounds the chunks of a document', () => {
    const body = '<w:altChunk r:id="c1"/>'.repeat(MAX_CHUNKS + 20);
    const model = readDocxModel(
      docx(body, { rels: { c1: [REL, 'c.txt'] }, parts: { 'word/c.txt': 'x' }, types: '<Default Extension="txt" ContentType="text/plain"/>' }),
    );
    expect(model.blocks.length).toBe(MAX_CHUNKS);
    expect(model.warnings.some((w) => w.includes(`beyond ${MAX_CHUNKS}`))).toBe(true);
  });

  it('leaves out a missing or unknown chunk with a warning', () => {
    const r = docxToMarkdown(docx(`${para('a')}<w:altChunk r:id="nope"/>`));
    expect(r.markdown.trim()).toBe('a');
    expect(r.warnings.some((w) => w.includes('w:altChunk'))).toBe(true);
    const u = docxToMarkdown(withChunk('x.bin', 'application/octet-stream', new Uint8Array([1, 2, 3])));
    expect(u.warnings.some((w) => w.includes('unsupported kind'))).toBe(true);
  });
});
