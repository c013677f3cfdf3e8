/** POST /v1/convert docx→pdf and /v1/health over real HTTP, with a real one-worker LibreOffice pool. */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { minimalDocx, type OfficePool } from '../../src/office/index.js';
import { authed, startTestApi, type TestApi } from '../helpers/api.js';
import { BROKEN_CORPUS_FILES, CORPUS_DOCX, pdfText } from './helpers.js';
import { slowDocx } from './fixtures.js';
import { SMALL_PDF, zipBomb, zipWithoutWordParts } from './bad-input.js';

function form(name: string, content: Uint8Array | string): FormData {
  const fd = new FormData();
  fd.append('file', new Blob([content as BlobPart]), name);
  return fd;
}

const convert = (api: TestApi, query: string, name: string, content: Uint8Array | string) =>
  fetch(`${api.url}/v1/convert${query}`, authed(api, { method: 'POST', body: form(name, content) }));

async function expectEnvelope(res: Response, status: number | [number, number], code?: string) {
  const body = (await res.json()) as { code: string; message: string; requestId: string };
  if (Array.isArray(status)) {
    expect(res.status).toBeGreaterThanOrEqual(status[0]);
    expect(res.status).toBeLessThanOrEqual(status[1]);
  } else expect(res.status).toBe(status);
  if (code) expect(body.code).toBe(code);
  expect(body.message).toBeTruthy();
  expect(body.requestId).toBeTruthy();
  return body;
}

