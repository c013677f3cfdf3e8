/**
 * Real templates from the corpus (test/fixtures/corpus/templates): the Office résumé template (content controls with
 * placeholder text and data binding), the docx4j data-bound controls, and the python-docx-template `{{ }}`
 * templates whose placeholders are simple names. Every field is filled; the result is re-read to check each
 * value sits where its field was with the field's formatting, and LibreOffice (through ?to=pdf) renders it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { annotateDocx, listTemplateFields, type AnnotateField } from '../../src/annotate/index.js';
import { authed, startTestApi, type TestApi } from '../helpers/api.js';
import { b64, count, pdfImages, pdfText, pngOfSize, TEMPLATES, textOf, unpack } from './helpers.js';

const read = (name: string) => new Uint8Array(fs.readFileSync(path.join(TEMPLATES, name)));
const unescape = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');

/** Runs of a part (no nested runs in these templates), with their rPr and text. */
function runs(xml: string): Array<{ rPr: string; text: string }> {
  return [...xml.matchAll(/<w:r(?:\s[^>]*)?>((?:(?!<\/w:r>).)*)<\/w:r>/gs)].map((m) => ({
    rPr: /<w:rPr>.*?<\/w:rPr>/s.exec(m[1]!)?.[0] ?? '',
    text: [...m[1]!.matchAll(/<w:t(?:\s[^>]*)?>([^<]*)<\/w:t>/g)].map((t) => unescape(t[1]!)).join(''),
  }));
}

/** rPr of the run where `{{ name }}` starts, as the template has it. */
function placeholderRunProps(xml: string, name: string): string | undefined {
  const rs = runs(xml);
  const joined = rs.map((r) => r.text).join('');
  const m = new RegExp(`\\{\\{\\s*${name.replace(/\./g, '\\.')}\\s*\\}\\}`).exec(joined);
  if (!m) return undefined;
  let pos = 0;
  for (const r of rs) {
    if (m.index < pos + r.text.length) return r.rPr;
    pos += r.text.length;
  }
  return undefined;
}

const JINJA = [
  'docxtpl--header_footer_tpl.docx',
  'docxtpl--header_footer_tpl_utf8.docx',
  'docxtpl--footnotes_tpl.docx',
  'docxtpl--get_undeclared_variables.docx',
  'docxtpl--order_tpl.docx',
  'docxtpl--preserve_spaces_tpl.docx',
  'docxtpl--word2016_tpl.docx',
  'docxtpl--escape_tpl.docx',
];

