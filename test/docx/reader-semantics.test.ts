/**
 * The DOCX reader on what documents nobody here wrote hold (issue 27): text boxes, shapes and groups in
 * document order with every picture, paragraph semantics from styles (quotes, code) rather than indentation or
 * fonts, symbol fonts mapped to Unicode, pictures recognised by their bytes and declared content type, and the
 * shape bound.
 */
import { describe, expect, it } from 'vitest';
import { docxToHtml, docxToMarkdown } from '../../src/convert/index.js';
import { readDocxModel } from '../../src/docx/read/reader.js';
import type { Block } from '../../src/docx/read/model.js';
import { looksLikeProse } from '../../src/docx/read/blocks.js';
import { sniffImage } from '../../src/docx/read/image-kind.js';
import { PNG_1x1 } from '../convert/helpers.js';
import { docx, type DocxParts } from './build.js';

const md = (body: string, o?: DocxParts) => docxToMarkdown(docx(body, o)).markdown.trim();
const p = (text: string, pPr = '', rPr = '') =>
  `<w:p>${pPr ? `<w:pPr>${pPr}</w:pPr>` : ''}<w:r>${rPr ? `<w:rPr>${rPr}</w:rPr>` : ''}<w:t xml:space="preserve">${text}</w:t></w:r></w:p>`;
const kinds = (blocks: Block[]) => blocks.map((b) => b.t);
const png = Buffer.from(PNG_1x1, 'base64');

const txbx = (inner: string) =>
  `<w:r><w:drawing><wp:anchor><wp:extent cx="100" cy="100"/><wp:docPr id="1" name="box"/><a:graphic><a:graphicData><wps:wsp><wps:txbx><w:txbxContent>${inner}</w:txbxContent></wps:txbx></wps:wsp></a:graphicData></a:graphic></wp:anchor></w:drawing></w:r>`;
const pic = (rId: string, descr: string) =>
  `<pic:pic><pic:nvPicPr><pic:cNvPr id="2" name="p" descr="${descr}"/></pic:nvPicPr><pic:blipFill><a:blip r:embed="${rId}"/></pic:blipFill></pic:pic>`;

describe('text boxes and shapes', () => {
  it('reads a text box anchored ahead of the text before its paragraph, one anchored later after it', () => {
    const before = `<w:p>${txbx(p('In the box'))}<w:r><w:t>Body text.</w:t></w:r></w:p>`;
    expect(md(before)).toBe('In the box\n\nBody text.');
    const after = `<w:p><w:r><w:t>Body text.</w:t></w:r>${txbx(p('In the box'))}</w:p>`;
    expect(md(after)).toBe('Body text.\n\nIn the box');
  });

  it('reads a VML text box, and of a DrawingML shape with a VML fallback only one copy', () => {
    const vml = `<w:p><w:r><w:pict><v:shape><v:textbox><w:txbxContent>${p('VML box')}</w:txbxContent></v:textbox></v:shape></w:pict></w:r></w:p>`;
    expect(md(vml)).toBe('VML box');
    const both = `<w:p><w:r><mc:AlternateContent><mc:Choice Requires="wps">${txbx(p('Once')).slice(5, -6)}</mc:Choice><mc:Fallback><w:pict><v:shape><v:textbox><w:txbxContent>${p('Once')}</w:txbxContent></v:textbox></v:shape></w:pict></mc:Fallback></mc:AlternateContent></w:r></w:p>`;
    expect(md(both)).toBe('Once');
  });

  it('reads every picture and every text box of a grouped drawing, in order', () => {
    const group = `<w:p><w:r><w:drawing><wp:anchor><wp:docPr id="1" name="g"/><a:graphic><a:graphicData><wpg:wgp>${pic('i1', 'first')}<wps:wsp><wps:txbx><w:txbxContent>${p('Caption')}</w:txbxContent></wps:txbx></wps:wsp><wpg:grpSp>${pic('i2', 'second')}</wpg:grpSp></wpg:wgp></a:graphicData></a:graphic></wp:anchor></w:drawing></w:r></w:p>`;
    const model = readDocxModel(
      docx(group, {
        rels: { i1: ['image', 'media/a.png'], i2: ['image', 'media/b.png'] },
        parts: { 'word/media/a.png': png, 'word/media/b.png': png },
        types: '<Default Extension="png" ContentType="image/png"/>',
      }),
    );
    const images = model.blocks.flatMap((b) => (b.t === 'para' ? b.inlines.filter((i) => i.t === 'image') : []));
    expect(images.map((i) => i.t === 'image' && [i.alt, !!i.data])).toEqual([
      ['first', true],
      ['second', true],
    ]);
    // The box follows the first picture: it comes after the paragraph that holds the pictures.
    expect(kinds(model.blocks)).toEqual(['para', 'para']);
    const caption = model.blocks[1]!;
    expect(caption.t === 'para' && caption.inlines[0]!.t === 'text' && caption.inlines[0]!.text).toBe('Caption');
  });

  it('a text box inside a list item stays in the item', () => {
    const numbering =
      '<w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/><w:lvlText w:val="•"/></w:lvl></w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>';
    const item = `<w:p><w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr><w:r><w:t>Item</w:t></w:r>${txbx(p('Boxed'))}</w:p>`;
    expect(md(item + item, { numbering })).toBe('- Item\n\n  Boxed\n\n- Item\n\n  Boxed');
  });

  it('bounds the shapes of a document: beyond the limit they are left out with a warning', () => {
    const body = `<w:p>${txbx(p('x')).repeat(50)}</w:p>`;
    const model = readDocxModel(docx(body), { limits: { maxShapes: 10 } });
    expect(model.blocks.length).toBe(10);
    expect(model.warnings.some((w) => w.includes('beyond 10'))).toBe(true);
  });

  it('text boxes nested past the depth bound are refused, not silently dropped', () => {
    let inner = p('deep');
    for (let i = 0; i < 40; i++) inner = `<w:p>${txbx(inner)}</w:p>`;
    expect(() => readDocxModel(docx(inner))).toThrow(/levels deep/);
  });
});

