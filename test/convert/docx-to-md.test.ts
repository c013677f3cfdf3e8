/**
 * DOCX → Markdown (docxToMarkdown, POST /v1/convert?to=md): structure read from packages Folio builds
 * (markdownToDocx, htmlToDocx) and from the corpus (test/fixtures/corpus: files written by Word, LibreOffice, pandoc,
 * docx4j, POI, mammoth), hostile packages refused or bounded, and the route over real HTTP.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docxToMarkdown, htmlToDocx, markdownToDocx, markdownToHtml } from '../../src/convert/index.js';
import { authed, startTestApi, type TestApi } from '../helpers/api.js';
import { buildZip } from '../support/zip.js';
import { refusal } from '../support/refusal.js';
import { CORPUS_DOCX as CORPUS } from '../helpers/corpus.js';
import { PNG_1x1 } from './helpers.js';

const corpus = (name: string) => new Uint8Array(fs.readFileSync(path.join(CORPUS, name)));
const md = (bytes: Uint8Array, images?: 'inline' | 'drop') => docxToMarkdown(bytes, { images });
const ALL = ['table', 'strikethrough', 'tasklist', 'footnotes', 'autolink'] as const;

/** A minimal DOCX package around a body (and optional extra parts). */
function docx(body: string, parts: Record<string, string | Uint8Array> = {}): Uint8Array {
  const entries = [
    {
      name: '[Content_Types].xml',
      data: '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
    },
    {
      name: '_rels/.rels',
      data: '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="r1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
    },
    {
      name: 'word/document.xml',
      data: `<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><w:body>${body}</w:body></w:document>`,
    },
    ...Object.entries(parts).map(([name, data]) => ({ name, data })),
  ];
  // Stored, not deflated: a repetitive hostile body must reach the reader, not the ratio bound.
  return new Uint8Array(buildZip(entries.map((e) => ({ name: e.name, data: Buffer.from(e.data), store: true }))));
}

describe('docxToMarkdown on packages Folio writes', () => {
  it('keeps headings, emphasis, links, code, quotes, rules and escapes Markdown characters', () => {
    const source =
      '# Title\n\n## Sub *it*\n\nText with **bold**, *italic*, ~~gone~~, `code`, [a link](https://example.com/x "tip") and 2 * 3 _ [x] \\<tag> # not.\n\n' +
      '> quoted\n\n```\nline 1\n  line 2\n```\n\n---\n\n1\\. not a list\n';
    const out = md(markdownToDocx(source, { markdownExtensions: ALL })).markdown;
    expect(out).toContain('# Title\n');
    expect(out).toContain('## Sub *it*');
    expect(out).toContain('**bold**');
    expect(out).toContain('~~gone~~');
    expect(out).toContain('[a link](https://example.com/x "tip")');
    expect(out).toContain('2 \\* 3 \\_ \\[x\\] \\<tag> # not.');
    expect(out).toContain('> quoted');
    expect(out).toContain('```\nline 1\n  line 2\n```');
    expect(out).toContain('1\\. not a list');
    // Text written is text read: the two renderings agree.
    expect(markdownToHtml(out, { extensions: ALL })).toBe(markdownToHtml(source.replace('---', '___'), { extensions: ALL }));
  });

  it('rebuilds nested and numbered lists, task items and tables with alignment', () => {
    const source = '- a\n  - b\n    - c\n- d\n\n7. seven\n8. eight\n\n- [x] done\n- [ ] open\n\n| L | C | R |\n|:--|:-:|--:|\n| 1 | 2 | 3 |\n';
    const out = md(markdownToDocx(source, { markdownExtensions: ALL })).markdown;
    expect(out).toContain('- a\n  - b\n    - c\n- d');
    expect(out).toContain('7. seven\n8. eight');
    expect(out).toContain('- [x] done\n- [ ] open');
    expect(out).toContain('| L | C | R |\n|:---|:---:|---:|\n| 1 | 2 | 3 |');
  });

  it('writes footnotes as GFM footnotes', () => {
    const out = md(markdownToDocx('Claim[^a] and more[^b].\n\n[^a]: First *note*.\n[^b]: Second.\n', { markdownExtensions: ALL })).markdown;
    expect(out).toContain('Claim[^1] and more[^2].');
    expect(out).toMatch(/\[\^1\]: First \*note\*\.\n\n\[\^2\]: Second\./);
  });

  it('embeds images as data URIs with their alt text, or drops them with a warning', () => {
    const bytes = htmlToDocx(`<p>See <img alt="a dot" src="data:image/png;base64,${PNG_1x1}" width="10" height="10"> here</p>`);
    const inline = md(bytes);
    expect(inline.markdown).toContain(`![a dot](data:image/png;base64,${PNG_1x1})`);
    expect(inline.warnings).toEqual([]);
    const dropped = md(bytes, 'drop');
    expect(dropped.markdown).not.toContain('data:');
    expect(dropped.markdown).toContain('a dot');
    expect(dropped.warnings.join(' ')).toMatch(/images were dropped/);
  });

  it('writes tables with merged cells as HTML, with a warning', () => {
    const bytes = htmlToDocx('<table><tr><th colspan="2">wide</th></tr><tr><td rowspan="2">tall</td><td>x</td></tr><tr><td>y</td></tr></table>');
    const r = md(bytes);
    expect(r.markdown).toMatch(/<table[^>]*>/);
    expect(r.markdown).toContain('colspan="2"');
    expect(r.markdown).toContain('rowspan="2"');
    expect(r.warnings.join(' ')).toMatch(/merged cells/);
  });
});

