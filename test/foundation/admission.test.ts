/**
 * The in-flight byte budget (src/http/admission.ts) and the one-buffer body reader (src/http/body-buffer.ts)
 * on their own: reservations, the lone-request exception, chunked growth, and bodies that are short, long,
 * too large or cut off. The whole service under a burst is test/chaos/uploads.test.ts.
 */
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { BODY_COPIES, InFlightBudget, reservationFor } from '../../src/http/admission.js';
import { announcedLength, readIntoBuffer } from '../../src/http/body-buffer.js';
import { FolioError } from '../../src/errors.js';

const MB = 1024 * 1024;

describe('InFlightBudget', () => {
  it('admits reservations up to the budget and refuses the one that would cross it', () => {
    const budget = new InFlightBudget(100);
    const a = budget.tryReserve(60)!;
    expect(a.bytes).toBe(60);
    expect(budget.tryReserve(50)).toBeUndefined();
    const b = budget.tryReserve(40)!;
    expect(budget.status()).toMatchObject({ usedBytes: 100, requests: 2, refused: 1 });
    a.release();
    a.release(); // once only
    expect(budget.status()).toMatchObject({ usedBytes: 40, requests: 1 });
    b.release();
    expect(budget.status()).toMatchObject({ usedBytes: 0, requests: 0 });
  });

  it('admits a reservation larger than the whole budget only into an empty service', () => {
    const budget = new InFlightBudget(100);
    const big = budget.tryReserve(500)!;
    expect(big).toBeDefined();
    expect(budget.tryReserve(1)).toBeUndefined();
    big.release();
    const small = budget.tryReserve(1)!;
    expect(budget.tryReserve(500)).toBeUndefined();
    small.release();
  });

  it('grows a chunked body until the budget, and lets a lone request grow past it', () => {
    const budget = new InFlightBudget(100);
    const other = budget.tryReserve(50)!;
    const chunked = budget.tryReserve(10)!;
    expect(chunked.grow(30)).toBe(true);
    expect(chunked.grow(20)).toBe(false);
    expect(chunked.bytes).toBe(40);
    other.release();
    expect(chunked.grow(200)).toBe(true);
    chunked.release();
    expect(budget.status().usedBytes).toBe(0);
  });

  it('refuses with a 503 that carries a Retry-After', () => {
    const err = new InFlightBudget(1).refusal();
    expect(err).toBeInstanceOf(FolioError);
    expect(err.status).toBe(503);
    expect(err.retryAfter).toBeGreaterThanOrEqual(1);
  });

  it('reserves the announced size times the copies of its kind; unannounced bodies start small', () => {
    expect(reservationFor({ 'content-type': 'multipart/form-data; boundary=x', 'content-length': String(24 * MB) }, 40 * MB)).toBe(
      24 * MB * BODY_COPIES.multipart,
    );
    expect(reservationFor({ 'content-type': 'application/json', 'content-length': String(32 * MB) }, 40 * MB)).toBe(32 * MB * BODY_COPIES.json);
    // Above the body limit: refused 413 before reading, so it holds no more than the limit meanwhile.
    expect(reservationFor({ 'content-type': 'application/json', 'content-length': String(900 * MB) }, 40 * MB)).toBe(40 * MB * BODY_COPIES.json);
    expect(reservationFor({ 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, 40 * MB)).toBeLessThan(1 * MB);
  });
});

function chunksOf(buf: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < buf.length; i += size) out.push(buf.subarray(i, i + size));
  return out;
}

describe('readIntoBuffer', () => {
  const body = Buffer.from(Array.from({ length: 100_000 }, (_, i) => i % 251));

  it('fills one buffer of the announced length, chunk by chunk', async () => {
    const got = await readIntoBuffer(Readable.from(chunksOf(body, 7_000)), { length: body.length, limit: MB });
    expect(got.equals(body)).toBe(true);
    expect(got.byteOffset).toBe(0);
    expect(got.buffer.byteLength).toBe(body.length);
  });

  it('joins the chunks once without a length, and counts each as it arrives', async () => {
    const seen: number[] = [];
    const got = await readIntoBuffer(Readable.from(chunksOf(body, 30_000)), { limit: MB, onBytes: (n) => seen.push(n) });
    expect(got.equals(body)).toBe(true);
    expect(seen).toEqual([30_000, 30_000, 30_000, 10_000]);
  });

  it('returns the filled part of a capacity, copied when most of it stayed unused', async () => {
    const near = await readIntoBuffer(Readable.from(chunksOf(body, 9_000)), { capacity: body.length + 300, limit: 4 * MB });
    expect(near.equals(body)).toBe(true);
    const far = await readIntoBuffer(Readable.from(chunksOf(body, 9_000)), { capacity: 3 * MB, limit: 4 * MB });
    expect(far.equals(body)).toBe(true);
    expect(far.buffer.byteLength).toBeLessThan(2 * MB);
  });

  it('refuses an announced length over the limit before reading a byte (413)', async () => {
    const stream = new PassThrough();
    await expect(readIntoBuffer(stream, { length: 2 * MB, limit: MB })).rejects.toMatchObject({ code: 'FILE_TOO_LARGE', status: 413 });
    expect(stream.listenerCount('data')).toBe(0);
  });

  it('reads a refused announced body to its end before refusing it (discardUpTo), so the client can read the answer', async () => {
    const stream = new PassThrough();
    let settled = false;
    const reading = readIntoBuffer(stream, { length: 2 * MB, limit: MB, discardUpTo: 4 * MB }).catch((e: unknown) => {
      settled = true;
      throw e;
    });
    stream.write(Buffer.alloc(MB));
    await new Promise((r) => setTimeout(r, 20));
    expect(settled).toBe(false);
    stream.end(Buffer.alloc(MB));
    await expect(reading).rejects.toMatchObject({ code: 'FILE_TOO_LARGE' });
  });

  it('stops an unannounced body at the limit (413) without destroying the stream', async () => {
    const stream = new PassThrough();
    const reading = readIntoBuffer(stream, { limit: 50_000 });
    stream.write(body.subarray(0, 40_000));
    stream.write(body.subarray(40_000, 80_000));
    await expect(reading).rejects.toMatchObject({ code: 'FILE_TOO_LARGE' });
    expect(stream.destroyed).toBe(false);
  });

  it('answers 400 for a body shorter or longer than its Content-Length', async () => {
    await expect(readIntoBuffer(Readable.from([body]), { length: body.length + 1, limit: MB })).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await expect(readIntoBuffer(Readable.from([body]), { length: body.length - 1, limit: MB })).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
  });

  it('stops with the error onBytes throws (a chunked body over the in-flight budget)', async () => {
    const refusal = new InFlightBudget(1).refusal();
    const stream = new PassThrough();
    const reading = readIntoBuffer(stream, {
      limit: MB,
      onBytes: () => {
        throw refusal;
      },
    });
    stream.write(body.subarray(0, 1000));
    await expect(reading).rejects.toBe(refusal);
  });

  it('rejects when the stream closes before its end (the client left)', async () => {
    const stream = new PassThrough();
    const reading = readIntoBuffer(stream, { length: body.length, limit: MB });
    stream.write(body.subarray(0, 1000));
    stream.destroy();
    await expect(reading).rejects.toBeInstanceOf(Error);
  });

  it('reads Content-Length only as a plain integer', () => {
    expect(announcedLength('123')).toBe(123);
    expect(announcedLength(undefined)).toBeUndefined();
    expect(announcedLength('12a')).toBeUndefined();
    expect(announcedLength('-1')).toBeUndefined();
  });
});