describe('python-docx-template {{ }} templates', () => {
  for (const name of JINJA) {
    it(`${name}: every placeholder filled in its part with its run formatting`, async () => {
      const template = read(name);
      const fields = listTemplateFields(template);
      expect(fields.length).toBeGreaterThan(0);
      const ids = [...new Set(fields.map((f) => f.id!))];
      const valueOf = (id: string) => `Val_${id.replace(/\W/g, '_')}_${id.length}`;
      const { docx, report } = await annotateDocx(
        template,
        ids.map((id) => ({ id, type: 'text', value: valueOf(id) })),
      );
      expect(report.unmatched).toEqual([]);
      expect(report.unfilled).toEqual([]);
      expect(report.filled.map((f) => f.id).sort()).toEqual([...ids].sort());
      const before = unpack(template);
      const after = unpack(docx);
      for (const f of fields) {
        const value = valueOf(f.id!);
        const partXml = after.part(f.part);
        // The value is in the same part (body, header, footer, footnotes) the placeholder was in...
        expect(textOf(partXml), `${f.id} in ${f.part}`).toContain(value);
        expect(textOf(partXml)).not.toMatch(new RegExp(`\\{\\{\\s*${f.id!.replace(/\./g, '\\.')}\\s*\\}\\}`));
        expect(count(textOf(partXml), value)).toBe(fields.filter((x) => x.id === f.id && x.part === f.part).reduce((n, x) => n + x.occurrences, 0));
        // ...carrying the formatting of the run where the placeholder began.
        const expectedRPr = placeholderRunProps(before.part(f.part), f.id!);
        const valueRun = runs(partXml).find((r) => r.text.startsWith(value));
        expect(valueRun, `${f.id} run`).toBeDefined();
        expect(valueRun!.rPr, `${f.id} formatting`).toBe(expectedRPr);
      }
    });
  }

  it('docxtpl--inline_image_tpl.docx and header images: image placeholders become pictures in their part', async () => {
    const img = await pngOfSize(200, 100);
    const occurrences = (id: string) =>
      listTemplateFields(read('docxtpl--inline_image_tpl.docx'))
        .filter((f) => f.id === id)
        .reduce((n, f) => n + f.occurrences, 0);
    const t1 = await annotateDocx(read('docxtpl--inline_image_tpl.docx'), [
      { id: 'myimage', type: 'image', value: b64(img) },
      { id: 'myimageratio', type: 'image', value: b64(img), options: { dimensions: { width: 100 } } },
    ]);
    expect(t1.report.filled).toEqual([
      { id: 'myimage', type: 'image', occurrences: occurrences('myimage') },
      { id: 'myimageratio', type: 'image', occurrences: occurrences('myimageratio') },
    ]);
    expect(occurrences('myimage')).toBeGreaterThan(1); // in text, in a table and in a text box
    const d1 = unpack(t1.docx).document;
    expect(count(d1, '<wp:extent cx="1905000" cy="952500"/>')).toBe(occurrences('myimage'));
    expect(count(d1, '<wp:extent cx="952500" cy="476250"/>')).toBe(occurrences('myimageratio'));
    expect(textOf(d1)).not.toMatch(/\{\{\s*myimage(ratio)?\s*\}\}/);
    const t2 = await annotateDocx(read('docxtpl--header_footer_inline_image_tpl.docx'), [{ id: 'inline_image', type: 'image', value: b64(img) }]);
    const u2 = unpack(t2.docx);
    const headerName = listTemplateFields(read('docxtpl--header_footer_inline_image_tpl.docx')).find((f) => f.id === 'inline_image')!.part;
    const header = u2.part(headerName);
    const relId = /r:embed="([^"]+)"/.exec(header)![1]!;
    const relsName = headerName.replace('word/', 'word/_rels/') + '.rels';
    expect(u2.part(relsName)).toContain(`Id="${relId}"`);
  });
});

describe('the whole template corpus', () => {
  it('every template (error cases included): fields listed, all filled with text, output well-formed', async () => {
    const names = fs.readdirSync(TEMPLATES).filter((f) => /\.(docx|dotx)$/.test(f));
    expect(names.length).toBeGreaterThan(90);
    let withFields = 0;
    for (const name of names) {
      const template = read(name);
      const fields = listTemplateFields(template);
      const ids = [...new Set(fields.map((f) => f.id).filter((x): x is string => !!x))];
      if (ids.length) withFields++;
      const valueOf = (id: string) => `V${ids.indexOf(id)}<&>"`;
      const { docx, report } = await annotateDocx(
        template,
        ids.map((id) => ({ id, type: 'text', value: valueOf(id) })),
      );
      expect(report.unmatched, name).toEqual([]);
      const u = unpack(docx); // every XML part well-formed
      const text = Object.keys(u.files)
        .filter((n) => /^word\/.*\.xml$/.test(n))
        .map((n) => textOf(u.part(n)))
        .join('\n');
      // Placeholder values are all visible (a control's value may be replaced by a nested control's own fill).
      for (const f of fields.filter((x) => x.kind === 'placeholder')) expect(text, `${name} ${f.id}`).toContain(valueOf(f.id!));
    }
    expect(withFields).toBeGreaterThan(20);
  });
});

const squeeze = (xml: string) => xml.replace(/>\s+</g, '><');

