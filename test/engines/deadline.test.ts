/**
 * One deadline per request (REQUEST_TIMEOUT_MS) through the real API: a request whose engine job would be
 * allowed longer by ENGINE_TIMEOUT_MS is stopped at the request's own budget, and time spent queueing for a
 * thread is drawn from the same budget, so a queued request cannot wait the queue out and then take a whole
 * engine budget on top.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authed, startTestApi, type TestApi } from '../helpers/api.js';

/** Honest Markdown whose conversion takes several seconds (as in pool.test.ts). */
const slowMarkdown = Array.from({ length: 250_000 }, (_, i) => `Paragraph ${i} with *emphasis* and **strong**.\n`).join('\n');

function convertMd(t: TestApi, markdown: string): Promise<Response> {
  const form = new FormData();
  form.append('file', new Blob([markdown], { type: 'text/markdown' }), 'doc.md');
  return fetch(`${t.url}/v1/convert?from=md&to=docx`, authed(t, { method: 'POST', body: form }));
}

describe('the request deadline bounds engine jobs and queueing', () => {
  let t: TestApi;
  beforeAll(async () => {
    // The engine's own budget (60 s) is far beyond the request's (3 s): only the deadline can end these jobs.
    t = await startTestApi({ env: { ENGINE_WORKERS: '1', ENGINE_TIMEOUT_MS: '60000', REQUEST_TIMEOUT_MS: '3000', ENGINE_QUEUE_SIZE: '4' } });
  });
  afterAll(() => t?.close());

  it('a job longer than the request budget answers 504 naming the request budget, and its thread is replaced', async () => {
    const started = performance.now();
    const res = await convertMd(t, slowMarkdown);
    const elapsed = performance.now() - started;
    expect(res.status).toBe(504);
    const body = await res.json();
    expect(body.code).toBe('CONVERSION_TIMEOUT');
    expect(body.message).toMatch(/3 s time budget/);
    // Far below the 60 s engine budget (upload and the replacement thread's start come on top of the 3 s).
    expect(elapsed).toBeLessThan(30_000);
    const next = await convertMd(t, '# Still here\n');
    expect(next.status).toBe(200);
  }, 60_000);

  it('a request queued behind a slow one spends its own budget waiting: it ends at its deadline, not a job budget later', async () => {
    const first = convertMd(t, slowMarkdown);
    for (let i = 0; i < 500 && t.services.enginePool.status().busy === 0; i++) await new Promise((r) => setTimeout(r, 20));
    const started = performance.now();
    const second = await convertMd(t, slowMarkdown);
    const elapsed = performance.now() - started;
    expect(second.status).toBe(504);
    expect((await second.json()).message).toMatch(/3 s time budget/);
    // Queued for most of its 3 s, then at most what is left: without the shared deadline it would have
    // waited ~3 s and then run for its own 3 s (or, before deadlines, 60 s).
    expect(elapsed).toBeLessThan(5_000);
    expect((await first).status).toBe(504);
    // The thread killed for the deadline was replaced; the next request is served.
    expect((await convertMd(t, '# next\n')).status).toBe(200);
  }, 60_000);
});
