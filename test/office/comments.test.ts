/**
 * Word comments in DOCX→PDF (`comments=none|margin|annotations`) against real LibreOffice: what the PDF says
 * and how wide its pages are, the soffice fallback that `annotations` needs (the in-process engine refuses
 * documents with comments), its bounds (time, memory, nothing left in the temp root), and the HTTP option.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { strToU8, zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OfficePool } from '../../src/office/index.js';
import { COLUMN_TWIPS } from '../../src/office/comments-margin.js';
import { convertWithSoffice } from '../../src/office/soffice.js';
import { FolioError } from '../../src/errors.js';
import { authed, startTestApi, type TestApi } from '../helpers/api.js';
import { CORPUS_DOCX, pdfInfo, pdfPages, pdfText } from './helpers.js';

const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
const R = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const WML = 'application/vnd.openxmlformats-officedocument.wordprocessingml';

/**
 * A Letter-size DOCX of `pages` pages (page breaks), with one comment on the first paragraph of page 1 and
 * one, with a reply, on page `pages`. Author and text carry XML specials.
 */
function commentedDocx(pages = 2, adjacent: string[] = []): Uint8Array {
  const body: string[] = [];
  // Optional comments on consecutive paragraphs at the top of page 1 (ids 10, 11, …).
  adjacent.forEach((_, i) =>
    body.push(
      `<w:p><w:commentRangeStart w:id="${10 + i}"/><w:r><w:t>Adjacent paragraph ${i}.</w:t></w:r><w:commentRangeEnd w:id="${10 + i}"/><w:r><w:commentReference w:id="${10 + i}"/></w:r></w:p>`,
    ),
  );
  for (let p = 1; p <= pages; p++) {
    const id = p === 1 ? '0' : p === pages ? '1' : undefined;
    const mark = (s: string) => (id === undefined ? s : `<w:commentRangeStart w:id="${id}"/>${s}<w:commentRangeEnd w:id="${id}"/>`);
    const ref =
      id === undefined ? '' : `<w:r><w:commentReference w:id="${id}"/></w:r>${id === '1' ? '<w:r><w:commentReference w:id="2"/></w:r>' : ''}`;
    body.push(`<w:p>${p > 1 ? '<w:r><w:br w:type="page"/></w:r>' : ''}${mark(`<w:r><w:t>Body paragraph on page ${p}.</w:t></w:r>`)}${ref}</w:p>`);
    for (let i = 0; i < 3; i++) body.push(`<w:p><w:r><w:t>Filler text line ${i} of page ${p}.</w:t></w:r></w:p>`);
  }
  const comment = (id: string, author: string, text: string) =>
    `<w:comment w:id="${id}" w:author="${author}" w:initials="R"><w:p><w:r><w:annotationRef/></w:r><w:r><w:t xml:space="preserve">${text}</w:t></w:r></w:p></w:comment>`;
  const sectPr =
    '<w:sectPr><w:pgSz w:w="12240" w:h="15840"/><w:pgMar w:top="1440" w:right="1440" w:bottom="1440" w:left="1440" w:header="720" w:footer="720" w:gutter="0"/></w:sectPr>';
  return zipSync({
    '[Content_Types].xml': strToU8(
      `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
        `<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>` +
        `<Override PartName="/word/document.xml" ContentType="${WML}.document.main+xml"/><Override PartName="/word/comments.xml" ContentType="${WML}.comments+xml"/></Types>`,
    ),
    '_rels/.rels': strToU8(
      `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${R}/officeDocument" Target="word/document.xml"/></Relationships>`,
    ),
    'word/_rels/document.xml.rels': strToU8(
      `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rIdC" Type="${R}/comments" Target="comments.xml"/></Relationships>`,
    ),
    'word/document.xml': strToU8(
      `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="${W}" xmlns:r="${R}"><w:body>${body.join('')}${sectPr}</w:body></w:document>`,
    ),
    'word/comments.xml': strToU8(
      `<?xml version="1.0" encoding="UTF-8"?><w:comments xmlns:w="${W}">` +
        comment('0', 'Ann &amp; Bo', 'Check &lt;this&gt; opening claim') +
        comment('1', 'Carl', 'Closing remark needs a source') +
        comment('2', 'Ann &amp; Bo', 'Agreed, adding one') +
        adjacent.map((text, i) => comment(String(10 + i), 'Dee', text)).join('') +
        '</w:comments>',
    ),
  });
}