describe('docxToMarkdown on hand-written WordprocessingML', () => {
  it('accepts tracked insertions, drops deletions and comments, keeps field results and HYPERLINK fields', () => {
    const body =
      '<w:p><w:r><w:t xml:space="preserve">kept </w:t></w:r><w:ins w:id="1" w:author="a"><w:r><w:t>inserted</w:t></w:r></w:ins>' +
      '<w:del w:id="2" w:author="a"><w:r><w:delText>deleted</w:delText></w:r></w:del><w:commentRangeStart w:id="3"/><w:r><w:t xml:space="preserve"> text</w:t></w:r>' +
      '<w:commentRangeEnd w:id="3"/><w:r><w:commentReference w:id="3"/></w:r></w:p>' +
      '<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve"> HYPERLINK "https://example.org/" </w:instrText></w:r>' +
      '<w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>field link</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r>' +
      '<w:r><w:t xml:space="preserve"> page </w:t></w:r><w:fldSimple w:instr=" PAGE "><w:r><w:t>7</w:t></w:r></w:fldSimple></w:p>';
    const out = md(docx(body)).markdown;
    expect(out).toContain('kept inserted text');
    expect(out).not.toContain('deleted');
    expect(out).toContain('[field link](https://example.org/) page 7');
    expect(out).not.toContain('HYPERLINK');
  });

  it('writes alt text and link titles with blank lines on one line, so the image and link syntax holds', async () => {
    const { default: MarkdownIt } = await import('markdown-it');
    const rels =
      '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
      '<Relationship Id="i1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="media/image1.png"/>' +
      '<Relationship Id="h1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink" Target="https://example.org/" TargetMode="External"/></Relationships>';
    // Word's generated descriptions look like this: "Table\n\nDescription automatically generated".
    const body =
      '<w:p><w:r><w:drawing><wp:inline xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing">' +
      '<wp:extent cx="9525" cy="9525"/><wp:docPr id="1" name="Picture 1" descr="Table [x]&#10;&#10;Description \\ automatically&#13;&#10;generated"/>' +
      '<a:graphic xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture">' +
      '<pic:pic xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:blipFill><a:blip r:embed="i1"/></pic:blipFill></pic:pic>' +
      '</a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>' +
      '<w:p><w:hyperlink r:id="h1" w:tooltip="first&#10;&#10;second"><w:r><w:t>link</w:t></w:r></w:hyperlink></w:p>';
    const out = md(docx(body, { 'word/_rels/document.xml.rels': rels, 'word/media/image1.png': Buffer.from(PNG_1x1, 'base64') })).markdown;
    const tokens = new MarkdownIt().parse(out, {});
    const inline = tokens.filter((t) => t.type === 'inline').flatMap((t) => t.children ?? []);
    const images = inline.filter((t) => t.type === 'image');
    expect(images).toHaveLength(1);
    expect(images[0]!.attrGet('src')).toMatch(/^data:image\/png;base64,/);
    expect((images[0]!.children ?? []).map((t) => t.content).join('')).toBe('Table [x] Description \\ automatically generated');
    const links = inline.filter((t) => t.type === 'link_open');
    expect(links).toHaveLength(1);
    expect(links[0]!.attrGet('href')).toBe('https://example.org/');
    expect(links[0]!.attrGet('title')).toBe('first second');
  });

  it('drops javascript: link targets and keeps the text', () => {
    const rels =
      '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="h1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink" Target="java&#9;script:alert(1)" TargetMode="External"/></Relationships>';
    const r = md(docx('<w:p><w:hyperlink r:id="h1"><w:r><w:t>click</w:t></w:r></w:hyperlink></w:p>', { 'word/_rels/document.xml.rels': rels }));
    expect(r.markdown.trim()).toBe('click');
    expect(r.warnings.join(' ')).toMatch(/javascript/);
  });

  it('reads checkbox content controls at the start of list items as task items', () => {
    const numbering =
      '<?xml version="1.0"?><w:numbering xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/><w:lvlText w:val="•"/></w:lvl></w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num></w:numbering>';
    const rels =
      '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="n" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/numbering" Target="numbering.xml"/></Relationships>';
    const item = (checked: boolean, text: string) =>
      `<w:p><w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr><w:sdt><w:sdtPr><w14:checkbox xmlns:w14="http://schemas.microsoft.com/office/word/2010/wordml"><w14:checked w14:val="${checked ? 1 : 0}"/></w14:checkbox></w:sdtPr><w:sdtContent><w:r><w:t>${checked ? '☒' : '☐'}</w:t></w:r></w:sdtContent></w:sdt><w:r><w:t xml:space="preserve"> ${text}</w:t></w:r></w:p>`;
    const out = md(
      docx(item(true, 'done') + item(false, 'todo'), { 'word/numbering.xml': numbering, 'word/_rels/document.xml.rels': rels }),
    ).markdown;
    expect(out).toBe('- [x] done\n- [ ] todo\n');
  });
});

