/**
 * Tables wider than Word's 63 columns in Markdown/HTML → DOCX (issue 23): they used to be cut at column 63
 * with nothing said. Now every column is kept — written as several tables of at most 63 columns one below
 * the other — and the answer's X-Folio-Warnings says so; past MAX_SOURCE_COLUMNS cells are dropped and
 * counted. In-process for the layout, over real HTTP for the headers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { strFromU8, unzipSync } from 'fflate';
import { htmlToDocxWithWarnings, markdownToDocxWithWarnings } from '../../src/convert/index.js';
import { MAX_SOURCE_COLUMNS, MAX_TABLE_COLUMNS } from '../../src/docx/wordml/table.js';
import { authed, startTestApi, type TestApi } from '../helpers/api.js';

const documentXml = (docx: Uint8Array) => strFromU8(unzipSync(docx)['word/document.xml']!);

/** The top-level tables of a body in order: grid column count and the cell texts of each row. */
function tables(xml: string): Array<{ gridCols: number; rows: string[][] }> {
  const out: Array<{ gridCols: number; rows: string[][] }> = [];
  for (const t of xml.match(/<w:tbl>[\s\S]*?<\/w:tbl>/g) ?? []) {
    const gridCols = (t.match(/<w:gridCol /g) ?? []).length;
    const rows = (t.match(/<w:tr>[\s\S]*?<\/w:tr>/g) ?? []).map((r) =>
      (r.match(/<w:tc>[\s\S]*?<\/w:tc>/g) ?? []).map((c) => [...c.matchAll(/<w:t(?: [^>]*)?>([^<]*)<\/w:t>/g)].map((m) => m[1]).join('')),
    );
    out.push({ gridCols, rows });
  }
  return out;
}

const mdRow = (n: number, f: (i: number) => string) => `| ${Array.from({ length: n }, (_, i) => f(i)).join(' | ')} |`;
const mdTable = (n: number) =>
  [mdRow(n, (i) => `H${i + 1}`), mdRow(n, () => '---'), mdRow(n, (i) => `c${i + 1}`), mdRow(n, (i) => `d${i + 1}`)].join('\n');

describe('Markdown → DOCX: a table wider than 63 columns', () => {
  it('100 columns: two tables (63 + 37 columns), every cell kept in order, and a warning naming the table and the split', () => {
    const { docx, warnings } = markdownToDocxWithWarnings(`# Wide\n\nA first small table:\n\n${mdTable(2)}\n\n${mdTable(100)}\n`);
    const xml = documentXml(docx);
    const t = tables(xml);
    expect(t.map((x) => x.gridCols)).toEqual([2, MAX_TABLE_COLUMNS, 37]);
    const [, a, b] = t;
    expect(a!.rows[0]).toEqual(Array.from({ length: 63 }, (_, i) => `H${i + 1}`));
    expect(b!.rows[0]).toEqual(Array.from({ length: 37 }, (_, i) => `H${i + 64}`));
    expect(a!.rows[2]![62]).toBe('d63');
    expect(b!.rows[2]).toEqual(Array.from({ length: 37 }, (_, i) => `d${i + 64}`));
    // Both parts keep the header row (repeated at the top of each page).
    for (const part of xml.match(/<w:tbl>[\s\S]*?<\/w:tbl>/g)!.slice(1)) expect(part).toContain('<w:tblHeader/>');
    // A paragraph between the parts, so Word does not join them back into one 100-column table.
    expect(xml).toMatch(/<\/w:tbl><w:p>(?:(?!<w:tbl>).)*<\/w:p><w:tbl>/);
    expect(warnings).toEqual(['table 2: its 100 columns (Word allows 63) are written as 2 tables one below the other (columns 1-63, 64-100)']);
  });

  it('63 columns: one table, no warning (as before)', () => {
    const { docx, warnings } = markdownToDocxWithWarnings(mdTable(63));
    expect(tables(documentXml(docx)).map((x) => x.gridCols)).toEqual([63]);
    expect(warnings).toEqual([]);
  });

  it(`past ${MAX_SOURCE_COLUMNS} columns: the extra cells are dropped and counted`, () => {
    const n = MAX_SOURCE_COLUMNS + 10;
    const { docx, warnings } = markdownToDocxWithWarnings(mdTable(n));
    const t = tables(documentXml(docx));
    expect(t).toHaveLength(16);
    expect(t.reduce((s, x) => s + x.gridCols, 0)).toBe(MAX_SOURCE_COLUMNS);
    expect(t[15]!.rows[0]!.at(-1)).toBe(`H${MAX_SOURCE_COLUMNS}`);
    expect(warnings).toContain(`table 1: 30 cells past column ${MAX_SOURCE_COLUMNS} (Folio's limit) were dropped`);
    expect(warnings[0]).toMatch(/^table 1: its first 1008 columns \(Word allows 63\) are written as 16 tables/);
  });
});

