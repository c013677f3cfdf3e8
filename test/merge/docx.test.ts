/**
 * POST /v1/merge with DOCX inputs: converted by the office engine (LibreOffice) first, then merged in the
 * order given with the PDFs; a DOCX that cannot be converted is named by index and file name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { markdownToDocx } from '../../src/convert/index.js';
import { buildZip } from '../support/zip.js';
import { mergeMultipart, pageTexts, pdfinfoPages, qpdfJson, taggedPdf } from './helpers.js';

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

let t: TestApi;
beforeAll(async () => {
  t = await startTestApi({ office: true });
}, 240_000);
afterAll(async () => {
  await t?.close();
});

describe('POST /v1/merge with DOCX inputs', () => {
  it('converts DOCX first and merges mixed inputs in order', async () => {
    const docx = markdownToDocx('# Memo\n\nDocx body text.');
    const res = await mergeMultipart(t, [
      { bytes: await taggedPdf('Alpha', 2), name: 'alpha.pdf' },
      { bytes: docx, name: 'memo.docx', type: DOCX },
      { bytes: await taggedPdf('Omega', 1), name: 'omega.pdf' },
    ]);
    expect(res.status).toBe(200);
    const pdf = new Uint8Array(await res.arrayBuffer());
    expect(pdfinfoPages(pdf)).toBe(4);
    const texts = pageTexts(pdf);
    expect(texts[0]).toContain('Alpha page 1');
    expect(texts[1]).toContain('Alpha page 2');
    expect(texts[2]).toContain('Memo');
    expect(texts[2]).toContain('Docx body text.');
    expect(texts[3]).toContain('Omega page 1');
    expect(qpdfJson(pdf).outlines.map((o) => [o.title, o.destpageposfrom1])).toEqual([
      ['alpha.pdf', 1],
      ['memo.docx', 3],
      ['omega.pdf', 4],
    ]);
  }, 180_000);

  it('names a DOCX that cannot be converted by index and file name', async () => {
    const notDocx = buildZip([{ name: 'hello.txt', data: 'not a word document' }]);
    const res = await mergeMultipart(t, [
      { bytes: await taggedPdf('Alpha', 1), name: 'alpha.pdf' },
      { bytes: new Uint8Array(notDocx), name: 'fake.docx', type: DOCX },
    ]);
    expect([400, 422]).toContain(res.status);
    const body = await res.json();
    expect(body.details[0].field).toBe('documents.1');
    expect(body.details[0].issue).toMatch(/^fake\.docx: /);
  }, 180_000);
});