describe('docx→pdf over HTTP (default queue)', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi({ office: true });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('reports the office engine in /v1/health', async () => {
    const res = await fetch(`${api.url}/v1/health`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { engines: Record<string, unknown> };
    expect(body.engines.office).toEqual({ status: 'healthy', workers: 1, busy: 0, queued: 0 });
  });

  it('converts a DOCX to PDF with the input name', async () => {
    const res = await convert(api, '?from=docx&to=pdf', 'Quarterly report.docx', minimalDocx('Quarterly figures'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="Quarterly report.pdf"');
    expect(pdfText(new Uint8Array(await res.arrayBuffer()))).toContain('Quarterly figures');
  });

  it('passes trackedChanges, pdfa and tagged to the engine', async () => {
    const docx = new Uint8Array(fs.readFileSync(`${CORPUS_DOCX}/pandoc--track_changes_deletion.docx`));
    const accepted = await convert(api, '?to=pdf&trackedChanges=accept&pdfa=2b&tagged=true', 'changes.docx', docx);
    expect(accepted.status).toBe(200);
    const pdf = new Uint8Array(await accepted.arrayBuffer());
    expect(pdfText(pdf)).not.toContain('excessively modified');
    const raw = Buffer.from(pdf).toString('latin1');
    expect(raw).toMatch(/pdfaid:part(="|>)2/);
    expect(raw).toContain('/StructTreeRoot');
  });

  it('converts Markdown and HTML to PDF through the same engine', async () => {
    const md = await convert(api, '?from=md&to=pdf', 'notes.md', '# Title here\n\n1. first\n2. second\n');
    expect(md.status).toBe(200);
    expect(pdfText(new Uint8Array(await md.arrayBuffer()))).toMatch(/Title here[\s\S]*first[\s\S]*second/);
    const html = await convert(api, '?from=html&to=pdf', 'page.html', '<h1>Web title</h1><p>para text</p>');
    expect(html.status).toBe(200);
    expect(pdfText(new Uint8Array(await html.arrayBuffer()))).toContain('para text');
  });

  it('lets one key’s 10 admitted requests wait in the queue rather than fail', async () => {
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => convert(api, '?from=docx&to=pdf', `n${i}.docx`, minimalDocx(`concurrent ${i}`))),
    );
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    for (const [i, r] of results.entries()) expect(pdfText(new Uint8Array(await r.arrayBuffer()))).toContain(`concurrent ${i}`);
  });

  it.each<[string, string, () => Uint8Array | Promise<Uint8Array>, number | [number, number], string?]>([
    ['an empty file', 'empty.docx', () => new Uint8Array(0), 400, 'INVALID_FILE_FORMAT'],
    ['a PDF sent as docx', 'doc.docx', () => SMALL_PDF, 400, 'INVALID_FILE_FORMAT'],
    ['a ZIP without Word parts', 'x.docx', zipWithoutWordParts, 400, 'INVALID_FILE_FORMAT'],
    ['a 1 GB zip bomb', 'bomb.docx', () => zipBomb(), 422, 'UNPROCESSABLE_DOCUMENT'],
    ...BROKEN_CORPUS_FILES.map(
      (f) =>
        [`corpus ${f}`, f, () => new Uint8Array(fs.readFileSync(`${CORPUS_DOCX}/${f}`)), [400, 422] as [number, number]] as [
          string,
          string,
          () => Uint8Array,
          [number, number],
        ],
    ),
  ])('%s gets a clear 4xx envelope', async (_label, name, make, status, code) => {
    const res = await convert(api, '?from=docx&to=pdf', name, await make());
    await expectEnvelope(res, status, code);
  });

  it('answers 422 UNPROCESSABLE_DOCUMENT for an encrypted DOCX, with or without ?from', async () => {
    const encrypted = new Uint8Array(fs.readFileSync(`${CORPUS_DOCX}/poi--bug53475-password-is-pass.docx`));
    const named = await expectEnvelope(await convert(api, '?from=docx&to=pdf', 'secret.docx', encrypted), 422, 'UNPROCESSABLE_DOCUMENT');
    expect(named.message).toMatch(/encrypt|password/i);
    await expectEnvelope(await convert(api, '', 'secret.docx', encrypted), 422, 'UNPROCESSABLE_DOCUMENT');
  });

  it('converts a .docm (macros inert) and stays healthy after all the bad input', async () => {
    const res = await convert(api, '?from=docx&to=pdf', 'macro.docm', new Uint8Array(fs.readFileSync(`${CORPUS_DOCX}/poi--SimpleMacro.docm`)));
    expect(res.status).toBe(200);
    const health = (await (await fetch(`${api.url}/v1/health`)).json()) as { status: string; engines: { office: { status: string } } };
    expect(health.status).toBe('healthy');
    expect(health.engines.office.status).toBe('healthy');
  });

  it('a worker SIGKILLed mid-conversion gives that request an error envelope; the next request succeeds', async () => {
    const pool = api.services.office as OfficePool;
    const [pid] = pool.workerPids();
    const inFlight = convert(api, '?from=docx&to=pdf', 'slow.docx', slowDocx());
    const deadline = Date.now() + 20_000;
    while (pool.status().busy === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(pool.status().busy).toBe(1);
    process.kill(pid!, 'SIGKILL');
    await expectEnvelope(await inFlight, 500, 'INTERNAL_ERROR');
    const next = await convert(api, '?from=docx&to=pdf', 'after.docx', minimalDocx('served after the kill'));
    expect(next.status).toBe(200);
    expect(pdfText(new Uint8Array(await next.arrayBuffer()))).toContain('served after the kill');
    expect(pool.workerPids()[0]).not.toBe(pid);
  });
});

describe('docx→pdf over HTTP (saturated queue)', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi({ office: true, env: { OFFICE_QUEUE_SIZE: '1' } });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('answers 503 SERVICE_UNAVAILABLE with Retry-After beyond the queue, while admitted requests succeed', async () => {
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) => convert(api, '?from=docx&to=pdf', `q${i}.docx`, minimalDocx(`queued ${i}`))),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(2);
    const refused = results.filter((r) => r.status === 503);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const r of refused) {
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      await expectEnvelope(r, 503, 'SERVICE_UNAVAILABLE');
    }
  });
});
