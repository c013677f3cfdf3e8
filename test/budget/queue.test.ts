/**
 * The one admission mechanism of the engine pool, the office pool and local renders (src/budget/queue.ts):
 * FIFO grants, the queue bound (503 + Retry-After), the wait bound (503), the deadline (504), the client
 * leaving (503 "abandoned"), shutdown (503, Retry-After 5), the Retry-After estimate, and waiters of
 * different kinds sharing one order.
 */
import { describe, expect, it } from 'vitest';
import { AdmissionQueue, Deadline, Semaphore, type WaitOptions } from '../../src/budget/index.js';
import { FolioError } from '../../src/errors.js';

const queue = (queueSize = 8, slots = 1) => new AdmissionQueue({ queueSize, slots, initialJobMs: 1000, weight: 0.5 });
const wait: WaitOptions = { stage: 'waiting for a test turn', fullMessage: 'Too many waiting', staleMessage: 'Waited too long' };
const rejection = (p: Promise<unknown>): Promise<FolioError> =>
  p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e as FolioError,
  );
const settled = async (p: Promise<unknown>) => {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((r) => setImmediate(r));
  return done;
};

describe('AdmissionQueue and Semaphore', () => {
  it('grants free turns at once and the others in arrival order as turns are released', async () => {
    const turns = new Semaphore(2, queue());
    const a = await turns.acquire(wait);
    const b = await turns.acquire(wait);
    const order: string[] = [];
    const c = turns.acquire(wait).then((r) => (order.push('c'), r));
    const d = turns.acquire(wait).then((r) => (order.push('d'), r));
    expect(turns.queue.waiting).toBe(2);
    expect(await settled(c)).toBe(false);
    b();
    b(); // a second release is a no-op: it must not grant d as well
    (await c)();
    a();
    await d;
    expect(order).toEqual(['c', 'd']);
    expect(turns.busy).toBe(1);
    expect(turns.queue.waiting).toBe(0);
  });

  it('refuses beyond the queue bound with 503 and a Retry-After from recent job durations', async () => {
    const turns = new Semaphore(1, queue(1));
    await turns.acquire(wait);
    void turns.acquire(wait).catch(() => undefined);
    const first = await rejection(turns.acquire(wait));
    expect(first.code).toBe('SERVICE_UNAVAILABLE');
    expect(first.message).toBe('Too many waiting');
    // One waiting + one running at the initial 1 s each.
    expect(first.retryAfter).toBe(2);
    for (let i = 0; i < 10; i++) turns.queue.recordJob(10_000);
    const later = await rejection(turns.acquire(wait));
    expect(later.retryAfter).toBeGreaterThanOrEqual(19);
  });

  it('bounds the wait when asked: 503 with the stale message after maxWaitMs, and the waiter leaves', async () => {
    const turns = new Semaphore(1, queue());
    await turns.acquire(wait);
    const e = await rejection(turns.acquire({ ...wait, maxWaitMs: 30 }));
    expect(e.code).toBe('SERVICE_UNAVAILABLE');
    expect(e.message).toBe('Waited too long');
    expect(e.retryAfter).toBeGreaterThanOrEqual(1);
    expect(turns.queue.waiting).toBe(0);
  });

  it("answers the request's deadline with its 504 naming the wait, before queueing or while waiting", async () => {
    const turns = new Semaphore(1, queue());
    const spent = await rejection(turns.acquire({ ...wait, deadline: Deadline.after(0) }));
    expect(spent.code).toBe('CONVERSION_TIMEOUT');
    expect(turns.busy).toBe(0); // not granted although a turn was free
    await turns.acquire(wait);
    const e = await rejection(turns.acquire({ ...wait, deadline: Deadline.after(30) }));
    expect(e.code).toBe('CONVERSION_TIMEOUT');
    expect(e.status).toBe(504);
    expect(e.message).toMatch(/time budget \(during waiting for a test turn\)/);
    expect(turns.queue.waiting).toBe(0);
  });

  it('lets a waiter whose client left go at once with 503 "abandoned", and its turn goes to the next', async () => {
    const turns = new Semaphore(1, queue());
    const release = await turns.acquire(wait);
    const controller = new AbortController();
    const gone = rejection(turns.acquire({ ...wait, signal: controller.signal }));
    const next = turns.acquire(wait);
    controller.abort();
    const e = await gone;
    expect(e.code).toBe('SERVICE_UNAVAILABLE');
    expect(e.message).toMatch(/abandoned/);
    expect(e.retryAfter).toBe(1);
    expect(turns.queue.waiting).toBe(1);
    release();
    await next;
    const aborted = await rejection(turns.acquire({ ...wait, signal: AbortSignal.abort() }));
    expect(aborted.message).toMatch(/abandoned/);
  });

  it('on close refuses every waiter and every later request with 503 Retry-After 5', async () => {
    const turns = new Semaphore(1, queue());
    await turns.acquire(wait);
    const waiting = rejection(turns.acquire(wait));
    turns.queue.close();
    for (const e of [await waiting, await rejection(turns.acquire(wait))]) {
      expect(e.code).toBe('SERVICE_UNAVAILABLE');
      expect(e.retryAfter).toBe(5);
    }
  });

  it('gives a turn to the earliest waiter that can take it; failWhere refuses one kind', async () => {
    // A pool with one turn and a resource that only one kind needs (the office pool: conversions need an
    // idle worker, renders only a turn).
    const q = queue();
    let turnFree = false;
    let workerIdle = false;
    const claimTurn = () => (turnFree ? ((turnFree = false), 'turn') : undefined);
    const claimWorker = () => (turnFree && workerIdle ? ((turnFree = false), (workerIdle = false), 'worker') : undefined);
    const conversion = q.take(claimWorker, { ...wait, kind: 'conversion' });
    const render = q.take(claimTurn, { ...wait, kind: 'render' });
    const second = rejection(q.take(claimWorker, { ...wait, kind: 'conversion' }));
    turnFree = true; // a turn, but no idle worker: the render behind the conversion goes first
    q.pump();
    expect(await render).toBe('turn');
    expect(await settled(conversion)).toBe(false);
    turnFree = true;
    workerIdle = true;
    q.pump();
    expect(await conversion).toBe('worker');
    q.failWhere('conversion', () => new FolioError('SERVICE_UNAVAILABLE', 'engine gone', { retryAfter: 30 }));
    expect((await second).message).toBe('engine gone');
    expect(q.waiting).toBe(0);
  });
});
