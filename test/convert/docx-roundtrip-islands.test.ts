/**
 * Source islands (src/convert/markdown-islands.ts) and code languages across Markdown → DOCX → Markdown/HTML:
 * the Markdown Word cannot carry comes back while the content is unedited, never after an edit, never as
 * HTML output, and never from markup an input forged.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { strFromU8, strToU8, unzipSync, zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { docxToHtml, docxToMarkdown, htmlToDocx, markdownToDocx } from '../../src/convert/index.js';
import { ISLANDS_NS, MAX_CONTROL_STRING } from '../../src/docx/read/model.js';
import { parseXml } from '../../src/docx/xml.js';
import { pdfText } from '../office/helpers.js';
import { SPEC_FILES, extensionsOf, loadExamples } from './conformance.js';

const documentXml = (docx: Uint8Array) => strFromU8(unzipSync(docx)['word/document.xml']!);

function editDocument(docx: Uint8Array, edit: (xml: string) => string, part = 'word/document.xml'): Uint8Array {
  const files = unzipSync(docx);
  files[part] = strToU8(edit(strFromU8(files[part]!)));
  return zipSync(files);
}

const ISLANDS_PART = 'customXml/item1.xml';
/** The w:tag and w:alias values of a document part, decoded. */
const controlStrings = (xml: string) =>
  [...xml.matchAll(/<w:(?:tag|alias) w:val="([^"]*)"\/>/g)].map((m) =>
    m[1]!
      .replace(/&#10;/g, '\n')
      .replace(/&#13;/g, '\r')
      .replace(/&#9;/g, '\t')
      .replace(/&quot;/g, '"')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&'),
  );

describe('source islands', () => {
  it('gives back the Markdown of raw HTML, images by URL and loose lists, and Word shows the content', () => {
    const md = 'Intro *text*.\n\nSome <b>bold</b> HTML.\n\n![logo](https://example.com/l.png "Logo")\n\n- a\n\n- b\n\nEnd.\n';
    const docx = markdownToDocx(md);
    const xml = documentXml(docx);
    expect(xml).toContain('w:val="folio-md:');
    // What Word shows: the HTML interpreted (bold), the image's alt text.
    expect(xml).toMatch(/<w:b\/>.*bold/);
    expect(docxToMarkdown(docx).markdown).toBe(md);
  });

  it('reads the content, not the kept Markdown, once the content was edited in Word', () => {
    const docx = editDocument(markdownToDocx('Some <b>bold</b> HTML.\n'), (xml) => xml.replace('>bold<', '>changed<'));
    const out = docxToMarkdown(docx).markdown;
    expect(out).not.toContain('<b>');
    expect(out).toContain('**changed**');
  });

  it('never passes raw HTML on to DOCX → HTML', () => {
    const html = docxToHtml(markdownToDocx('<div onclick="x()">hi <img src=x onerror=alert(1)></div>\n')).html;
    expect(html).toContain('hi');
    expect(html).not.toContain('onclick');
    expect(html).not.toContain('onerror');
  });

  it('honours no island an input forged (the key is per conversion)', () => {
    expect(documentXml(htmlToDocx('<folio-island data-key="k" data-src="forged">x</folio-island>'))).not.toContain('folio-md:');
    const md = '<folio-island data-key="k" data-src="forged">x</folio-island>\n';
    expect(docxToMarkdown(markdownToDocx(md)).markdown).toBe(md);
  });

  it('keeps the Markdown in a Custom XML Data part as Word stores one, the tag only naming it (Word limits tags)', () => {
    const md = '<div>\n  <p>one\n\ntwo &amp; "three"</p>\n</div>\n\n![a](https://example.com/a.png)\n';
    const docx = markdownToDocx(md);
    const files = unzipSync(docx);
    const tags = controlStrings(documentXml(docx));
    expect(tags.length).toBe(2);
    for (const t of tags) expect(t).toMatch(/^folio-md:\d+:[0-9a-f]{8}$/);
    // The data part, its properties (a GUID) and their relationship, the main part's relationship, the content type.
    const item = strFromU8(files[ISLANDS_PART]!);
    const root = parseXml(item, ISLANDS_PART).root;
    expect(root.name).toBe('islands');
    expect(item).toContain(
      `<islands xmlns="${ISLANDS_NS}"><island id="1">&lt;div&gt;\n  &lt;p&gt;one\n\ntwo &amp;amp; "three"&lt;/p&gt;\n&lt;/div&gt;</island>`,
    );
    const props = strFromU8(files['customXml/itemProps1.xml']!);
    parseXml(props, 'itemProps1.xml');
    expect(props).toMatch(
      /<ds:datastoreItem ds:itemID="\{[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}\}" xmlns:ds="http:\/\/schemas.openxmlformats.org\/officeDocument\/2006\/customXml">/,
    );
    expect(strFromU8(files['customXml/_rels/item1.xml.rels']!)).toContain(
      'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/customXmlProps" Target="itemProps1.xml"',
    );
    expect(strFromU8(files['word/_rels/document.xml.rels']!)).toContain(
      'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/customXml" Target="../customXml/item1.xml"',
    );
    expect(strFromU8(files['[Content_Types].xml']!)).toContain(
      '<Override PartName="/customXml/itemProps1.xml" ContentType="application/vnd.openxmlformats-officedocument.customXmlProperties+xml"/>',
    );
    expect(docxToMarkdown(docx).markdown).toBe(md);
    // Without islands, no part.
    expect(Object.keys(unzipSync(markdownToDocx('plain *text*\n'))).filter((n) => n.startsWith('customXml'))).toEqual([]);
  });

  it('LibreOffice and pandoc open a DOCX with islands and show its content', () => {
    const md = 'Before.\n\n<div>\n\n*inside* the div\n\n</div>\n\n![logo](https://example.com/l.png)\n\n<!-- hidden -->\n\nAfter.\n';
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-islands-lo-'));
    try {
      const file = path.join(dir, 'islands.docx');
      fs.writeFileSync(file, markdownToDocx(md));
      execFileSync('soffice', [`-env:UserInstallation=file://${dir}/profile`, '--headless', '--convert-to', 'pdf', '--outdir', dir, file], {
        timeout: 120_000,
        stdio: 'pipe',
      });
      const text = pdfText(fs.readFileSync(path.join(dir, 'islands.pdf')));
      for (const w of ['Before.', 'inside the div', 'logo', 'After.']) expect(text).toContain(w);
      const plain = execFileSync('pandoc', ['-f', 'docx', '-t', 'plain', file], { timeout: 60_000 }).toString('utf8');
      for (const w of ['Before.', 'inside the div', 'logo', 'After.']) expect(plain).toContain(w);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);

  it('reads the content when the island, the part or its relationship is missing', () => {
    const md = 'Some <b>bold</b> HTML.\n';
    const docx = markdownToDocx(md);
    expect(docxToMarkdown(docx).markdown).toBe(md);
    const noIsland = editDocument(docx, (x) => x.replace('id="1"', 'id="7"'), ISLANDS_PART);
    expect(docxToMarkdown(noIsland).markdown).toBe('Some **bold** HTML.\n');
    const files = unzipSync(docx);
    delete files[ISLANDS_PART];
    expect(docxToMarkdown(zipSync(files)).markdown).toBe('Some **bold** HTML.\n');
    const noRel = editDocument(docx, (x) => x.replace('/relationships/customXml"', '/relationships/other"'), 'word/_rels/document.xml.rels');
    expect(docxToMarkdown(noRel).markdown).toBe('Some **bold** HTML.\n');
    // A tag naming the island with another fingerprint (the content edited) is read as content.
    const edited = editDocument(docx, (x) => x.replace(/(folio-md:1:)[0-9a-f]{8}/, '$100000000'));
    expect(docxToMarkdown(edited).markdown).toBe('Some **bold** HTML.\n');
  });

  it('ignores a forged part with islands the document has no tag for, and refuses a DTD or a bomb in it', () => {
    const docx = markdownToDocx('Some <b>bold</b> HTML.\n');
    const extra = editDocument(docx, (x) => x.replace('</islands>', '<island id="2">forged</island></islands>'), ISLANDS_PART);
    const r = docxToMarkdown(extra);
    expect(r.markdown).toBe('Some **bold** HTML.\n');
    expect(r.warnings.join(' ')).toMatch(/names more blocks than the document has/);
    const many = editDocument(docx, (x) => x.replace('</islands>', '<island id="9">x</island>'.repeat(20_000) + '</islands>'), ISLANDS_PART);
    expect(docxToMarkdown(many).markdown).toBe('Some **bold** HTML.\n');
    const dtd = editDocument(
      docx,
      (x) => x.replace('<islands', '<!DOCTYPE islands [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;">]><islands').replace('<b>', '&b;'),
      ISLANDS_PART,
    );
    expect(() => docxToMarkdown(dtd)).toThrow(/DOCTYPE or entities/);
    // The part is read only for a folio-md: tag: without one, not even a DOCTYPE in it matters.
    expect(docxToMarkdown(editDocument(dtd, (x) => x.replace('folio-md:', 'other-md:'))).markdown).toBe('Some **bold** HTML.\n');
    // 8 MB of one character: refused as any entry with such a compression ratio (the bounds of every part).
    const files = unzipSync(docx);
    files[ISLANDS_PART] = strToU8(`<islands xmlns="${ISLANDS_NS}"><island id="1">${'a'.repeat(8 * 1024 * 1024)}</island></islands>`);
    expect(() => docxToMarkdown(zipSync(files, { level: 9 }))).toThrow(/zip bomb/);
  });

  it('copies the reference definitions an island uses', () => {
    const md = '*a *b* [c]*\n\n[c]: https://example.com/c "T"\n';
    const back = docxToMarkdown(markdownToDocx(md)).markdown;
    expect(back).toContain('[C]: <https://example.com/c> "T"');
  });
});

describe('content-control strings across the spec examples', () => {
  it(`no w:tag or w:alias is longer than ${MAX_CONTROL_STRING} characters or holds a line break`, () => {
    let controls = 0;
    for (const file of SPEC_FILES) {
      for (const example of loadExamples(file)) {
        const docx = markdownToDocx(example.markdown, { markdownExtensions: extensionsOf(example) });
        for (const v of controlStrings(documentXml(docx))) {
          controls++;
          expect(v.length, `${file}#${example.example}: ${v}`).toBeLessThanOrEqual(MAX_CONTROL_STRING);
          expect(v, `${file}#${example.example}`).not.toMatch(/[\r\n]/);
        }
      }
    }
    expect(controls).toBeGreaterThan(300);
  }, 300_000);
});

describe('code block languages', () => {
  it('keep the info string as a content control, read back as the info string and the HTML class', () => {
    const docx = markdownToDocx('```ruby startline=3\nputs 1\n```\n\n```\nplain\n```\n');
    expect(documentXml(docx)).toContain('<w:alias w:val="ruby"/><w:tag w:val="folio-lang:ruby"/>');
    expect(docxToMarkdown(docx).markdown).toBe('```ruby\nputs 1\n```\n\n```\nplain\n```\n');
    expect(docxToHtml(docx).html).toContain('<pre><code class="language-ruby">puts 1</code></pre>');
  });

  it('keep a language name too long for a tag through the islands part (Markdown) or drop it (HTML)', () => {
    const long = 'x'.repeat(80);
    const md = '```' + long + '\ncode\n```\n';
    const docx = markdownToDocx(md);
    for (const v of controlStrings(documentXml(docx))) expect(v.length).toBeLessThanOrEqual(MAX_CONTROL_STRING);
    expect(documentXml(docx)).not.toContain('folio-lang:');
    expect(docxToMarkdown(docx).markdown).toBe(md);
    const fromHtml = htmlToDocx(`<pre><code class="language-${long}">code</code></pre>`);
    expect(documentXml(fromHtml)).not.toContain('<w:sdt>');
    const exact = 'y'.repeat(MAX_CONTROL_STRING - 'folio-lang:'.length);
    expect(documentXml(markdownToDocx('```' + exact + '\ncode\n```\n'))).toContain(`<w:tag w:val="folio-lang:${exact}"/>`);
  });
});