describe('docxToMarkdown bounds', () => {
  it('refuses nesting deeper than the XML parser allows', () => {
    const deep = '<w:tbl><w:tr><w:tc>'.repeat(200) + '<w:p/>' + '</w:tc></w:tr></w:tbl>'.repeat(200);
    expect(refusal(() => md(docx(deep))).code).toBe('UNPROCESSABLE_DOCUMENT');
  });

  it('refuses tables nested past 32 levels with a 422 naming the limit (as the README says), and converts 32', () => {
    const nested = (n: number) => '<w:tbl><w:tr><w:tc>'.repeat(n) + '<w:p><w:r><w:t>core</w:t></w:r></w:p>' + '</w:tc></w:tr></w:tbl>'.repeat(n);
    for (const n of [33, 40]) {
      const e = refusal(() => md(docx(nested(n))));
      expect(e.code).toBe('UNPROCESSABLE_DOCUMENT');
      expect(e.message).toMatch(/more than 32 levels deep; the limit is 32/);
    }
    // At the limit the innermost text is kept (it used to be dropped silently past it).
    expect(md(docx(nested(32))).markdown).toContain('core');
  });

  it('refuses inline wrappers nested past 32 levels rather than dropping their text', () => {
    const wrapped = '<w:smartTag w:element="x">'.repeat(40) + '<w:r><w:t>inner</w:t></w:r>' + '</w:smartTag>'.repeat(40);
    expect(refusal(() => md(docx(`<w:p>${wrapped}</w:p>`))).message).toMatch(/the limit is 32/);
    const shallow = '<w:smartTag w:element="x">'.repeat(8) + '<w:r><w:t>inner</w:t></w:r>' + '</w:smartTag>'.repeat(8);
    expect(md(docx(`<w:p>${shallow}</w:p>`)).markdown).toBe('inner\n');
  });

  it('bounds what hostile numbers could nest: quote depth from indentation, list levels', () => {
    // Indentation alone is no quote (issue 27); a quote style nests by indentation, at most eight levels.
    const deep = '<w:p><w:pPr><w:pStyle w:val="Quote"/><w:ind w:left="99999999"/></w:pPr><w:r><w:t>deep</w:t></w:r></w:p>';
    expect(md(docx(deep.replace('<w:pStyle w:val="Quote"/>', ''))).markdown).toBe('deep\n');
    const quoteStyle =
      '<?xml version="1.0"?><w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:style w:type="paragraph" w:styleId="Quote"><w:name w:val="Quote"/></w:style></w:styles>';
    const styleRels =
      '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="s" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>';
    const quote = md(docx(deep, { 'word/styles.xml': quoteStyle, 'word/_rels/document.xml.rels': styleRels })).markdown;
    expect(quote).toBe('> > > > > > > > deep\n');
    const numbering =
      '<?xml version="1.0"?><w:numbering xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/><w:lvlText w:val="•"/></w:lvl></w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num></w:numbering>';
    const rels =
      '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="n" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/numbering" Target="numbering.xml"/></Relationships>';
    const items = Array.from(
      { length: 300 },
      (_, i) =>
        `<w:p><w:pPr><w:numPr><w:ilvl w:val="${i < 10 ? i : i * 1000}"/><w:numId w:val="1"/></w:numPr></w:pPr><w:r><w:t>i${i}</w:t></w:r></w:p>`,
    );
    const out = md(docx(items.join(''), { 'word/numbering.xml': numbering, 'word/_rels/document.xml.rels': rels })).markdown;
    const indents = out.split('\n').map((l) => /^ */.exec(l)![0].length);
    // Nine levels at most: a bullet (2 columns) and eight numbered levels (3 columns each).
    expect(Math.max(...indents)).toBe(2 + 7 * 3);
    expect(out).toContain('i299');
  });

  it('reads a paragraph of 50,000 nested field begins as its text, with a bounded field stack', () => {
    const begin =
      '<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText>HYPERLINK "https://x.example/"</w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r>';
    const body = `<w:p>${begin.repeat(50_000)}<w:r><w:t>inner</w:t></w:r>${'<w:r><w:fldChar w:fldCharType="end"/></w:r>'.repeat(50_000)}</w:p>`;
    const out = md(docx(body)).markdown;
    expect(out).toContain('inner');
    expect(out.length).toBeLessThan(1000);
  });

  it('refuses a table beyond the cell bound', () => {
    const row = '<w:tr>' + '<w:tc><w:p/></w:tc>'.repeat(100) + '</w:tr>';
    const e = refusal(() => docxToMarkdown(docx('<w:tbl>' + row.repeat(20) + '</w:tbl>'), { limits: { maxTableCells: 1000 } }));
    expect(e.code).toBe('UNPROCESSABLE_DOCUMENT');
    expect(e.message).toMatch(/more than 1000 cells/);
  });

  it('refuses zip bombs: a part that lies about its size, and one that inflates 1000:1', () => {
    const base = (extra: object) =>
      new Uint8Array(
        buildZip([
          { name: '[Content_Types].xml', data: '<Types/>' },
          {
            name: '_rels/.rels',
            data: '<Relationships><Relationship Id="r1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
          },
          { name: 'word/document.xml', ...extra },
        ]),
      );
    const lying = refusal(() => md(base({ data: '<w:document><w:body/></w:document>', declared: 2 ** 31 })));
    expect(['UNPROCESSABLE_DOCUMENT', 'FILE_TOO_LARGE']).toContain(lying.code);
    const dense = refusal(() => md(base({ data: Buffer.alloc(64 * 1024 * 1024, 0x20) })));
    expect(['UNPROCESSABLE_DOCUMENT', 'FILE_TOO_LARGE']).toContain(dense.code);
  });

  it('refuses what is not a DOCX', () => {
    expect(refusal(() => md(new Uint8Array(Buffer.from('%PDF-1.7\n')))).code).toBe('INVALID_FILE_FORMAT');
    expect(refusal(() => md(new Uint8Array(0))).code).toBe('INVALID_FILE_FORMAT');
  });
});