/** The control with w:id `id`: its sdtPr and its content, from a (squeezed) part. */
function control(xml: string, id: string): { sdtPr: string; content: string } | undefined {
  const at = xml.indexOf(`<w:id w:val="${id}"/>`);
  if (at < 0) return undefined;
  const prStart = xml.lastIndexOf('<w:sdtPr>', at);
  const prEnd = xml.indexOf('</w:sdtPr>', at);
  const cStart = xml.indexOf('<w:sdtContent>', prEnd);
  // Content up to the matching </w:sdtContent> (controls nest).
  let depth = 0;
  const re = /<w:sdtContent>|<\/w:sdtContent>/g;
  re.lastIndex = cStart;
  let m: RegExpExecArray | null;
  let end = xml.length;
  while ((m = re.exec(xml))) {
    depth += m[0] === '<w:sdtContent>' ? 1 : -1;
    if (depth === 0) {
      end = m.index;
      break;
    }
  }
  return { sdtPr: xml.slice(prStart, prEnd), content: xml.slice(cStart + 14, end) };
}

const firstRunProps = (xml: string) => /<w:r(?:\s[^>]*)?>(<w:rPr>.*?<\/w:rPr>)?/s.exec(xml)?.[1] ?? '';

describe('every field of the content-control templates', () => {
  for (const name of ['poi--ChronologicalResume.dotx', 'docx4j--invoice2013.docx', 'docx4j--binding-simple.docx', 'docx4j--invoice.docx']) {
    it(`${name}: each control holds its value in the formatting of its first run`, async () => {
      const template = read(name);
      const fields = listTemplateFields(template).filter((f) => f.kind === 'control' && f.type !== 'other');
      const img = await pngOfSize(120, 60);
      const valueFor = (f: (typeof fields)[number]): AnnotateField => {
        const id = f.id ?? f.tag ?? f.alias!; // some docx4j controls have no w:id
        switch (f.type) {
          case 'image':
            return { id, type: 'image', value: b64(img) };
          case 'date':
            return { id, type: 'date', value: '2024-06-30' };
          case 'checkbox':
            return { id, type: 'checkbox', value: true };
          case 'table':
            return {
              id,
              type: 'table',
              value: [
                [`T1_${id}`, 'b'],
                [`T2_${id}`, 'd'],
              ],
            };
          default:
            return { id, type: 'text', value: `Val_${id}` };
        }
      };
      // Containers last: a repeating section rebuilds the controls inside it.
      const request = [...fields.filter((f) => f.type !== 'table'), ...fields.filter((f) => f.type === 'table')].map(valueFor);
      const { docx, report } = await annotateDocx(template, request);
      expect(report.unmatched).toEqual([]);
      expect(report.unfilled).toEqual([]);
      const before = squeeze(unpack(template).document);
      const after = squeeze(unpack(docx).document);
      let checked = 0;
      for (const r of request.filter((x) => x.type === 'text')) {
        const now = control(after, r.id!);
        if (!now || !textOf(now.content).includes(r.value as string)) continue; // rebuilt by a container fill
        const was = control(before, r.id!)!;
        let expected = firstRunProps(was.content).replace(/<w:rStyle w:val="PlaceholderText"\/>/, '');
        if (expected === '<w:rPr></w:rPr>') expected = /<w:rPr>.*?<\/w:rPr>/s.exec(was.sdtPr)?.[0] ?? '';
        expect(firstRunProps(now.content), `${r.id} formatting`).toBe(expected);
        expect(now.sdtPr).not.toContain('<w:showingPlcHdr/>');
        checked++;
      }
      expect(checked).toBeGreaterThan(0);
      for (const r of request.filter((x) => x.type === 'table')) expect(textOf(after)).toContain(`T2_${r.id}`);
    });
  }
});

