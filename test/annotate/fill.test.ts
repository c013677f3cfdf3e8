/**
 * The annotate engine on hand-made templates: each test writes the exact markup Word produces for a case
 * (split runs, control levels, bindings...) and checks the filled XML.
 */
import { describe, expect, it } from 'vitest';
import { imageSize } from 'image-size';
import { annotateDocx, listTemplateFields } from '../../src/annotate/index.js';
import { FolioError } from '../../src/errors.js';
import { b64, count, makeDocx, para, paragraphWith, pngOfSize, PNG_1x1, run, sdt, textOf, unpack } from './helpers.js';

const PNG_URI = `data:image/png;base64,${PNG_1x1}`;

describe('placeholders split across runs', () => {
  it('finds {{name}} split by runs, proofing marks and bookmarks, and keeps the first run formatting', async () => {
    const body = para(
      run('Dear ', '<w:i/>') +
        run('{', '<w:b/><w:color w:val="FF0000"/>') +
        '<w:proofErr w:type="spellStart"/>' +
        run('{ cust', '<w:b/>') +
        '<w:bookmarkStart w:id="1" w:name="bm"/>' +
        run('omer_name', '<w:u w:val="single"/>') +
        '<w:bookmarkEnd w:id="1"/><w:proofErr w:type="spellEnd"/>' +
        run(' }}, welcome', '<w:i/>'),
    );
    const { docx, report } = await annotateDocx(makeDocx({ body }), [{ id: 'customer_name', type: 'text', value: 'Ada Lovelace' }]);
    const doc = unpack(docx).document;
    const p = paragraphWith(doc, 'Ada Lovelace')!;
    expect(textOf(p).trim()).toBe('Dear Ada Lovelace, welcome');
    // The value run carries the formatting of the run where "{{" started.
    expect(p).toMatch(/<w:r><w:rPr><w:b\/><w:color w:val="FF0000"\/><\/w:rPr><w:t xml:space="preserve">Ada Lovelace<\/w:t><\/w:r>/);
    // Text before and after the placeholder keeps its own formatting; bookmarks stay.
    expect(p).toMatch(/<w:i\/><\/w:rPr><w:t xml:space="preserve">Dear <\/w:t>/);
    expect(p).toMatch(/<w:i\/><\/w:rPr><w:t xml:space="preserve">, welcome<\/w:t>/);
    expect(p).toContain('<w:bookmarkStart w:id="1" w:name="bm"/>');
    expect(report).toEqual({ filled: [{ id: 'customer_name', type: 'text', occurrences: 1 }], unmatched: [], unfilled: [], warnings: [] });
  });

  it('replaces every occurrence, in body, header, footer, footnotes and endnotes, and counts them', async () => {
    const docx = makeDocx({
      body: para(run('{{x}} and {{ x }}')) + para(run('{{y}}')),
      header: para(run('H: {{x}}')),
      footer: para(run('F: {') + run('{x}}')),
      footnotes: `<w:footnote w:id="1">${para(run('N: {{x}}'))}</w:footnote>`,
      endnotes: `<w:endnote w:id="1">${para(run('E: {{x}}'))}</w:endnote>`,
    });
    const fields = listTemplateFields(docx);
    expect(new Set(fields.map((f) => f.location))).toEqual(new Set(['body', 'header', 'footer', 'footnote', 'endnote']));
    const { docx: out, report } = await annotateDocx(docx, [{ id: 'x', type: 'text', value: 'V' }]);
    const u = unpack(out);
    expect(textOf(u.document)).toContain('V and V');
    expect(textOf(u.part('word/header1.xml'))).toContain('H: V');
    expect(textOf(u.part('word/footer1.xml'))).toContain('F: V');
    expect(textOf(u.part('word/footnotes.xml'))).toContain('N: V');
    expect(textOf(u.part('word/endnotes.xml'))).toContain('E: V');
    expect(report.filled).toEqual([{ id: 'x', type: 'text', occurrences: 6 }]);
    expect(report.unfilled).toEqual(['y']);
  });

  it('writes \\n as line breaks and \\t as tabs; escapes XML metacharacters and drops control characters', async () => {
    const { docx } = await annotateDocx(makeDocx({ body: para(run('{{v}}')) }), [
      { id: 'v', type: 'text', value: 'a<b>&"c\'\nline2\tcol\u0001\u0008\u000b\uFFFE end]]>' },
    ]);
    const doc = unpack(docx).document;
    expect(doc).toContain('<w:t xml:space="preserve">a&lt;b&gt;&amp;"c\'</w:t><w:br/><w:t xml:space="preserve">line2</w:t><w:tab/>');
    expect(textOf(doc)).toContain('a<b>&"c\'\nline2\tcol end]]>');
    // eslint-disable-next-line no-control-regex
    expect(doc).not.toMatch(/[\u0001\u0008\u000b\uFFFE]/);
  });

  it('fills a text box and its VML fallback copy, counting what a reader sees once', async () => {
    const inner = para(run('Box: {{x}}'));
    const body = para(
      '<w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wp:anchor xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"><a:graphic xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><a:graphicData uri="http://schemas.microsoft.com/office/word/2010/wordprocessingShape">' +
        `<wps:wsp xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"><wps:txbx><w:txbxContent>${inner}</w:txbxContent></wps:txbx></wps:wsp></a:graphicData></a:graphic></wp:anchor></w:drawing></mc:Choice>` +
        `<mc:Fallback><w:pict><v:shape xmlns:v="urn:schemas-microsoft-com:vml"><v:textbox><w:txbxContent>${inner}</w:txbxContent></v:textbox></v:shape></w:pict></mc:Fallback></mc:AlternateContent></w:r>` +
        run(' outside {{x}}'),
    );
    const docx = makeDocx({ body });
    expect(listTemplateFields(docx).reduce((n, f) => n + f.occurrences, 0)).toBe(2);
    const { docx: out, report } = await annotateDocx(docx, [{ id: 'x', type: 'text', value: 'V' }]);
    expect(report.filled).toEqual([{ id: 'x', type: 'text', occurrences: 2 }]);
    const doc = unpack(out).document;
    expect(count(textOf(doc), 'Box: V')).toBe(2);
    expect(textOf(doc)).toContain('outside V');
    expect(doc).not.toContain('{{');
  });

  it('a value that contains its own placeholder is written once, not filled again', async () => {
    const { docx, report } = await annotateDocx(makeDocx({ body: para(run('{{a}} and {{a}}')) }), [{ id: 'a', type: 'text', value: 'x{{a}}y' }]);
    expect(report.filled).toEqual([{ id: 'a', type: 'text', occurrences: 2 }]);
    expect(textOf(unpack(docx).document)).toContain('x{{a}}y and x{{a}}y');
  });

  it("placeholders typed inside another field's value are text, not fields", async () => {
    const { docx } = await annotateDocx(makeDocx({ body: para(run('{{a}} / {{b}}')) }), [
      { id: 'a', type: 'text', value: 'see {{b}}' },
      { id: 'b', type: 'text', value: 'B' },
    ]);
    expect(textOf(unpack(docx).document)).toContain('see {{b}} / B');
  });

  it('leaves Jinja statements and expressions with filters alone', async () => {
    const docx = makeDocx({ body: para(run('{% if a %}{{ a|upper }}{{p sub }}{% endif %}{{ok}}')) });
    expect(listTemplateFields(docx).map((f) => f.id)).toEqual(['ok']);
  });

  it('keepTextNodeStyles=false writes the value without the run formatting', async () => {
    const { docx } = await annotateDocx(makeDocx({ body: para(run('{{v}}', '<w:b/>')) }), [
      { id: 'v', type: 'text', value: 'plain', options: { keepTextNodeStyles: false } },
    ]);
    expect(unpack(docx).document).toContain('<w:r><w:t xml:space="preserve">plain</w:t></w:r>');
  });
});