describe('docxToMarkdown on the DOCX corpus', () => {
  it('converts every readable corpus file, and refuses the three broken ones cleanly', () => {
    const names = fs.readdirSync(CORPUS).filter((f) => /\.(docx|docm|dotx)$/.test(f));
    expect(names.length).toBeGreaterThan(100);
    const refused: string[] = [];
    for (const name of names) {
      try {
        const r = md(corpus(name));
        expect(typeof r.markdown).toBe('string');
      } catch (e) {
        expect((e as { code?: string }).code, name).toMatch(/^(UNPROCESSABLE_DOCUMENT|INVALID_FILE_FORMAT)$/);
        refused.push(name);
      }
    }
    expect(refused.sort()).toEqual([
      'poi--bug53475-password-is-pass.docx',
      'poi--clusterfuzz-XWPF-5313273089884160.docx',
      'poi--truncated62886.docx',
    ]);
  }, 600_000);

  it('reads structure from files written by other tools', () => {
    const lists = md(corpus('pandoc--lists.docx')).markdown;
    expect(lists).toContain('## Some nested lists');
    expect(lists).toContain('1. one\n2. two\n   1. a\n   2. b');
    expect(lists).toContain('- one\n- two\n  - three\n    - four');

    const tables = md(corpus('pandoc--tables.docx')).markdown;
    expect(tables).toContain('| Name | Game | Fame | Blame |\n|---|---|---|---|\n| Lebron James | Basketball | Very High | Leaving Cleveland |');

    const notes = md(corpus('pandoc--notes.docx')).markdown;
    expect(notes).toContain('Test footnote.[^1] Test endnote.[^2]');
    expect(notes).toContain('[^2]: This is an endnote at the end of the document.');

    const inline = md(corpus('pandoc--inline_formatting.docx')).markdown;
    expect(inline).toContain('*italics* **bold *bold italics***');
    expect(inline).toContain('~~strikethrough~~');
    expect(inline).toContain('<sup>superscript</sup>');
    expect(inline).toContain('A line\\\nbreak.');

    const links = md(corpus('pandoc--links.docx')).markdown;
    expect(links).toContain('[external link](http://google.com)');

    expect(md(corpus('pandoc--track_changes_deletion.docx')).markdown.trim()).toBe('This is a text with a deletion.');
    expect(md(corpus('pandoc--track_changes_insertion.docx')).markdown.trim()).toBe('This is a text with two exciting insertions.');
    expect(md(corpus('mammoth--comments.docx')).markdown.trim()).toBe('Ouch.');
    expect(md(corpus('pandoc--task_list.docx')).markdown).toContain('- [ ] Unchecked');
    expect(md(corpus('pandoc--image.docx')).markdown).toMatch(/!\[He realizes he's making the file-size too big\.\]\(data:image\/jpeg;base64,\/9j\//);
    expect(md(corpus('pandoc--instrText_hyperlink.docx')).markdown).toContain('[Foundations of Analysis, 2nd Edition](https://books.google.com/');
  });
});

describe('POST /v1/convert?to=md', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(async () => {
    await api?.close();
  });

  const post = (query: string, name: string, bytes: Uint8Array) => {
    const fd = new FormData();
    fd.append('file', new Blob([bytes as BlobPart]), name);
    return fetch(`${api.url}/v1/convert${query}`, authed(api, { method: 'POST', body: fd }));
  };

  it('answers Markdown with its content type and file name', async () => {
    const res = await post('?to=md', 'Report.docx', markdownToDocx('# Hi\n\n*there*\n'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="Report.md"');
    expect(res.headers.get('x-folio-warnings')).toBeNull();
    expect(await res.text()).toBe('# Hi\n\n*there*\n');
  });

  it('says what it dropped in Warning and X-Folio-Warnings (images=drop as a form field)', async () => {
    const fd = new FormData();
    fd.append('file', new Blob([htmlToDocx(`<p><img alt="dot" src="data:image/png;base64,${PNG_1x1}"></p>`) as BlobPart]), 'a.docx');
    fd.append('images', 'drop');
    const res = await fetch(`${api.url}/v1/convert?to=md`, authed(api, { method: 'POST', body: fd }));
    expect(res.status).toBe(200);
    expect(res.headers.get('x-folio-warnings')).toMatch(/images were dropped/);
    expect(res.headers.get('warning')).toMatch(/^299 folio "/);
    expect(await res.text()).toBe('dot\n');
  });

  it('refuses md→md, images with another target, and a broken DOCX', async () => {
    const a = await post('?from=md&to=md', 'a.md', new TextEncoder().encode('# x'));
    expect(a.status).toBe(400);
    expect((await a.json()).code).toBe('UNSUPPORTED_CONVERSION');
    const b = await post('?to=docx&images=drop', 'a.md', new TextEncoder().encode('# x'));
    expect(b.status).toBe(400);
    expect((await b.json()).details[0].field).toBe('images');
    const c = await post('?from=docx&to=md', 'a.docx', new Uint8Array([0x50, 0x4b, 3, 4, 0, 0]));
    expect([400, 422]).toContain(c.status);
  });
});