describe('a ragged wide table stays bounded', () => {
  it('HTML: a 1,008-column first row over 2,000 one-cell rows: one empty cell per row in each later part, not one per column', () => {
    const html = `<table><tr>${'<td>h</td>'.repeat(MAX_SOURCE_COLUMNS)}</tr>${'<tr><td>x</td></tr>'.repeat(2000)}</table>`;
    const xml = documentXml(htmlToDocxWithWarnings(html).docx);
    // First row: 1,008 cells. Every other row: 63 in the first part (its cell and the padding, as before)
    // and one spanning blank in each of the 15 later parts (not 945 blanks).
    expect((xml.match(/<w:tc>/g) ?? []).length).toBe(MAX_SOURCE_COLUMNS + 2000 * (63 + 15));
  });

  it('Markdown: markdown-it itself fills rows to the header width and ends a table at 65,536 cells', () => {
    const md = `${mdRow(MAX_SOURCE_COLUMNS, (i) => `h${i}`)}\n${mdRow(MAX_SOURCE_COLUMNS, () => '-')}\n${'| x |\n'.repeat(2000)}`;
    const xml = documentXml(markdownToDocxWithWarnings(md).docx);
    expect((xml.match(/<w:tc>/g) ?? []).length).toBeLessThanOrEqual(65_536 + MAX_SOURCE_COLUMNS);
  });
});

describe('HTML → DOCX: a table wider than 63 columns', () => {
  const cells = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i)).join('');

  it('a cell spanning the cut keeps its content in the first part; the next part holds an empty merged cell in its place', () => {
    // Row 2: 61 cells, a 4-column, 2-row span over columns 62–65, then 35 cells (100 columns in all).
    const html =
      `<table><tr>${cells(100, (i) => `<th>H${i + 1}</th>`)}</tr>` +
      `<tr>${cells(61, (i) => `<td>a${i + 1}</td>`)}<td colspan="4" rowspan="2">SPAN</td>${cells(35, (i) => `<td>a${i + 66}</td>`)}</tr>` +
      `<tr>${cells(61, (i) => `<td>b${i + 1}</td>`)}${cells(35, (i) => `<td>b${i + 66}</td>`)}</tr></table>`;
    const { docx, warnings } = htmlToDocxWithWarnings(html);
    const xml = documentXml(docx);
    const t = tables(xml);
    expect(t.map((x) => x.gridCols)).toEqual([63, 37]);
    // First part: 61 cells then SPAN over columns 62–63 (gridSpan 2).
    expect(t[0]!.rows[1]!.slice(-2)).toEqual(['a61', 'SPAN']);
    expect(t[1]!.rows[1]![0]).toBe(''); // the rest of the span: empty
    expect(t[1]!.rows[1]![1]).toBe('a66');
    expect(t[1]!.rows[2]!.slice(0, 2)).toEqual(['', 'b66']);
    const parts = xml.match(/<w:tbl>[\s\S]*?<\/w:tbl>/g)!;
    expect(parts[0]).toMatch(/<w:gridSpan w:val="2"\/><w:vMerge w:val="restart"\/>/);
    expect(parts[1]).toMatch(/<w:gridSpan w:val="2"\/><w:vMerge w:val="restart"\/><\/w:tcPr><w:p\/>/);
    expect(parts[1]).toMatch(/<w:gridSpan w:val="2"\/><w:vMerge\/>/);
    // SPAN is written once.
    expect(xml.match(/>SPAN</g)).toHaveLength(1);
    expect(warnings).toEqual(['table 1: its 100 columns (Word allows 63) are written as 2 tables one below the other (columns 1-63, 64-100)']);
  });

  it('each part is as wide as the text (declared widths kept per part)', () => {
    const { docx } = htmlToDocxWithWarnings(`<table><tr>${cells(70, (i) => `<td>${i}</td>`)}</tr></table>`);
    const xml = documentXml(docx);
    expect((xml.match(/<w:tblW w:w="5000" w:type="pct"\/>/g) ?? []).length).toBe(2);
  });
});

describe('POST /v1/convert: the split is reported in Warning and X-Folio-Warnings', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(async () => {
    await api?.close();
  });

  const post = (query: string, name: string, content: string) => {
    const fd = new FormData();
    fd.append('file', new Blob([content]), name);
    return fetch(`${api.url}/v1/convert${query}`, authed(api, { method: 'POST', body: fd }));
  };

  it('md → docx with a 100-column table: 200, both headers name the table and the parts', async () => {
    const res = await post('?from=md&to=docx', 'wide.md', `${mdTable(100)}\n`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-folio-warnings')).toBe(
      'table 1: its 100 columns (Word allows 63) are written as 2 tables one below the other (columns 1-63, 64-100)',
    );
    expect(res.headers.get('warning')).toMatch(/^299 folio "table 1: its 100 columns/);
    expect(tables(documentXml(new Uint8Array(await res.arrayBuffer()))).map((x) => x.gridCols)).toEqual([63, 37]);
  });

  it('html → docx with a plain table: no warning headers', async () => {
    const res = await post('?from=html&to=docx', 'plain.html', '<table><tr><td>a</td><td>b</td></tr></table>');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-folio-warnings')).toBeNull();
    expect(res.headers.get('warning')).toBeNull();
  });

  it("html → docx with an image it drops: the writer's own warning reaches the answer too", async () => {
    const res = await post('?from=html&to=docx', 'img.html', '<p>x<img src="https://example.com/a.png"></p>');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-folio-warnings')).toMatch(/an image with a non-data URI was dropped/);
  });
});
