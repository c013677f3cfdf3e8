/**
 * The client leaving reaches LibreOffice (issue 26): a running DOCX → PDF whose request signal aborts is
 * stopped at once — the caller gets 503, the worker process is killed (SIGKILL, as at the time budget) and
 * replaced — so the request queued behind it is served by the replacement instead of waiting for a document
 * nobody will read (before, the abandoned conversion ran to its end, ~15 s for this fixture). Over HTTP the
 * route's abandon signal (src/http/abandon.ts) does the same when the client disconnects mid-conversion.
 *
 * Real LibreOffice; time bounds are generous (the kill itself takes milliseconds).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FolioError } from '../../src/errors.js';
import { OfficePool, minimalDocx } from '../../src/office/index.js';
import { authed, startTestApi, type TestApi } from '../helpers/api.js';
import { pdfText } from './helpers.js';
import { slowDocx } from './fixtures.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
/** Polls until `done()` or `ms` pass; returns the milliseconds it took (Infinity when it never happened). */
async function within(ms: number, done: () => boolean): Promise<number> {
  const t0 = performance.now();
  while (performance.now() - t0 < ms) {
    if (done()) return performance.now() - t0;
    await sleep(20);
  }
  return Infinity;
}
/** Waits until the pool's worker has the conversion, and a little longer so that LibreOffice is inside it. */
async function converting(pool: OfficePool): Promise<void> {
  expect(await within(10_000, () => pool.status().busy === 1)).toBeLessThan(Infinity);
  await sleep(500);
}

describe('office pool: an abandoned conversion frees its worker', () => {
  let pool: OfficePool;
  beforeAll(async () => {
    // A conversion budget far beyond this test: only the abort can end the slow conversion early.
    pool = new OfficePool({ workers: 1, queueSize: 8, timeoutMs: 120_000 });
    await pool.start();
  }, 180_000);
  afterAll(() => pool?.close());

  it('stops the running conversion at once (503), kills its worker, and serves the queued request on the replacement', async () => {
    const [pid] = pool.workerPids();
    const restarts = pool.status().restarts;
    const controller = new AbortController();
    let endedAt = 0;
    const abandoned = pool.docxToPdf(slowDocx(), {}, { signal: controller.signal }).then(
      () => new Error('expected a rejection'),
      (e: unknown) => ((endedAt = performance.now()), e),
    );
    await converting(pool);
    const next = pool.docxToPdf(minimalDocx('served after the abandoned one'));
    expect(pool.status().queued).toBe(1);
    const abortedAt = performance.now();
    controller.abort();
    const e = await abandoned;
    expect(e).toBeInstanceOf(FolioError);
    expect((e as FolioError).code).toBe('SERVICE_UNAVAILABLE');
    expect((e as FolioError).message).toMatch(/abandoned/);
    expect(endedAt - abortedAt).toBeLessThan(2_000);
    // The worker process is gone, not left finishing the document.
    expect(await within(5_000, () => !alive(pid!))).toBeLessThan(5_000);
    // The queued request runs on the replacement worker: it never waited for the abandoned conversion.
    expect(pdfText(await next)).toContain('served after the abandoned one');
    expect(pool.workerPids()).not.toContain(pid);
    expect(pool.status()).toMatchObject({ status: 'healthy', workers: 1, busy: 0, queued: 0, restarts: restarts + 1 });
  }, 120_000);

  it('a signal that aborts after the answer changes nothing', async () => {
    await pool.whenReady();
    const [pid] = pool.workerPids();
    const controller = new AbortController();
    const pdf = await pool.docxToPdf(minimalDocx('kept'), {}, { signal: controller.signal });
    controller.abort();
    await sleep(100);
    expect(pdfText(pdf)).toContain('kept');
    expect(pool.workerPids()).toEqual([pid]);
    expect(alive(pid!)).toBe(true);
  }, 60_000);
});

describe('docx→pdf over HTTP: a client that disconnects frees the worker', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi({ office: true });
  }, 180_000);
  afterAll(async () => {
    await api?.close();
  });

  it('the conversion of a request whose connection closed is stopped and its worker replaced', async () => {
    const pool = api.services.office as OfficePool;
    const [pid] = pool.workerPids();
    const form = new FormData();
    form.append('file', new Blob([slowDocx() as BlobPart]), 'slow.docx');
    const controller = new AbortController();
    const request = fetch(`${api.url}/v1/convert?from=docx&to=pdf`, authed(api, { method: 'POST', body: form, signal: controller.signal })).catch(
      (e: unknown) => e,
    );
    await converting(pool);
    // The client goes away: fetch's abort destroys the socket, the server sees the response close unsent.
    controller.abort();
    expect(await request).toBeInstanceOf(Error);
    expect(await within(5_000, () => !alive(pid!))).toBeLessThan(5_000);
    await pool.whenReady();
    const res = await fetch(`${api.url}/v1/convert?from=docx&to=pdf`, authed(api, { method: 'POST', body: docxForm('after the disconnect') }));
    expect(res.status).toBe(200);
    expect(pdfText(new Uint8Array(await res.arrayBuffer()))).toContain('after the disconnect');
    expect(pool.workerPids()).not.toContain(pid);
  }, 120_000);
});

function docxForm(text: string): FormData {
  const form = new FormData();
  form.append('file', new Blob([minimalDocx(text) as BlobPart]), 'small.docx');
  return form;
}
