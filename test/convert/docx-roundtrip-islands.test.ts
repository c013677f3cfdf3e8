/**
 * Source islands (src/convert/markdown-islands.ts) and code languages across Markdown → DOCX → Markdown/HTML:
 * the Markdown Word cannot carry comes back while the content is unedited, never after an edit, never as
 * HTML output, and never from markup an input forged.
 */
import { strFromU8, strToU8, unzipSync, zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { docxToHtml, docxToMarkdown, htmlToDocx, markdownToDocx } from '../../src/convert/index.js';

const documentXml = (docx: Uint8Array) => strFromU8(unzipSync(docx)['word/document.xml']!);

function editDocument(docx: Uint8Array, edit: (xml: string) => string): Uint8Array {
  const files = unzipSync(docx);
  files['word/document.xml'] = strToU8(edit(strFromU8(files['word/document.xml']!)));
  return zipSync(files);
}

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

  it('copies the reference definitions an island uses', () => {
    const md = '*a *b* [c]*\n\n[c]: https://example.com/c "T"\n';
    const back = docxToMarkdown(markdownToDocx(md)).markdown;
    expect(back).toContain('[C]: <https://example.com/c> "T"');
  });
});

describe('code block languages', () => {
  it('keep the info string as a content control, read back as the info string and the HTML class', () => {
    const docx = markdownToDocx('```ruby startline=3\nputs 1\n```\n\n```\nplain\n```\n');
    expect(documentXml(docx)).toContain('<w:alias w:val="ruby"/><w:tag w:val="folio-lang:ruby"/>');
    expect(docxToMarkdown(docx).markdown).toBe('```ruby\nputs 1\n```\n\n```\nplain\n```\n');
    expect(docxToHtml(docx).html).toContain('<pre><code class="language-ruby">puts 1</code></pre>');
  });
});
