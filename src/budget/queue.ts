/**
 * Admission to a bounded set of workers, shared by the engine pool (threads), the office pool (LibreOffice
 * processes and page-render turns) and the renders of a process without an office pool: one bounded FIFO of
 * waiters, each granted when the owner says capacity is free, and every way a wait ends answered the same
 * everywhere:
 *
 * - beyond the queue bound: 503 with a Retry-After estimated from recent job durations;
 * - waited longer than `maxWaitMs` (the office pool: one conversion budget): 503 with the same estimate;
 * - the request's deadline spent while waiting: its 504 (`Deadline.error`, naming the stage);
 * - the client gone (its signal aborted): 503 "abandoned", Retry-After 1;
 * - the queue closed (shutdown): 503, Retry-After 5.
 *
 * What "capacity is free" means stays with the owner: each waiter brings a `claim` that either takes a turn
 * synchronously (returns what the waiter gets: a thread turn, a worker) or says not now (undefined). `pump()`
 * offers the turn to the waiters in arrival order, so the earliest waiter that can run runs — with one kind
 * of waiter that is plain FIFO; the office pool's conversions (which need an idle LibreOffice worker) and
 * renders (which need only a turn) share one order this way.
 */
import { FolioError } from '../errors.js';
import type { Deadline } from './deadline.js';

export interface WaitOptions {
  /** The client went away: leave the queue (503). */
  signal?: AbortSignal;
  /** The request's one deadline: waiting draws from it (504). */
  deadline?: Deadline;
  /** The wait, as the 504 names it: "waiting for a conversion worker". */
  stage: string;
  /** The 503's message beyond the queue bound. */
  fullMessage: string;
  /** Longest wait in milliseconds (503 with `staleMessage` after it); unbounded when omitted. */
  maxWaitMs?: number;
  staleMessage?: string;
  /** A label the owner can refuse a class of waiters by (`failWhere`). */
  kind?: string;
}

export interface AdmissionQueueOptions {
  /** Waiters at most; beyond: 503. */
  queueSize: number;
  /** Jobs that run at once (for the Retry-After estimate). */
  slots: number;
  /** A job's duration before any has been measured, in milliseconds. */
  initialJobMs: number;
  /** Weight of the latest duration in the running mean (0 < weight ≤ 1). */
  weight: number;
}

interface Waiter {
  kind?: string;
  /** Takes the turn if it can (and settles the wait); false when it cannot run yet. */
  tryClaim(): boolean;
  fail(e: FolioError): void;
}

/** The answer to a request whose client went away while it waited (or ran): nobody reads it, but it is an error. */
export function abandonedError(): FolioError {
  return new FolioError('SERVICE_UNAVAILABLE', 'The request was abandoned by the client', { retryAfter: 1 });
}

function shutdownError(): FolioError {
  return new FolioError('SERVICE_UNAVAILABLE', 'The service is shutting down', { retryAfter: 5 });
}

export class AdmissionQueue {
  private readonly waiters: Waiter[] = [];
  private meanMs: number;
  private closed = false;
  private pumping = false;

  constructor(private readonly opts: AdmissionQueueOptions) {
    this.meanMs = opts.initialJobMs;
  }

  /** Requests waiting for a turn. */
  get waiting(): number {
    return this.waiters.length;
  }

  /**
   * Resolves with what `claim` returns once it can take a turn: at once when nobody waits and it can, else
   * when `pump()` finds it first in line among those that can. Rejects as described in the header.
   */
  take<T>(claim: () => T | undefined, o: WaitOptions): Promise<T> {
    if (this.closed) return Promise.reject(shutdownError());
    if (o.signal?.aborted) return Promise.reject(abandonedError());
    if (o.deadline?.expired) return Promise.reject(o.deadline.error(o.stage));
    if (this.waiters.length === 0) {
      const granted = claim();
      if (granted !== undefined) return Promise.resolve(granted);
    }
    if (this.waiters.length >= this.opts.queueSize) {
      return Promise.reject(new FolioError('SERVICE_UNAVAILABLE', o.fullMessage, { retryAfter: this.retryAfterSeconds() }));
    }
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => waiter.fail(abandonedError());
      const onDeadline = () => waiter.fail(o.deadline!.error(o.stage));
      // Waiting is bounded too where the owner asks: behind workers held by slow documents, a request would
      // otherwise wait for as long as the queue ahead of it takes.
      const timer =
        o.maxWaitMs === undefined
          ? undefined
          : setTimeout(
              () => waiter.fail(new FolioError('SERVICE_UNAVAILABLE', o.staleMessage ?? o.fullMessage, { retryAfter: this.retryAfterSeconds() })),
              o.maxWaitMs,
            );
      const leave = () => {
        clearTimeout(timer);
        o.signal?.removeEventListener('abort', onAbort);
        o.deadline?.signal.removeEventListener('abort', onDeadline);
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
      };
      const waiter: Waiter = {
        kind: o.kind,
        tryClaim: () => {
          const granted = claim();
          if (granted === undefined) return false;
          leave();
          resolve(granted);
          return true;
        },
        fail: (e) => {
          leave();
          reject(e);
        },
      };
      o.signal?.addEventListener('abort', onAbort, { once: true });
      o.deadline?.signal.addEventListener('abort', onDeadline, { once: true });
      this.waiters.push(waiter);
      this.pump();
    });
  }

  /** Offers free capacity to the waiters, earliest first; call it whenever a turn may have freed. */
  pump(): void {
    // A claim that frees capacity synchronously calls pump again: the outer loop carries on instead.
    if (this.pumping || this.closed) return;
    this.pumping = true;
    try {
      // A granted waiter leaves the array, so its successor moves into index i.
      for (let i = 0; i < this.waiters.length;) if (!this.waiters[i]!.tryClaim()) i++;
    } finally {
      this.pumping = false;
    }
  }

  /** Refuses every waiter of `kind` (e.g. conversions when LibreOffice cannot start). */
  failWhere(kind: string, error: () => FolioError): void {
    for (const w of this.waiters.filter((x) => x.kind === kind)) w.fail(error());
  }

  /** A job's duration, for the Retry-After estimate (a running mean). */
  recordJob(ms: number): void {
    this.meanMs = this.meanMs * (1 - this.opts.weight) + ms * this.opts.weight;
  }

  /** Seconds until a turn is likely free: the waiters and the running jobs, at the mean duration, over the slots. */
  retryAfterSeconds(): number {
    const ahead = this.waiters.length + this.opts.slots;
    return Math.max(1, Math.ceil((ahead * this.meanMs) / this.opts.slots / 1000));
  }

  /** Shutdown: every waiter gets 503 Retry-After 5, and so does every later `take`. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const w of [...this.waiters]) w.fail(shutdownError());
  }
}

/**
 * `slots` interchangeable turns behind an AdmissionQueue (a counting semaphore): the engine pool's threads,
 * the renders of a process without an office pool.
 */
export class Semaphore {
  private used = 0;

  constructor(
    private readonly slots: number,
    readonly queue: AdmissionQueue,
  ) {}

  /** Turns taken. */
  get busy(): number {
    return this.used;
  }

  /** Resolves with the release of one turn (idempotent: a second call does nothing). */
  acquire(o: WaitOptions): Promise<() => void> {
    return this.queue.take(() => {
      if (this.used >= this.slots) return undefined;
      this.used++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        this.used--;
        this.queue.pump();
      };
    }, o);
  }
}