describe('content controls', () => {
  const plcRun = run('Click here to enter text.', '<w:rStyle w:val="PlaceholderText"/><w:b/>');

  it('matches by w:id, then tag, JSON fieldId, alias; clears showingPlcHdr, keeps the control and its formatting', async () => {
    const body =
      para(sdt('<w:id w:val="101"/><w:showingPlcHdr/><w:text/>', plcRun)) +
      para(sdt('<w:tag w:val="city"/><w:id w:val="102"/>', run('x', '<w:i/>'))) +
      para(sdt('<w:alias w:val="Country"/><w:id w:val="103"/>', run('x'))) +
      para(
        sdt(
          `<w:tag w:val="${'{&quot;fieldId&quot;:&quot;f-1&quot;,&quot;fieldTypeShort&quot;:&quot;text&quot;,&quot;group&quot;:&quot;g&quot;}'}"/><w:id w:val="104"/>`,
          run('x'),
        ),
      ) +
      para(sdt(`<w:tag w:val="${'{&quot;group&quot;:&quot;g&quot;}'}"/><w:id w:val="105"/>`, run('x')));
    const { docx, report } = await annotateDocx(makeDocx({ body }), [
      { id: '101', type: 'text', value: 'by-id' },
      { id: 'city', type: 'text', value: 'by-tag' },
      { id: 'Country', type: 'text', value: 'by-alias' },
      { id: 'f-1', type: 'text', value: 'by-fieldId' },
    ]);
    const doc = unpack(docx).document;
    expect(count(doc, '<w:sdt>')).toBe(5);
    expect(doc).not.toContain('showingPlcHdr');
    expect(doc).not.toContain('PlaceholderText');
    expect(paragraphWith(doc, 'by-id')).toContain('<w:rPr><w:b/></w:rPr><w:t xml:space="preserve">by-id</w:t>');
    expect(paragraphWith(doc, 'by-tag')).toContain('<w:i/>');
    expect(textOf(doc)).toContain('by-alias');
    expect(textOf(doc)).toContain('by-fieldId');
    expect(report.filled.map((f) => f.id)).toEqual(['101', 'city', 'Country', 'f-1']);
    expect(report.unfilled).toEqual(['105']);

    const grouped = await annotateDocx(makeDocx({ body }), [{ group: 'g', type: 'text', value: 'G' }]);
    expect(grouped.report.filled).toEqual([{ id: 'g', type: 'text', occurrences: 2 }]);
    expect(count(textOf(unpack(grouped.docx).document), 'G')).toBe(2);
  });

  it('fills block, row and cell controls in their first paragraph and drops the other placeholder paragraphs', async () => {
    const body =
      sdt('<w:tag w:val="block"/><w:id w:val="1"/>', para(run('one'), '<w:pStyle w:val="Heading1"/>') + para(run('two'))) +
      '<w:tbl><w:tblPr/><w:tblGrid><w:gridCol w:w="3000"/></w:tblGrid>' +
      sdt('<w:tag w:val="row"/><w:id w:val="2"/>', `<w:tr><w:tc>${para(run('r'))}</w:tc></w:tr>`) +
      `<w:tr>${sdt('<w:tag w:val="cell"/><w:id w:val="3"/>', `<w:tc><w:tcPr><w:tcW w:w="3000" w:type="dxa"/></w:tcPr>${para(run('c'))}</w:tc>`)}</w:tr></w:tbl>` +
      para('');
    const { docx } = await annotateDocx(makeDocx({ body }), [
      { id: 'block', type: 'text', value: 'B' },
      { id: 'row', type: 'text', value: 'R' },
      { id: 'cell', type: 'text', value: 'C' },
    ]);
    const doc = unpack(docx).document;
    expect(doc).toMatch(/<w:p><w:pPr><w:pStyle w:val="Heading1"\/><\/w:pPr><w:r><w:t xml:space="preserve">B<\/w:t><\/w:r><\/w:p><\/w:sdtContent>/);
    expect(textOf(doc)).not.toContain('two');
    expect(doc).toMatch(/<w:sdtContent><w:tr><w:tc><w:p><w:r><w:t xml:space="preserve">R<\/w:t>/);
    expect(doc).toMatch(/<w:sdtContent><w:tc><w:tcPr><w:tcW w:w="3000" w:type="dxa"\/><\/w:tcPr><w:p><w:r><w:t xml:space="preserve">C<\/w:t>/);
  });

  it('flattens a control when asked (per field or for the whole document)', async () => {
    const body = para(sdt('<w:tag w:val="a"/><w:id w:val="1"/>', run('x'))) + para(sdt('<w:tag w:val="b"/><w:id w:val="2"/>', run('y')));
    const one = unpack((await annotateDocx(makeDocx({ body }), [{ id: 'a', type: 'text', value: 'A', options: { flatten: true } }])).docx).document;
    expect(count(one, '<w:sdt>')).toBe(1);
    expect(one).toContain('<w:p><w:r><w:t xml:space="preserve">A</w:t></w:r></w:p>');
    const all = unpack((await annotateDocx(makeDocx({ body }), [{ id: 'a', type: 'text', value: 'A' }], { flatten: true })).docx).document;
    expect(count(all, '<w:sdt>')).toBe(0);
    expect(textOf(all)).toContain('A');
    expect(textOf(all)).toContain('y');
  });

  it('a temporary control goes away once filled; a drop-down selects the item its text names', async () => {
    const body =
      para(sdt('<w:tag w:val="tmp"/><w:id w:val="1"/><w:temporary/><w:showingPlcHdr/><w:text/>', run('[Job Title]'))) +
      para(
        sdt(
          '<w:tag w:val="dd"/><w:id w:val="2"/><w:dropDownList w:lastValue="a"><w:listItem w:displayText="Alpha" w:value="a"/><w:listItem w:displayText="Beta" w:value="b"/></w:dropDownList>',
          run('Alpha'),
        ),
      );
    const doc = unpack(
      (
        await annotateDocx(makeDocx({ body }), [
          { id: 'tmp', type: 'text', value: 'Engineer' },
          { id: 'dd', type: 'text', value: 'Beta' },
        ])
      ).docx,
    ).document;
    expect(count(doc, '<w:sdt>')).toBe(1);
    expect(doc).toContain('<w:p><w:r><w:t xml:space="preserve">Engineer</w:t></w:r></w:p>');
    expect(doc).toContain('<w:dropDownList w:lastValue="b">');
    expect(textOf(doc)).toContain('Beta');
  });

  it('updates the customXml node a control is bound to, and drops a binding it cannot follow', async () => {
    const store = '{11111111-2222-3333-4444-555555555555}';
    const body =
      para(
        sdt(
          `<w:tag w:val="name"/><w:id w:val="1"/><w:dataBinding w:prefixMappings="xmlns:ns0='urn:x'" w:xpath="/ns0:root[1]/ns0:name[1]" w:storeItemID="${store}"/><w:text/>`,
          run('old'),
        ),
      ) +
      para(
        sdt(
          `<w:tag w:val="complex"/><w:id w:val="2"/><w:dataBinding w:xpath="/root[1]/name[position()=1]" w:storeItemID="${store}"/><w:text/>`,
          run('old'),
        ),
      );
    const extra = {
      'customXml/item1.xml': '<?xml version="1.0"?><ns0:root xmlns:ns0="urn:x"><ns0:name>old</ns0:name></ns0:root>',
      'customXml/itemProps1.xml': `<?xml version="1.0"?><ds:datastoreItem ds:itemID="${store}" xmlns:ds="http://schemas.openxmlformats.org/officeDocument/2006/customXml"/>`,
    };
    const { docx } = await annotateDocx(makeDocx({ body, extra }), [
      { id: 'name', type: 'text', value: 'Grace & co' },
      { id: 'complex', type: 'text', value: 'other' },
    ]);
    const u = unpack(docx);
    expect(u.part('customXml/item1.xml')).toContain('<ns0:name>Grace &amp; co</ns0:name>');
    expect(count(u.document, '<w:dataBinding')).toBe(1);
    expect(textOf(u.document)).toContain('other');
  });

  it('checkbox: sets w14:checked and the glyph and font of the checked state', async () => {
    const pr =
      '<w:id w:val="7"/><w:tag w:val="agree"/><w14:checkbox><w14:checked w14:val="0"/><w14:checkedState w14:val="2612" w14:font="MS Gothic"/><w14:uncheckedState w14:val="2610" w14:font="MS Gothic"/></w14:checkbox>';
    const docx = makeDocx({ body: para(sdt(pr, run('☐', '<w:rFonts w:ascii="MS Gothic" w:hAnsi="MS Gothic"/>'))) + para(run('{{agree}}')) });
    expect(listTemplateFields(docx).find((f) => f.id === '7')?.type).toBe('checkbox');
    const doc = unpack((await annotateDocx(docx, [{ id: 'agree', type: 'checkbox', value: true }])).docx).document;
    expect(doc).toContain('<w14:checked w14:val="1"/>');
    expect(textOf(doc)).toContain('☒');
    const off = unpack((await annotateDocx(docx, [{ id: 'agree', type: 'checkbox', value: false }])).docx).document;
    expect(off).toContain('<w14:checked w14:val="0"/>');
    expect(count(textOf(off), '☐')).toBe(2); // the control and the {{agree}} placeholder
  });

  it("date: writes w:fullDate and the text in the control's w:dateFormat and language", async () => {
    const pr = (fmt: string, lid: string) =>
      `<w:id w:val="9"/><w:tag w:val="d"/><w:date><w:dateFormat w:val="${fmt}"/><w:lid w:val="${lid}"/><w:storeMappedDataAs w:val="dateTime"/><w:calendar w:val="gregorian"/></w:date>`;
    const us = unpack(
      (
        await annotateDocx(makeDocx({ body: para(sdt(pr('dddd, MMMM d, yyyy', 'en-US'), run('x'))) }), [
          { id: 'd', type: 'date', value: '2024-02-29' },
        ])
      ).docx,
    ).document;
    expect(us).toContain('w:fullDate="2024-02-29T00:00:00Z"');
    expect(textOf(us)).toContain('Thursday, February 29, 2024');
    const fr = unpack(
      (await annotateDocx(makeDocx({ body: para(sdt(pr('d MMMM yyyy', 'fr-FR'), run('x'))) }), [{ id: 'd', type: 'date', value: '2024-07-14' }]))
        .docx,
    ).document;
    expect(textOf(fr)).toContain('14 juillet 2024');
    const custom = unpack(
      (
        await annotateDocx(makeDocx({ body: para(run('On {{d}}.')) }), [
          { id: 'd', type: 'date', value: '2024-07-04', options: { format: 'dd/MM/yy' } },
        ])
      ).docx,
    ).document;
    expect(textOf(custom)).toContain('On 04/07/24.');
  });
});

