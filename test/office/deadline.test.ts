/**
 * The request's one deadline reaches the office pool (issue 23): waiting for a worker and the conversion draw
 * from it, so a spent budget is a 504 whatever OFFICE_TIMEOUT_MS says, and LibreOffice is stopped as on a
 * timeout. Page renders take their turns from the same admission (acquireRenderSlot): with one worker, a
 * render holding the turn keeps a conversion queued until it is released.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Deadline } from '../../src/budget/index.js';
import { FolioError } from '../../src/errors.js';
import { OfficePool, minimalDocx } from '../../src/office/index.js';
import { slowDocx } from './fixtures.js';

const rejection = (p: Promise<unknown>) =>
  p.then(
    () => new Error('expected a rejection'),
    (e: unknown) => e,
  );
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('office pool: the request deadline and the shared admission', () => {
  let pool: OfficePool;
  beforeAll(async () => {
    // A conversion budget far beyond the deadlines used here: only the deadline can end these jobs.
    pool = new OfficePool({ workers: 1, queueSize: 8, timeoutMs: 120_000 });
    await pool.start();
  }, 180_000);
  afterAll(() => pool?.close());

  it('a deadline already spent is a 504 before anything is queued', async () => {
    const deadline = Deadline.after(0);
    const e = await rejection(pool.docxToPdf(minimalDocx('late'), {}, { deadline }));
    expect(e).toBeInstanceOf(FolioError);
    expect((e as FolioError).code).toBe('CONVERSION_TIMEOUT');
    expect(pool.status().queued).toBe(0);
  });

  it('a conversion longer than what is left of the deadline is a 504 and its worker is replaced', async () => {
    await pool.whenReady();
    const restarts = pool.status().restarts;
    const t0 = performance.now();
    const e = await rejection(pool.docxToPdf(slowDocx(), {}, { deadline: Deadline.after(2_000) }));
    const ms = performance.now() - t0;
    expect(e).toBeInstanceOf(FolioError);
    expect((e as FolioError).code).toBe('CONVERSION_TIMEOUT');
    expect((e as FolioError).message).toMatch(/time budget \(during the PDF conversion\)/);
    // Generous: the 120 s conversion budget did not apply.
    expect(ms).toBeLessThan(30_000);
    await pool.whenReady();
    expect(pool.status().restarts).toBeGreaterThan(restarts);
    const pdf = await pool.docxToPdf(minimalDocx('after'));
    expect(Buffer.from(pdf.subarray(0, 5)).toString('latin1')).toBe('%PDF-');
  }, 180_000);

  it('a render holding the only turn keeps a conversion queued; waiting draws from the deadline (504)', async () => {
    await pool.whenReady();
    const release = await pool.acquireRenderSlot();
    expect(pool.status().renders).toBe(1);
    const late = rejection(pool.docxToPdf(minimalDocx('queued'), {}, { deadline: Deadline.after(500) }));
    await sleep(50);
    expect(pool.status().queued).toBe(1);
    const e = await late;
    expect((e as FolioError).code).toBe('CONVERSION_TIMEOUT');
    expect((e as FolioError).message).toMatch(/waiting for a conversion worker/);
    // Once the render gives its turn back, the next conversion runs.
    const next = pool.docxToPdf(minimalDocx('next'));
    await sleep(50);
    expect(pool.status().queued).toBe(1);
    release();
    release(); // a second release is a no-op
    expect(pool.status().renders).toBe(0);
    const pdf = await next;
    expect(Buffer.from(pdf.subarray(0, 5)).toString('latin1')).toBe('%PDF-');
  }, 60_000);

  it('a render waits behind a running conversion, and its wait draws from its deadline', async () => {
    await pool.whenReady();
    const converting = rejection(pool.docxToPdf(slowDocx(), {}, { deadline: Deadline.after(3_000) }));
    for (let i = 0; i < 200 && pool.status().busy === 0; i++) await sleep(10);
    const e = await rejection(pool.acquireRenderSlot({ deadline: Deadline.after(300) }));
    expect((e as FolioError).code).toBe('CONVERSION_TIMEOUT');
    expect((e as FolioError).message).toMatch(/waiting for a render slot/);
    expect(((await converting) as FolioError).code).toBe('CONVERSION_TIMEOUT');
    // The stopped worker's turn is free again at once: a render needs no LibreOffice worker.
    const release = await pool.acquireRenderSlot({ deadline: Deadline.after(10_000) });
    expect(pool.status().renders).toBe(1);
    release();
  }, 60_000);
});
