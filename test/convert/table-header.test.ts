/**
 * Issue 17: a table's header row is marked as a header (w:tblHeader) and gets its bold look from the table
 * style's first-row formatting (w:tblLook firstRow on, w:tblStylePr firstRow bold), not from direct bold runs.
 */
import { describe, expect, it } from 'vitest';
import { htmlToDocx, htmlToWordFragment, markdownToDocx } from '../../src/convert/index.js';
import { openDocx } from '../../src/docx/package.js';

function parts(docx: Uint8Array) {
  const pkg = openDocx(docx);
  return { document: pkg.text('word/document.xml')!, styles: pkg.text('word/styles.xml')! };
}
const rowsOf = (xml: string) => [...xml.matchAll(/<w:tr>[\s\S]*?<\/w:tr>/g)].map((m) => m[0]);

describe('table header rows', () => {
  it('Markdown: the header row has tblHeader and no direct bold; the table style makes the first row bold', () => {
    const { document, styles } = parts(markdownToDocx('| a | b |\n|---|---|\n| 1 | 2 |\n', { markdownExtensions: ['table'] }));
    const [head, body] = rowsOf(document);
    expect(head).toContain('<w:trPr><w:tblHeader/></w:trPr>');
    expect(head).not.toMatch(/<w:b\/>|<w:b w:val="(1|true)"\/>/);
    expect(body).not.toContain('w:tblHeader');
    expect(document).toContain('<w:tblStyle w:val="TableGrid"/>');
    expect(document).toMatch(/<w:tblLook [^>]*w:firstRow="1"/);
    const style = /<w:style\b[^>]*w:styleId="TableGrid"[^>]*>[\s\S]*?<\/w:style>/.exec(styles)?.[0] ?? '';
    expect(style).toMatch(/<w:tblStylePr w:type="firstRow"><w:rPr><w:b\/>/);
  });

  it('HTML: a <th> header row likewise; a table without a header row does not switch the first-row look on', () => {
    const withHead = parts(htmlToDocx('<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>')).document;
    expect(rowsOf(withHead)[0]).toContain('<w:tblHeader/>');
    expect(rowsOf(withHead)[0]).not.toContain('<w:b/>');
    expect(withHead).toMatch(/<w:tblLook [^>]*w:firstRow="1"/);
    const plain = parts(htmlToDocx('<table><tr><td>a</td></tr><tr><td>1</td></tr></table>')).document;
    expect(plain).toMatch(/<w:tblLook [^>]*w:firstRow="0"/);
    expect(plain).not.toContain('w:tblHeader');
  });

  it('HTML: a <th> outside the first row keeps direct bold (the style covers only the first row)', () => {
    const doc = parts(htmlToDocx('<table><tr><th>h</th><th>h2</th></tr><tr><th>row</th><td>1</td></tr></table>')).document;
    expect(rowsOf(doc)[1]).toContain('<w:b/>');
  });

  it('fragments for templates keep direct bold, since the template table style is not ours', () => {
    const f = htmlToWordFragment('<table><thead><tr><th>a</th></tr></thead><tbody><tr><td>1</td></tr></tbody></table>');
    expect(rowsOf(f.bodyXml)[0]).toContain('<w:tblHeader/>');
    expect(rowsOf(f.bodyXml)[0]).toContain('<w:b/>');
  });
});