const flat = (s: string) => s.replace(/\s+/g, ' ');
const pageWidth = (pdf: Uint8Array) => Number(/^([\d.]+) x/.exec(pdfInfo(pdf)['Page size']!)![1]);

/** Every word of page 1 with its box (pdftotext -bbox), y growing downwards. */
function wordBoxes(pdf: Uint8Array): Array<{ word: string; yMin: number; yMax: number }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-comments-test-'));
  try {
    fs.writeFileSync(path.join(dir, 'a.pdf'), pdf);
    const html = execFileSync('pdftotext', ['-bbox', '-f', '1', '-l', '1', path.join(dir, 'a.pdf'), '-'], { maxBuffer: 64 << 20 }).toString('utf8');
    return [...html.matchAll(/<word xMin="[\d.]+" yMin="([\d.]+)" xMax="[\d.]+" yMax="([\d.]+)">([^<]*)<\/word>/g)].map((m) => ({
      word: m[3]!,
      yMin: Number(m[1]),
      yMax: Number(m[2]),
    }));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The PDF's objects uncompressed (qpdf --qdf), with UTF-16 hex strings (<FEFF…>) decoded to text. */
function annotationContents(pdf: Uint8Array): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-comments-test-'));
  try {
    fs.writeFileSync(path.join(dir, 'a.pdf'), pdf);
    const qdf = execFileSync('qpdf', ['--qdf', '--object-streams=disable', path.join(dir, 'a.pdf'), '-'], { maxBuffer: 64 << 20 }).toString('latin1');
    return qdf.replace(/<feff((?:[0-9a-f]{4})*)>/gi, (_m, hex: string) => Buffer.from(hex, 'hex').swap16().toString('utf16le'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('comments in DOCX→PDF', () => {
  let pool: OfficePool;
  let tempRoot: string;
  beforeAll(async () => {
    tempRoot = fs.mkdtempSync(path.join(fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), 'folio-comments-pool-'));
    pool = new OfficePool({ workers: 1, queueSize: 8, timeoutMs: 120_000, tempRoot });
    await pool.start();
  });
  afterAll(async () => {
    await pool?.close();
    fs.rmSync(tempRoot, { recursive: true, force: true });
  });

  it('none (the default) leaves the comments out and the page as it was', async () => {
    const pdf = await pool.docxToPdf(commentedDocx(), {});
    const text = flat(pdfText(pdf));
    expect(text).toContain('Body paragraph on page 1.');
    expect(text).not.toContain('opening claim');
    expect(pageWidth(pdf)).toBe(612);
    expect(flat(pdfText(await pool.docxToPdf(commentedDocx(), { comments: 'none' })))).not.toContain('Closing remark');
  });

  it('margin prints each comment beside its page, on a page widened by the comment column', async () => {
    const pdf = await pool.docxToPdf(commentedDocx(3), { comments: 'margin' });
    const pages = pdfPages(pdf).map(flat);
    expect(pages).toHaveLength(3);
    expect(pageWidth(pdf)).toBeCloseTo(612 + COLUMN_TWIPS / 20, 0);
    expect(pages[0]).toContain('Ann & Bo: Check <this> opening claim');
    expect(pages[0]).not.toContain('Closing remark');
    expect(pages[1]).not.toMatch(/Carl|Ann/);
    expect(pages[2]).toContain('Carl: Closing remark needs a source');
    expect(pages[2]).toContain('Ann & Bo: Agreed, adding one');
    // The text area is unchanged: each body line is still whole on its page.
    for (let p = 1; p <= 3; p++) expect(pages[p - 1]).toContain(`Filler text line 2 of page ${p}.`);
    // The comment column lies to the right of the original page edge.
    const layout = pdfPages(pdf)[0]!
      .split('\n')
      .find((l) => l.includes('opening claim'))!;
    expect(layout.indexOf('Ann')).toBeGreaterThan(layout.indexOf('Body paragraph on page 1.') + 'Body paragraph on page 1.'.length);
  });

  it('margin stacks comments whose frames would cover each other', async () => {
    const long = 'This remark is long enough to wrap over several lines of the comment column. '.repeat(3) + 'Endmark.';
    const pdf = await pool.docxToPdf(commentedDocx(1, [long, 'Shortnote']), { comments: 'margin' });
    const words = wordBoxes(pdf);
    const end = words.find((w) => w.word === 'Endmark.')!;
    const next = words.find((w) => w.word === 'Shortnote')!;
    expect(end).toBeDefined();
    expect(next.yMin).toBeGreaterThanOrEqual(end.yMax - 0.5);
  });

  it('margin on a real Word file: comments, multi-paragraph comments and replies', async () => {
    const docx = new Uint8Array(fs.readFileSync(`${CORPUS_DOCX}/pandoc--comments.docx`));
    const margin = flat(pdfText(await pool.docxToPdf(docx, { comments: 'margin' })));
    for (const s of ['I left a comment.', 'This one has multiple paragraphs.', 'See?', 'Do something else.']) expect(margin).toContain(s);
    const none = flat(pdfText(await pool.docxToPdf(docx, { comments: 'none' })));
    expect(none).toContain('I want some text to have a comment on it.');
    expect(none).not.toContain('I left a comment.');
  });

  it('annotations goes through the soffice fallback: comment annotations, no temp files left', async () => {
    const pdf = await pool.docxToPdf(commentedDocx(), { comments: 'annotations' });
    expect(flat(pdfText(pdf))).toContain('Body paragraph on page 2.');
    expect(flat(pdfText(pdf))).not.toContain('opening claim'); // not in the page content: in annotations
    const objects = annotationContents(pdf);
    expect(objects.match(/\/Subtype \/Text/g)?.length ?? 0).toBeGreaterThanOrEqual(2);
    expect(objects).toContain('Closing remark needs a source');
    expect(fs.readdirSync(tempRoot).filter((n) => n.startsWith('folio-soffice-'))).toEqual([]);
  });

  it('the fallback is bounded by the time budget and leaves nothing behind', async () => {
    const quick = new OfficePool({ workers: 1, queueSize: 2, timeoutMs: 1000, tempRoot });
    await quick.start();
    try {
      const e = await quick.docxToPdf(commentedDocx(), { comments: 'annotations' }).then(
        () => undefined,
        (x: unknown) => x,
      );
      expect(e).toBeInstanceOf(FolioError);
      expect((e as FolioError).code).toBe('CONVERSION_TIMEOUT');
    } finally {
      await quick.close();
    }
    expect(fs.readdirSync(tempRoot).filter((n) => n.startsWith('folio-soffice-'))).toEqual([]);
    // Closing a pool also removes the initialised profile the fallback copies.
    expect(fs.readdirSync(tempRoot).filter((n) => n.startsWith('folio-profile-template-'))).toEqual([]);
  });

  it('the fallback process is killed at its memory ceiling, its directory removed', async () => {
    const job = convertWithSoffice(commentedDocx(), { filterOptions: '', timeoutMs: 60_000, maxRssBytes: 40 * 1048576, tempRoot, memoryPollMs: 50 });
    const e = await job.result.then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(FolioError);
    expect((e as FolioError).code).toBe('UNPROCESSABLE_DOCUMENT');
    expect((e as FolioError).message).toContain('memory ceiling');
    expect(fs.readdirSync(tempRoot).filter((n) => n.startsWith('folio-soffice-'))).toEqual([]);
  });
});

describe('comments over HTTP', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi({ office: true });
  });
  afterAll(async () => {
    await api?.close();
  });
  const post = (query: string, fields: Record<string, string> = {}) => {
    const fd = new FormData();
    fd.append('file', new Blob([commentedDocx() as BlobPart]), 'reviewed.docx');
    for (const [k, v] of Object.entries(fields)) fd.append(k, v);
    return fetch(`${api.url}/v1/convert${query}`, authed(api, { method: 'POST', body: fd }));
  };

  it('takes comments as a query parameter or a form field', async () => {
    const q = await post('?to=pdf&comments=margin');
    expect(q.status).toBe(200);
    expect(flat(pdfText(new Uint8Array(await q.arrayBuffer())))).toContain('Closing remark needs a source');
    const f = await post('?to=pdf', { comments: 'none' });
    expect(f.status).toBe(200);
    expect(flat(pdfText(new Uint8Array(await f.arrayBuffer())))).not.toContain('Closing remark');
  });

  it('refuses an unknown mode and annotations with PDF/A', async () => {
    const bad = await post('?to=pdf&comments=balloons');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { code: string }).code).toBe('VALIDATION_ERROR');
    const pdfa = await post('?to=pdf&comments=annotations&pdfa=2b');
    expect(pdfa.status).toBe(400);
    const body = (await pdfa.json()) as { code: string; details: Array<{ field: string }> };
    expect(body.code).toBe('VALIDATION_ERROR');
    expect(body.details[0]!.field).toBe('comments');
  });
});