describe('content-control templates', () => {
  it('poi--ChronologicalResume.dotx: every control filled, pStyle kept, placeholders cleared, core property updated', async () => {
    const template = read('poi--ChronologicalResume.dotx');
    const fields = listTemplateFields(template);
    expect(fields.filter((f) => f.kind === 'control').length).toBeGreaterThanOrEqual(18);
    const request: AnnotateField[] = [];
    for (const f of fields) {
      if (f.type === 'text') request.push({ id: f.id!, type: 'text', value: `Res${f.id!.replace('-', 'm')}` });
      else if (f.type === 'table') request.push({ id: f.id!, type: 'table', value: [[`RowA${f.id}`], [`RowB${f.id}`]] });
    }
    const { docx, report } = await annotateDocx(template, request);
    expect(report.unmatched).toEqual([]);
    expect(report.unfilled).toEqual([]);
    // The controls inside the repeating sections were replaced by the rows: reported, not filled.
    const insideSections = report.warnings.filter((w) => /inside content an earlier field replaced/.test(w));
    expect(insideSections.length).toBe(8);
    const doc = unpack(docx);
    const xml = doc.document;
    const templateXml = squeeze(unpack(template).document);
    for (const r of request) {
      if (!report.filled.some((f) => f.id === r.id)) continue;
      // A temporary control (Word removes it once edited) is replaced by its value.
      if (control(templateXml, r.id!)!.sdtPr.includes('<w:temporary/>')) {
        expect(xml, r.id).not.toContain(`<w:id w:val="${r.id}"/>`);
        expect(textOf(xml)).toContain(r.value as string);
        continue;
      }
      // The value sits inside the control with that w:id.
      const at = xml.indexOf(`<w:id w:val="${r.id}"/>`);
      expect(at, r.id).toBeGreaterThan(0);
      const end = xml.indexOf('</w:sdtContent>', at);
      const first = r.type === 'text' ? (r.value as string) : (r.value as string[][])[0]![0]!;
      expect(textOf(xml.slice(at, end > 0 ? xml.length : xml.length)).includes(first), r.id).toBe(true);
      expect(textOf(xml)).toContain(first);
    }
    // Contact lines keep their paragraph style; no control still shows its placeholder.
    const phone = request.find((r) => fields.find((f) => f.id === r.id)?.alias === 'Telephone')!;
    expect(xml).toMatch(
      new RegExp(`<w:pStyle w:val="ContactInfo"/></w:pPr><w:r>(<w:rPr>.*?</w:rPr>)?<w:t xml:space="preserve">${phone.value}</w:t>`),
    );
    for (const r of request.filter((x) => x.type === 'text' && report.filled.some((f) => f.id === x.id))) {
      const at = xml.indexOf(`<w:id w:val="${r.id}"/>`);
      if (at < 0) continue; // a temporary control, gone
      const sdtPr = xml.slice(xml.lastIndexOf('<w:sdtPr>', at), xml.indexOf('</w:sdtPr>', at));
      expect(sdtPr, r.id).not.toContain('<w:showingPlcHdr/>');
    }
    // Inner controls of the repeated items that the one-column rows did not reach keep their placeholder.
    expect(count(xml, '<w:showingPlcHdr/>')).toBeLessThan(count(unpack(template).document, '<w:showingPlcHdr/>'));
    // "Your Name" is bound to dc:creator: the core property now holds the value Word will show.
    const nameField = fields.find((f) => f.alias === 'Your Name')!;
    expect(doc.part('docProps/core.xml')).toContain(`>Res${nameField.id!.replace('-', 'm')}</dc:creator>`);
    expect(doc.part('[Content_Types].xml')).toContain('wordprocessingml.document.main+xml');
  });

  it('docx4j--binding-simple.docx: both bound controls filled and their customXml nodes updated', async () => {
    const { docx, report } = await annotateDocx(read('docx4j--binding-simple.docx'), [
      { id: 'Data value: element', type: 'text', value: 'First <value>' },
      { id: 'Data value: element2', type: 'text', value: 'Second & value' },
    ]);
    expect(report.filled.map((f) => f.occurrences)).toEqual([1, 1]);
    const u = unpack(docx);
    expect(textOf(u.document)).toContain('First <value>');
    expect(u.part('customXml/item1.xml')).toContain('<element1>First &lt;value&gt;</element1><element2>Second &amp; value</element2>');
  });

  it('docx4j--invoice2013.docx: text, date, checkbox, picture and repeating rows of a data-bound invoice', async () => {
    const template = read('docx4j--invoice2013.docx');
    const img = await pngOfSize(300, 300);
    const { docx, report } = await annotateDocx(template, [
      { id: '/invoice[1]/customer[1]/contact[1]', type: 'text', value: 'Grace Hopper' },
      { id: '/invoice[1]/customer[1]/company[1]', type: 'text', value: 'Navy Labs' },
      { id: '/invoice[1]/invoicenumber[1]', type: 'text', value: 'INV-0042' },
      { id: '/invoice[1]/invoicedate[1]', type: 'date', value: '2024-03-15' },
      { id: '/invoice[1]/VAT[1]/@applies', type: 'checkbox', value: true },
      { id: '/invoice[1]/logo[1]', type: 'image', value: b64(img) },
      {
        id: 'w15 repeatingSection /invoice[1]/lines[1]/lineitem[1]',
        type: 'table',
        value: [
          ['P-1', 'Widget', '2', '9.50'],
          ['P-2', 'Gadget', '1', '20.00'],
          ['P-3', 'Gizmo', '7', '1.25'],
        ],
      },
    ]);
    expect(report.unmatched).toEqual([]);
    const u = unpack(docx);
    const text = textOf(u.document);
    for (const v of ['Grace Hopper', 'Navy Labs', 'INV-0042', 'Widget', 'Gadget', 'Gizmo', '☒']) expect(text).toContain(v);
    expect(u.document).toContain('w:fullDate="2024-03-15T00:00:00Z"');
    expect(u.document).toContain('<w14:checked w14:val="1"/>');
    const item = u.part('customXml/item1.xml');
    expect(item).toContain('Grace Hopper');
    expect(item).toContain('INV-0042');
    // The logo control's box is square: a square image fills it.
    expect(u.document).toMatch(/<asvg:svgBlip|<a:blip r:embed="rIdFolio\d+"/);
    expect(count(u.document, '<w15:repeatingSectionItem/>')).toBe(3 + 1); // three line items, the notes item
  });
});