describe('images and signatures', () => {
  it('embeds a PNG fitted into the picture control box, with content type, relationship and unique docPr ids', async () => {
    const box =
      '<w:drawing><wp:inline xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"><wp:extent cx="1905000" cy="1905000"/><wp:docPr id="1" name="old"/></wp:inline></w:drawing>';
    const body = para(sdt('<w:id w:val="1"/><w:tag w:val="logo"/><w:picture/>', `<w:r>${box}</w:r>`)) + para(run('{{logo}} {{logo}}'));
    const wide = await pngOfSize(400, 100);
    const { docx, report } = await annotateDocx(makeDocx({ body }), [{ id: 'logo', type: 'image', value: b64(wide) }]);
    expect(report.filled).toEqual([{ id: 'logo', type: 'image', occurrences: 3 }]);
    const u = unpack(docx);
    // 200 px box: a 400×100 image fits as 200×50 px.
    expect(u.document).toContain('<wp:extent cx="1905000" cy="476250"/>');
    // The placeholders have no box: natural size (400×100 px).
    expect(count(u.document, '<wp:extent cx="3810000" cy="952500"/>')).toBe(2);
    const ids = [...u.document.matchAll(/<wp:docPr id="(\d+)"/g)].map((m) => m[1]);
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(3);
    expect(u.part('[Content_Types].xml')).toMatch(/<Default Extension="png" ContentType="image\/png"\/>/);
    const rel = /<Relationship Id="(rIdFolio\d+)" Type="[^"]+\/image" Target="(media\/[^"]+\.png)"\/>/.exec(u.part('word/_rels/document.xml.rels'))!;
    expect(u.document).toContain(`r:embed="${rel[1]}"`);
    expect(imageSize(u.files[`word/${rel[2]}`]!)).toMatchObject({ width: 400, height: 100 });
  });

  it('adds relationships to the header part for an image in a header, and honours options.dimensions', async () => {
    const { docx } = await annotateDocx(makeDocx({ body: para(run('body')), header: para(run('{{sig}}')) }), [
      { id: 'sig', type: 'image', value: PNG_URI, options: { dimensions: { width: 120, height: '60px' } } },
    ]);
    const u = unpack(docx);
    const header = u.part('word/header1.xml');
    expect(header).toContain('<wp:extent cx="1143000" cy="571500"/>');
    const relId = /r:embed="([^"]+)"/.exec(header)![1]!;
    expect(u.part('word/_rels/header1.xml.rels')).toContain(`Id="${relId}"`);
    expect(header).toMatch(/^<\?xml[^>]*>\s*<w:hdr [^>]*xmlns:wp="http:\/\/schemas.openxmlformats.org\/drawingml\/2006\/wordprocessingDrawing"/);
  });

  it('embeds JPEG and GIF, and SVG with a PNG fallback', async () => {
    const jpeg = Buffer.from(
      '/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=',
      'base64',
    );
    const gif = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
    const svg =
      '<svg xmlns="http://www.w3.org/2000/svg" width="300" height="150"><circle cx="75" cy="75" r="60" fill="red"/><image href="/etc/passwd" width="10" height="10"/></svg>';
    const { docx } = await annotateDocx(makeDocx({ body: para(run('{{j}}')) + para(run('{{g}}')) + para(run('{{s}}')) }), [
      { id: 'j', type: 'image', value: `data:image/jpeg;base64,${b64(jpeg)}` },
      { id: 'g', type: 'image', value: b64(gif) },
      { id: 's', type: 'image', value: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}` },
    ]);
    const u = unpack(docx);
    const ct = u.part('[Content_Types].xml');
    for (const ext of ['jpeg', 'gif', 'png', 'svg']) expect(ct).toContain(`Extension="${ext}"`);
    expect(u.document).toContain('<asvg:svgBlip');
    const svgPart = Object.keys(u.files).find((n) => n.endsWith('.svg'))!;
    expect(Buffer.from(u.files[svgPart]!).toString()).not.toContain('/etc/passwd');
    const fallback = Object.keys(u.files).filter((n) => n.endsWith('.png'));
    expect(fallback).toHaveLength(1);
    expect(imageSize(u.files[fallback[0]!]!)).toMatchObject({ width: 600, height: 300 });
    expect(u.document).toContain('<wp:extent cx="2857500" cy="1428750"/>');
  });

  it('renders a signature given as a name as a typed signature image', async () => {
    const { docx, report } = await annotateDocx(makeDocx({ body: para(run('Signed: {{sig}}')) }), [
      { id: 'sig', type: 'signature', value: 'Jane Q. Public' },
    ]);
    expect(report.filled[0]).toEqual({ id: 'sig', type: 'signature', occurrences: 1 });
    const u = unpack(docx);
    expect(u.document).toContain('descr="Signature of Jane Q. Public"');
    const png = Object.keys(u.files).find((n) => n.startsWith('word/media/'))!;
    const size = imageSize(u.files[png]!);
    expect(size.type).toBe('png');
    expect(size.width!).toBeGreaterThan(size.height!);
  });
});

describe('tables', () => {
  const table = (rows: string) =>
    `<w:tbl><w:tblPr><w:tblStyle w:val="TableGrid"/></w:tblPr><w:tblGrid><w:gridCol w:w="2000"/><w:gridCol w:w="3000"/></w:tblGrid>${rows}</w:tbl>${para('')}`;
  const tr = (a: string, b: string, rPr = '') => `<w:tr><w:tc>${para(run(a, rPr))}</w:tc><w:tc>${para(run(b, rPr))}</w:tc></w:tr>`;

  it('a placeholder row is the template: one styled copy per value row', async () => {
    const body = table(tr('Name', 'Qty') + tr('{{items}}', '', '<w:color w:val="00FF00"/>') + tr('Total', '3'));
    const { docx } = await annotateDocx(makeDocx({ body }), [
      {
        id: 'items',
        type: 'table',
        value: [
          ['apple', '1'],
          ['pear', '2'],
        ],
      },
    ]);
    const doc = unpack(docx).document;
    expect(textOf(doc).replace(/\n+/g, '|')).toContain('Name|Qty|apple|1|pear|2|Total|3');
    expect(count(doc, '<w:color w:val="00FF00"/>')).toBe(4);
    expect(doc).not.toContain('{{');
  });

  it('a control around a table gets rows appended, copying the last row when copyRowStyle is set', async () => {
    const body = sdt('<w:tag w:val="t"/><w:id w:val="5"/>', table(tr('H1', 'H2') + tr('a', 'b', '<w:i/>')));
    const styled = unpack(
      (await annotateDocx(makeDocx({ body }), [{ id: 't', type: 'table', value: [['x', 'y']], options: { copyRowStyle: true } }])).docx,
    ).document;
    expect(textOf(styled).replace(/\n+/g, '|')).toContain('H1|H2|a|b|x|y');
    expect(count(styled, '<w:i/>')).toBe(4);
    const plain = unpack((await annotateDocx(makeDocx({ body }), [{ id: 't', type: 'table', value: [['x', 'y', 'z']] }])).docx).document;
    expect(count(plain, '<w:i/>')).toBe(2);
    expect(plain).toContain('<w:tcW w:w="3000" w:type="dxa"/>');
    expect(textOf(plain).replace(/\n+/g, '|')).toContain('a|b|x|y|z');
  });

  it('a w15:repeatingSection gets one item per row, with fresh ids', async () => {
    const item = (id: string) =>
      sdt(
        `<w:id w:val="${id}"/><w15:repeatingSectionItem/>`,
        `<w:tr><w:tc>${para(sdt('<w:id w:val="31"/><w:text/>', run('code')))}</w:tc><w:tc>${para(run('desc'))}</w:tc></w:tr>`,
      );
    const body = `<w:tbl><w:tblPr/><w:tblGrid><w:gridCol w:w="2000"/><w:gridCol w:w="2000"/></w:tblGrid>${sdt('<w:tag w:val="lines"/><w:id w:val="20"/><w15:repeatingSection/>', item('21'))}</w:tbl>${para('')}`;
    const doc = unpack(
      (
        await annotateDocx(makeDocx({ body }), [
          {
            id: 'lines',
            type: 'table',
            value: [
              ['A', 'Apple'],
              ['B', 'Banana'],
              ['C', 'Cherry'],
            ],
          },
        ])
      ).docx,
    ).document;
    expect(count(doc, '<w15:repeatingSectionItem/>')).toBe(3);
    expect(textOf(doc).replace(/\n+/g, '|')).toContain('A|Apple|B|Banana|C|Cherry');
    const ids = [...doc.matchAll(/<w:id w:val="(-?\d+)"\/>/g)].map((m) => m[1]);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('a placeholder outside any table becomes a new table', async () => {
    const doc = unpack(
      (
        await annotateDocx(makeDocx({ body: para(run('{{rows}}')) }), [
          {
            id: 'rows',
            type: 'table',
            value: [
              ['1', '2'],
              ['3', '4'],
            ],
          },
        ])
      ).docx,
    ).document;
    expect(count(doc, '<w:tbl>')).toBe(1);
    expect(count(doc, '<w:tr>')).toBe(2);
  });
});

describe('html and links', () => {
  it('converts HTML into the block control, merging numbering and styles', async () => {
    const body = sdt('<w:tag w:val="terms"/><w:id w:val="1"/>', para(run('x')));
    const { docx } = await annotateDocx(makeDocx({ body }), [
      {
        id: 'terms',
        type: 'html',
        value:
          '<h2>Terms</h2><p>Pay in <b>30</b> days <a href="https://example.com/t">here</a></p><ol><li>one</li><li>two</li></ol><script>alert(1)</script>',
      },
    ]);
    const u = unpack(docx);
    expect(textOf(u.document)).toContain('Pay in 30 days here');
    expect(u.document).not.toContain('alert');
    const numId = /<w:numId w:val="(\d+)"\/>/.exec(u.document)![1];
    expect(u.part('word/numbering.xml')).toContain(`<w:num w:numId="${numId}">`);
    expect(u.part('word/_rels/document.xml.rels')).toMatch(/Target="https:\/\/example.com\/t" TargetMode="External"/);
    expect(u.part('word/styles.xml')).toContain('w:styleId="Heading2"');
    expect(u.part('[Content_Types].xml')).toContain('/word/numbering.xml');
  });

  it('HTML footnotes with a link and a picture: the footnotes part declares their prefixes and holds their relationships', async () => {
    const html =
      '<p>See<sup class="footnote-ref"><a href="#fn1" id="fnref1">[1]</a></sup></p><section class="footnotes"><ol class="footnotes-list">' +
      `<li id="fn1" class="footnote-item"><p>Chart <img src="${PNG_URI}" alt="c"> from <a href="https://example.com/src">the source</a></p></li></ol></section>`;
    // A template without a footnotes part, and one whose footnotes part declares no drawing prefixes.
    for (const template of [makeDocx({ body: para(run('{{h}}')) }), makeDocx({ body: para(run('{{h}}')), footnotes: '' })]) {
      const { docx } = await annotateDocx(template, [{ id: 'h', type: 'html', value: html }]);
      const u = unpack(docx);
      const notes = u.part('word/footnotes.xml');
      expect(notes).toContain('<wp:inline');
      const root = /<w:footnotes\b[^>]*>/.exec(notes)![0];
      for (const prefix of ['w', 'r', 'wp', 'a', 'pic']) expect(root).toContain(`xmlns:${prefix}=`);
      const ids = [...notes.matchAll(/r:(?:id|embed)="([^"]+)"/g)].map((m) => m[1]!);
      expect(ids.length).toBe(2);
      const rels = u.part('word/_rels/footnotes.xml.rels');
      for (const id of ids) expect(rels).toContain(`Id="${id}"`);
      expect(rels).toContain('Target="https://example.com/src" TargetMode="External"');
    }
  });

  it("HTML inside a sentence stays inline in the field's formatting", async () => {
    const { docx } = await annotateDocx(makeDocx({ body: para(run('A {{h}} B', '<w:sz w:val="30"/>')) }), [
      { id: 'h', type: 'html', value: '<i>x</i>' },
    ]);
    const p = paragraphWith(unpack(docx).document, 'x')!;
    expect(textOf(p).trim()).toBe('A x B');
    expect(p).toMatch(/<w:i\/>.*<w:sz w:val="30"\/>.*<w:t[^>]*>x<\/w:t>/);
  });

  it('link: a hyperlink relationship and a styled run; javascript: is refused', async () => {
    const { docx } = await annotateDocx(makeDocx({ body: para(run('See {{l}}')) }), [
      { id: 'l', type: 'link', value: { url: 'example.com/a?b=1&c=2', text: 'our site' } },
    ]);
    const u = unpack(docx);
    const id = /<w:hyperlink r:id="([^"]+)"/.exec(u.document)![1];
    expect(u.part('word/_rels/document.xml.rels')).toContain(
      `Id="${id}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink" Target="http://example.com/a?b=1&amp;c=2" TargetMode="External"`,
    );
    expect(textOf(u.document)).toContain('See our site');
    await expect(
      annotateDocx(makeDocx({ body: para(run('{{l}}')) }), [{ id: 'l', type: 'link', value: { url: 'javascript:alert(1)' } }]),
    ).rejects.toMatchObject({
      status: 422,
      details: [{ field: 'fields[0].value.url' }],
    });
  });
});

describe('schema order', () => {
  it("run properties built from the field's formatting stay in CT_RPr order", async () => {
    const styles = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/></w:style></w:styles>`;
    const { docx } = await annotateDocx(makeDocx({ body: para(run('{{l}}', '<w:b/><w:sz w:val="28"/><w:lang w:val="fr-FR"/>')), styles }), [
      { id: 'l', type: 'link', value: { url: 'https://example.com', text: 'site' } },
    ]);
    const u = unpack(docx);
    expect(u.document).toContain(
      '<w:rPr><w:rStyle w:val="Hyperlink"/><w:b/><w:color w:val="0563C1"/><w:sz w:val="28"/><w:u w:val="single"/><w:lang w:val="fr-FR"/></w:rPr>',
    );
    // The template had no Hyperlink style: it was added.
    expect(u.part('word/styles.xml')).toContain('w:styleId="Hyperlink"');
  });
});

describe('report and strict mode', () => {
  it('lists unmatched request ids and unfilled template fields; strict turns unmatched into a 422', async () => {
    const docx = makeDocx({ body: para(run('{{a}} {{b}}')) + para(sdt('<w:alias w:val="Title"/><w:id w:val="3"/>', run('t'))) });
    const { report } = await annotateDocx(docx, [
      { id: 'a', type: 'text', value: '1' },
      { id: 'zzz', type: 'text', value: '2' },
    ]);
    expect(report.unmatched).toEqual(['zzz']);
    expect(report.unfilled).toEqual(['b', 'Title']);
    const err = await annotateDocx(docx, [{ id: 'zzz', type: 'text', value: '2' }], { strict: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FolioError);
    expect(err).toMatchObject({
      status: 422,
      code: 'VALIDATION_ERROR',
      details: [{ field: 'fields[0].id', issue: 'matches no field in the template' }],
    });
  });

  it('duplicate ids in the template are all filled; a duplicate in the request is reported and the last one wins', async () => {
    const docx = makeDocx({
      body: para(sdt('<w:tag w:val="n"/><w:id w:val="1"/>', run('x'))) + para(sdt('<w:tag w:val="n"/><w:id w:val="2"/>', run('y'))),
    });
    const { docx: out, report } = await annotateDocx(docx, [
      { id: 'n', type: 'text', value: 'first' },
      { id: 'n', type: 'text', value: 'second' },
    ]);
    expect(report.filled).toEqual([{ id: 'n', type: 'text', occurrences: 2 }]);
    expect(report.warnings[0]).toMatch(/fields\[0\] and fields\[1\] both target id "n"/);
    expect(count(textOf(unpack(out).document), 'second')).toBe(2);
  });

  it('names the field of an unusable value', async () => {
    const docx = makeDocx({ body: para(run('{{a}}')) });
    const cases: Array<[unknown, string, unknown]> = [
      ['image', 'fields[0].value', 'bm90IGFuIGltYWdl'],
      ['image', 'fields[0].value', { url: 'x' }],
      ['date', 'fields[0].value', '2024-02-30'],
      ['checkbox', 'fields[0].value', 'yes'],
      ['table', 'fields[0].value[1]', [['a'], 'b']],
      ['text', 'fields[0].value', { a: 1 }],
    ];
    for (const [type, field, value] of cases) {
      const err = await annotateDocx(docx, [{ id: 'a', type: type as 'text', value }]).catch((e: unknown) => e);
      expect(err, `${type} ${JSON.stringify(value)}`).toMatchObject({ status: 422, code: 'VALIDATION_ERROR', details: [{ field }] });
    }
  });
});

describe('empty values', () => {
  it('empty HTML or text leaves a valid paragraph in a cell', async () => {
    const body = `<w:tbl><w:tblPr/><w:tblGrid><w:gridCol w:w="3000"/></w:tblGrid><w:tr><w:tc>${sdt('<w:tag w:val="h"/><w:id w:val="1"/>', para(run('x')))}</w:tc><w:tc>${para(run('{{t}}'))}</w:tc></w:tr></w:tbl>${para('')}`;
    const { docx } = await annotateDocx(makeDocx({ body }), [
      { id: 'h', type: 'html', value: '' },
      { id: 't', type: 'html', value: '   ' },
    ]);
    const doc = unpack(docx).document;
    for (const tc of doc.match(/<w:tc>.*?<\/w:tc>/gs)!) expect(tc).toMatch(/<w:p[ >/]/);
  });
});

describe('text into a block control that holds a table', () => {
  it('writes into the first cell and keeps the table', async () => {
    const body =
      sdt(
        '<w:tag w:val="box"/><w:id w:val="1"/>',
        `<w:tbl><w:tblPr/><w:tblGrid><w:gridCol w:w="3000"/></w:tblGrid><w:tr><w:tc>${para(run('a'))}</w:tc></w:tr></w:tbl>${para(run('after'))}`,
      ) + para('');
    const doc = unpack((await annotateDocx(makeDocx({ body }), [{ id: 'box', type: 'text', value: 'inside' }])).docx).document;
    expect(doc).toMatch(/<w:sdtContent><w:tbl>.*<w:t xml:space="preserve">inside<\/w:t>.*<\/w:tbl><\/w:sdtContent>/s);
    expect(textOf(doc)).not.toContain('after');
  });
});

describe('crafted paragraphs', () => {
  it('a paragraph with thousands of placeholders in thousands of runs is refused, not ground through', async () => {
    const docx = makeDocx({ body: para(Array.from({ length: 1500 }, () => run('{{a}} ')).join('')) });
    await expect(annotateDocx(docx, [{ id: 'a', type: 'text', value: 'v' }])).rejects.toMatchObject({ code: 'UNPROCESSABLE_DOCUMENT', status: 422 });
    // Hundreds are fine.
    const ok = await annotateDocx(makeDocx({ body: para(Array.from({ length: 300 }, () => run('{{a}} ')).join('')) }), [
      { id: 'a', type: 'text', value: 'v' },
    ]);
    expect(ok.report.filled).toEqual([{ id: 'a', type: 'text', occurrences: 300 }]);
  });
});
