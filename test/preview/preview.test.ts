/**
 * Page previews (issue 17): POST /v1/convert?to=png|jpeg over real HTTP — a PDF's pages through poppler, a
 * DOCX through the office engine first; the bounds (width, page count) and the refusals.
 */
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unzipSync } from 'fflate';
import { authed, startTestApi, type TestApi } from '../helpers/api.js';
import { markdownToDocx } from '../../src/convert/index.js';
import { parsePageRanges, splitJpegs, splitPngs } from '../../src/preview/index.js';

/** A minimal PDF of `n` A4 pages (595×842 pt), page k showing "Page k". */
function pdfOfPages(n: number): Uint8Array {
  const objs: string[] = [];
  const kids = Array.from({ length: n }, (_, i) => `${4 + 2 * i} 0 R`).join(' ');
  objs[1] = '<< /Type /Catalog /Pages 2 0 R >>';
  objs[2] = `<< /Type /Pages /Kids [${kids}] /Count ${n} >>`;
  objs[3] = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>';
  for (let i = 0; i < n; i++) {
    const content = `BT /F1 48 Tf 72 700 Td (Page ${i + 1}) Tj ET`;
    objs[4 + 2 * i] = `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + 2 * i} 0 R >>`;
    objs[5 + 2 * i] = `<< /Length ${content.length} >>\nstream\n${content}\nendstream`;
  }
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  for (let i = 1; i < objs.length; i++) {
    offsets[i] = out.length;
    out += `${i} 0 obj\n${objs[i]}\nendobj\n`;
  }
  const xref = out.length;
  out += `xref\n0 ${objs.length}\n0000000000 65535 f \n`;
  for (let i = 1; i < objs.length; i++) out += `${String(offsets[i]).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objs.length} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return new TextEncoder().encode(out);
}

function pngSize(b: Uint8Array): { width: number; height: number } {
  const v = Buffer.from(b);
  expect(v.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  expect(v.toString('latin1', 12, 16)).toBe('IHDR');
  return { width: v.readUInt32BE(16), height: v.readUInt32BE(20) };
}

function form(name: string, content: Uint8Array): FormData {
  const fd = new FormData();
  fd.append('file', new Blob([content as BlobPart]), name);
  return fd;
}

const hasPoppler = spawnSync('pdftoppm', ['-v']).status === 0;

describe('page ranges', () => {
  it('parses lists and ranges, refuses the rest', () => {
    expect(parsePageRanges('1-3,5')).toEqual([1, 2, 3, 5]);
    expect(parsePageRanges('5,1,1')).toEqual([1, 5]);
    expect(parsePageRanges('0')).toBeTypeOf('string');
    expect(parsePageRanges('3-1')).toBeTypeOf('string');
    expect(parsePageRanges('1-60')).toBeTypeOf('string');
    expect(parsePageRanges('a')).toBeTypeOf('string');
    expect(parsePageRanges('1-1000000')).toBeTypeOf('string');
  });
});

describe.skipIf(!hasPoppler)('POST /v1/convert?to=png|jpeg (PDF)', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(async () => {
    await api?.close();
  });
  const post = (query: string, body: FormData) => fetch(`${api.url}/v1/convert${query}`, authed(api, { method: 'POST', body }));

  it("renders a PDF's first page as a PNG of the requested width", async () => {
    const res = await post('?to=png&width=400', form('doc.pdf', pdfOfPages(2)));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="doc.png"');
    const { width, height } = pngSize(new Uint8Array(await res.arrayBuffer()));
    expect(width).toBe(400);
    expect(Math.abs(height - Math.round((400 * 842) / 595))).toBeLessThanOrEqual(1);
  });

  it('renders the default width, 800 px', async () => {
    const res = await post('?to=png', form('doc.pdf', pdfOfPages(1)));
    expect(res.status).toBe(200);
    expect(pngSize(new Uint8Array(await res.arrayBuffer())).width).toBe(800);
  });

  it('answers a ZIP of page-<n>.png for several pages (ranges and lists)', async () => {
    const res = await post('?to=png&width=200&pages=1-2,4', form('doc.pdf', pdfOfPages(5)));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/zip');
    const files = unzipSync(new Uint8Array(await res.arrayBuffer()));
    expect(Object.keys(files).sort()).toEqual(['page-1.png', 'page-2.png', 'page-4.png']);
    for (const f of Object.values(files)) expect(pngSize(f).width).toBe(200);
  });

  it('answers 3 pages as a ZIP of 3 PNGs (options as form fields)', async () => {
    const fd = form('doc.pdf', pdfOfPages(3));
    fd.append('to', 'png');
    fd.append('pages', '1-3');
    const res = await post('', fd);
    expect(res.status).toBe(200);
    const files = unzipSync(new Uint8Array(await res.arrayBuffer()));
    expect(Object.keys(files).sort()).toEqual(['page-1.png', 'page-2.png', 'page-3.png']);
  });

  it('renders JPEG (magic bytes), several as a ZIP of .jpg', async () => {
    const one = await post('?to=jpeg&width=300', form('doc.pdf', pdfOfPages(1)));
    expect(one.status).toBe(200);
    expect(one.headers.get('content-type')).toBe('image/jpeg');
    const b = new Uint8Array(await one.arrayBuffer());
    expect([b[0], b[1], b[2]]).toEqual([0xff, 0xd8, 0xff]);
    expect([b[b.length - 2], b[b.length - 1]]).toEqual([0xff, 0xd9]);
    const many = await post('?to=jpeg&width=300&pages=1-3', form('doc.pdf', pdfOfPages(3)));
    const files = unzipSync(new Uint8Array(await many.arrayBuffer()));
    expect(Object.keys(files).sort()).toEqual(['page-1.jpg', 'page-2.jpg', 'page-3.jpg']);
    for (const f of Object.values(files)) expect(splitJpegs(Buffer.from(f))).toHaveLength(1);
  });

  it.each([
    ['width 5000', '?to=png&width=5000', 'width'],
    ['width 0', '?to=png&width=0', 'width'],
    ['60 pages', '?to=png&pages=1-60', 'pages'],
    ['a backwards range', '?to=png&pages=3-1', 'pages'],
    ['a bad range', '?to=png&pages=1-x', 'pages'],
  ])('refuses %s with 400 VALIDATION_ERROR naming the field', async (_what, query, field) => {
    const res = await post(query, form('doc.pdf', pdfOfPages(1)));
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; details: Array<{ field: string }> };
    expect(body.code).toBe('VALIDATION_ERROR');
    expect(body.details.map((d) => d.field)).toContain(field);
  });

  it('refuses width/pages without a preview target', async () => {
    const res = await post('?to=docx&width=300', form('a.md', new TextEncoder().encode('# x')));
    expect(res.status).toBe(400);
  });

  it('a corrupt PDF → 422', async () => {
    const broken = new TextEncoder().encode('%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 9 0 R >>\nendobj\ngarbage\n%%EOF\n');
    const res = await post('?to=png', form('broken.pdf', broken));
    expect(res.status).toBe(422);
    expect(((await res.json()) as { code: string }).code).toBe('UNPROCESSABLE_DOCUMENT');
  });

  it('pages beyond the document → 422 naming the page count', async () => {
    for (const pages of ['7', '2-7']) {
      const res = await post(`?to=png&pages=${pages}`, form('doc.pdf', pdfOfPages(3)));
      expect(res.status).toBe(422);
      const body = (await res.json()) as { code: string; message: string };
      expect(body.code).toBe('UNPROCESSABLE_DOCUMENT');
      expect(body.message).toContain('3 pages');
    }
  });

  it('splits concatenated images by their structure', () => {
    const r = spawnSync('pdftoppm', ['-png', '-scale-to-x', '50', '-scale-to-y', '-1', '-'], { input: pdfOfPages(3) });
    expect(splitPngs(r.stdout)).toHaveLength(3);
  });
});

const hasSoffice = spawnSync('soffice', ['--version']).status === 0;
describe.skipIf(!hasPoppler || !hasSoffice)('POST /v1/convert?to=png (DOCX, office engine)', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi({ office: true });
  }, 300_000);
  afterAll(async () => {
    await api?.close();
  });

  it('renders a DOCX page as a PNG', async () => {
    const docx = markdownToDocx('# Preview\n\nA paragraph.\n');
    const res = await fetch(`${api.url}/v1/convert?to=png&width=600`, authed(api, { method: 'POST', body: form('report.docx', docx) }));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(pngSize(new Uint8Array(await res.arrayBuffer())).width).toBe(600);
  }, 300_000);
});