const styles = (extra = '') =>
  `<w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/></w:style>` +
  `<w:style w:type="paragraph" w:styleId="Quote"><w:name w:val="Quote"/></w:style>` +
  `<w:style w:type="paragraph" w:styleId="MyQuote"><w:name w:val="My quotation"/><w:basedOn w:val="Quote"/></w:style>` +
  `<w:style w:type="paragraph" w:styleId="Zitat"><w:name w:val="Zitat"/></w:style>` +
  `<w:style w:type="paragraph" w:styleId="HTMLPreformatted"><w:name w:val="HTML Preformatted"/></w:style>` +
  `<w:style w:type="paragraph" w:styleId="MyCode"><w:name w:val="Listing body"/><w:basedOn w:val="HTMLPreformatted"/></w:style>` +
  extra;

describe('paragraph semantics from styles', () => {
  it('a block quote comes from a quote style (by name or id, along basedOn), never from indentation alone', () => {
    const body =
      p('Hanging indent paragraph that wraps.', '<w:ind w:left="720" w:hanging="720"/>') +
      p('Indented paragraph.', '<w:ind w:left="1440"/>') +
      p('Quoted.', '<w:pStyle w:val="Quote"/>') +
      p('Quoted by a derived style.', '<w:pStyle w:val="MyQuote"/>') +
      p('Zitiert.', '<w:pStyle w:val="Zitat"/>');
    const model = readDocxModel(docx(body, { styles: styles() }));
    expect(kinds(model.blocks)).toEqual(['para', 'para', 'quote']);
    const q = model.blocks[2]!;
    expect(q.t === 'quote' && q.blocks.length).toBe(3);
  });

  it('indented checkbox lines in a table cell stay paragraphs', () => {
    const cell = `<w:tbl><w:tr><w:tc>${p('☐ Option one', '<w:ind w:left="720"/>')}${p('☒ Option two', '<w:ind w:left="720"/>')}</w:tc></w:tr></w:tbl>`;
    const model = readDocxModel(docx(cell));
    const t = model.blocks[0]!;
    expect(t.t === 'table' && kinds(t.rows[0]!.cells[0]!.blocks)).toEqual(['para', 'para']);
  });

  it('code comes from a code style (along basedOn) or monospaced lines that do not read as prose', () => {
    const courier = '<w:rFonts w:ascii="Courier New" w:hAnsi="Courier New"/>';
    const body =
      p('int main() {', '<w:pStyle w:val="MyCode"/>') +
      p('}', '<w:pStyle w:val="MyCode"/>') +
      p('This paragraph is set in Courier, but it is ordinary prose.', '', courier) +
      p('x = compute(a, b);', '', courier) +
      p('return x;', '', courier);
    const model = readDocxModel(docx(body, { styles: styles() }));
    expect(kinds(model.blocks)).toEqual(['code', 'para', 'code']);
    const last = model.blocks[2]!;
    expect(last.t === 'code' && last.text).toBe('x = compute(a, b);\nreturn x;');
  });

  it('numbered items in Courier stay list items', () => {
    const numbering =
      '<w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:numFmt w:val="decimal"/><w:lvlText w:val="%1."/></w:lvl></w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>';
    const courier = '<w:rFonts w:ascii="Courier" w:hAnsi="Courier"/>';
    const item = (t: string) => p(t, '<w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr>', courier);
    expect(md(item('first()') + item('second()'), { numbering })).toBe('1. `first()`\n2. `second()`');
  });

  it('tells prose from code', () => {
    expect(looksLikeProse('The quick brown fox jumps over the lazy dog.')).toBe(true);
    expect(looksLikeProse('apples, pears and plums in a bowl')).toBe(true);
    expect(looksLikeProse('for (i = 0; i < n; i++) {')).toBe(false);
    expect(looksLikeProse('ls -la')).toBe(false);
    expect(looksLikeProse('Result: see table 3 for {x}.')).toBe(false);
  });
});