describe('LibreOffice renders the filled templates (POST /v1/annotate?to=pdf)', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi({ office: true });
  });
  afterAll(async () => {
    await api?.close();
  });

  let lastPdf: Uint8Array = new Uint8Array();
  async function toPdf(name: string, fields: AnnotateField[]): Promise<string> {
    const res = await fetch(
      `${api.url}/v1/annotate?to=pdf`,
      authed(api, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ document: { base64: b64(read(name)) }, fields }),
      }),
    );
    const body = (await res.json()) as { document: { base64: string; contentType: string }; report: { unmatched: string[] } };
    expect(res.status, JSON.stringify(body).slice(0, 300)).toBe(200);
    expect(body.document.contentType).toBe('application/pdf');
    expect(body.report.unmatched).toEqual([]);
    const pdf = Buffer.from(body.document.base64, 'base64');
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    lastPdf = pdf;
    return pdfText(pdf);
  }

  it('the Jinja-style template: values in body, header, footer', async () => {
    const text = await toPdf('docxtpl--header_footer_tpl.docx', [
      { id: 'title', type: 'text', value: 'Annual Report Zeta' },
      { id: 'date', type: 'date', value: '2025-01-31' },
      { id: 'company_name', type: 'text', value: 'Folio Widgets Ltd' },
    ]);
    expect(text).toContain('Annual Report Zeta');
    expect(text).toContain('January 31, 2025');
    expect(text).toContain('Folio Widgets Ltd');
    expect(text).not.toMatch(/\{\{\s*(title|date|company_name)/);
    expect(text).toContain('{{p mysubdoc}}'); // a Jinja statement, not a field: left as it was
  });

  it('the footnote template and the order letter', async () => {
    expect(await toPdf('docxtpl--footnotes_tpl.docx', [{ id: 'a_jinja_variable', type: 'text', value: 'Footnote Value Q' }])).toContain(
      'Footnote Value Q',
    );
    const order = await toPdf('docxtpl--order_tpl.docx', [
      { id: 'customer_name', type: 'text', value: 'Mrs Dalloway' },
      { id: 'total_price', type: 'text', value: '123.45' },
      { id: 'company_name', type: 'link', value: { url: 'https://example.com', text: 'Folio Shop' } },
    ]);
    expect(order).toContain('Dear Mrs Dalloway');
    expect(count(order, '123.45')).toBe(2);
    expect(order).toContain('Folio Shop');
  });

  it('the Office content-control résumé and the data-bound invoice', async () => {
    const fields = listTemplateFields(read('poi--ChronologicalResume.dotx'));
    const alias = (a: string) => fields.find((f) => f.alias === a)!.id!;
    const resume = await toPdf('poi--ChronologicalResume.dotx', [
      { id: alias('Your Name'), type: 'text', value: 'Ada Lovelace' },
      { id: alias('Telephone'), type: 'text', value: '+44 20 7946 0000' },
      { id: alias('Email'), type: 'text', value: 'ada@example.org' },
    ]);
    for (const v of ['Ada', 'Lovelace', '+44 20 7946 0000', 'ada@example.org']) expect(resume).toContain(v);
    expect(resume).not.toContain('[Telephone]');
    const invoice = await toPdf('docx4j--invoice2013.docx', [
      { id: '/invoice[1]/customer[1]/contact[1]', type: 'text', value: 'Grace Hopper' },
      { id: '/invoice[1]/invoicedate[1]', type: 'date', value: '2024-03-15' },
      {
        id: 'w15 repeatingSection /invoice[1]/lines[1]/lineitem[1]',
        type: 'table',
        value: [
          ['P-1', 'Widget', '2', '9.50'],
          ['P-2', 'Gadget', '1', '20.00'],
        ],
      },
      { id: '/invoice[1]/terms[1]', type: 'html', value: '<p>Net <b>30</b> days</p>' },
    ]);
    for (const v of ['Grace Hopper', '15 March 2024', 'Widget', 'Gadget', 'Net 30 days']) expect(invoice).toContain(v);
  });

  it('the docx4j data-bound controls', async () => {
    const text = await toPdf('docx4j--binding-simple.docx', [
      { id: 'Data value: element', type: 'text', value: 'Bound value one' },
      { id: 'Data value: element2', type: 'text', value: 'Bound value two' },
    ]);
    expect(text).toContain('Contents of element 1: Bound value one');
    expect(text).toContain('Contents of element 2: Bound value two');
  });

  it('links inside block content controls render as links, not field codes', async () => {
    const fields = listTemplateFields(read('docx4j--hyperlink-binding-test.docx'));
    const text = await toPdf(
      'docx4j--hyperlink-binding-test.docx',
      fields.map((f) => ({ id: f.id!, type: 'link' as const, value: { url: `https://example.org/${f.id}`, text: `Link ${f.id}` } })),
    );
    for (const f of fields) expect(text).toContain(`Link ${f.id}`);
    expect(text).not.toContain('HYPERLINK');
  });

  it('images and a typed signature are drawn in the PDF', async () => {
    const img = await pngOfSize(320, 160);
    const text = await toPdf('docxtpl--header_footer_tpl.docx', [
      { id: 'title', type: 'signature', value: 'Ada Lovelace' },
      { id: 'date', type: 'image', value: b64(img), options: { dimensions: { width: 160 } } },
      { id: 'company_name', type: 'text', value: 'Folio Widgets Ltd' },
    ]);
    expect(text).toContain('Folio Widgets Ltd');
    // pdfimages lists the two pictures (the header one on every page it repeats on is one object).
    const list = pdfImages(lastPdf);
    expect(list.filter((l) => /^\s*\d+\s+\d+\s+image\s+(\d+)\s+(\d+)/.test(l)).length).toBeGreaterThanOrEqual(2);
    expect(list.some((l) => /\s320\s+160\s/.test(l))).toBe(true); // the 320×160 PNG itself
  });
});
