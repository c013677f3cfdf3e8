/**
 * Waiting for a LibreOffice worker is bounded like converting is: a request queued behind slow documents
 * for longer than one conversion budget is answered 503 with Retry-After, and a queued request whose client
 * went away leaves the queue at once. The pool reports a worker being replaced as starting (degraded, not
 * unhealthy), so a load balancer keeps the instance during a routine replacement.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OfficePool, minimalDocx } from '../../src/office/index.js';
import { FolioError } from '../../src/errors.js';
import { slowDocx } from './fixtures.js';

const rejection = (p: Promise<unknown>) =>
  p.then(
    () => new Error('expected a rejection'),
    (e: unknown) => e,
  );

describe('office pool: the queue is bounded in time', () => {
  let pool: OfficePool;
  beforeAll(async () => {
    pool = new OfficePool({ workers: 1, queueSize: 8, timeoutMs: 4_000 });
    await pool.start();
  }, 180_000);
  afterAll(() => pool?.close());

  it('a request queued behind a conversion past its budget gets 503 after one budget of waiting', async () => {
    const slow = rejection(pool.docxToPdf(slowDocx()));
    for (let i = 0; i < 200 && pool.status().busy === 0; i++) await new Promise((r) => setTimeout(r, 20));
    const queued = rejection(pool.docxToPdf(minimalDocx('queued')));
    expect(pool.status().queued).toBe(1);
    const [first, second] = await Promise.all([slow, queued]);
    expect(first).toBeInstanceOf(FolioError);
    expect(`${(first as FolioError).code}: ${(first as FolioError).message}`).toMatch(/^CONVERSION_TIMEOUT/);
    expect(second).toBeInstanceOf(FolioError);
    expect((second as FolioError).code).toBe('SERVICE_UNAVAILABLE');
    expect((second as FolioError).retryAfter).toBeGreaterThanOrEqual(1);
    expect(pool.status().queued).toBe(0);
    // While the timed-out worker is replaced the pool is degraded, never unhealthy.
    expect(pool.status().status).not.toBe('unhealthy');
    await pool.whenReady();
    const pdf = await pool.docxToPdf(minimalDocx('after'));
    expect(Buffer.from(pdf.subarray(0, 5)).toString('latin1')).toBe('%PDF-');
  }, 180_000);

  it('a queued request whose signal aborts leaves the queue at once with 503', async () => {
    await pool.whenReady();
    const slow = rejection(pool.docxToPdf(slowDocx()));
    for (let i = 0; i < 200 && pool.status().busy === 0; i++) await new Promise((r) => setTimeout(r, 20));
    const controller = new AbortController();
    const queued = rejection(pool.docxToPdf(minimalDocx('abandoned'), {}, { signal: controller.signal }));
    expect(pool.status().queued).toBe(1);
    controller.abort();
    const e = await queued;
    expect(e).toBeInstanceOf(FolioError);
    expect((e as FolioError).code).toBe('SERVICE_UNAVAILABLE');
    expect((e as FolioError).message).toMatch(/abandoned/);
    expect(pool.status().queued).toBe(0);
    await slow;
  }, 180_000);
});