describe('symbol fonts', () => {
  it('maps w:sym characters of Symbol and Wingdings to Unicode', () => {
    const sym = (font: string, ch: string) => `<w:r><w:sym w:font="${font}" w:char="${ch}"/></w:r>`;
    const body = `<w:p>${sym('Symbol', 'F061')}${sym('Symbol', 'F0DA')}${sym('Symbol', 'F0B7')}${sym('Wingdings', 'F04A')}${sym('Wingdings', 'F0E8')}${sym('Wingdings 2', 'F050')}</w:p>`;
    expect(md(body)).toBe('α∨•☺🡺🗸');
  });

  it('maps text set in a symbol font, at private-use and at single-byte positions', () => {
    const symbol = '<w:rFonts w:ascii="Symbol" w:hAnsi="Symbol"/>';
    expect(md(p('\uF061\uF062\uF070 abp Ú', '', symbol))).toBe('αβπ αβπ ∨');
    expect(md(p('\uF0A7', '', '<w:rFonts w:ascii="Wingdings" w:hAnsi="Wingdings"/>'))).toBe('▪');
  });

  it('keeps a position the table lacks as its private-use character; Wingdings ballot boxes are checkboxes', () => {
    expect(md(`<w:p><w:r><w:sym w:font="Wingdings 3" w:char="F071"/></w:r></w:p>`)).toBe('\uF071');
    expect(md(`<w:p><w:r><w:sym w:font="Wingdings" w:char="F0FE"/></w:r><w:r><w:t xml:space="preserve"> done</w:t></w:r></w:p>`)).toBe('☒ done');
  });
});

describe('pictures by content type and bytes', () => {
  const withImage = (name: string, bytes: Uint8Array, types: string) =>
    docx(
      `<w:p><w:r><w:drawing><wp:inline><wp:docPr id="1" name="p" descr="alt"/><a:graphic><a:graphicData>${pic('i1', 'alt')}</a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>`,
      {
        rels: { i1: ['image', `media/${name}`] },
        parts: { [`word/media/${name}`]: bytes },
        types,
      },
    );

  it('reads a PNG stored as .tmp (declared image/png) as a PNG', () => {
    const html = docxToHtml(withImage('image1.tmp', png, '<Default Extension="tmp" ContentType="image/png"/>')).html;
    expect(html).toContain('src="data:image/png;base64,');
  });

  it('believes the bytes over the extension, and drops bytes that are no picture', () => {
    const jpeg = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1]);
    expect(docxToHtml(withImage('photo.png', jpeg, '')).html).toContain('src="data:image/jpeg;base64,');
    const r = docxToHtml(
      withImage('evil.png', new TextEncoder().encode('<html><script>alert(1)</script>'), '<Default Extension="png" ContentType="image/png"/>'),
    );
    expect(r.html).not.toContain('data:image');
    expect(r.warnings.some((w) => w.includes('not a picture'))).toBe(true);
  });

  it('sniffs the kinds Word stores', () => {
    expect(sniffImage(png)).toBe('image/png');
    expect(sniffImage(new TextEncoder().encode('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"/>'))).toBe('image/svg+xml');
    const emf = new Uint8Array(44);
    emf.set([1, 0, 0, 0]);
    emf.set([0x20, 0x45, 0x4d, 0x46], 40);
    expect(sniffImage(emf)).toBe('image/x-emf');
    expect(sniffImage(new Uint8Array([0xd7, 0xcd, 0xc6, 0x9a, 0, 0]))).toBe('image/x-wmf');
    expect(sniffImage(new Uint8Array([1, 2, 3]))).toBeUndefined();
  });
});
