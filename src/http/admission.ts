/**
 * Admission by resources: one service-wide budget of request bytes in flight (INFLIGHT_BYTES_MB). The
 * per-key limit (in-flight.ts, 10 per key) bounds how many documents one client has in the service; keys are
 * free, so only a budget across all of them bounds the memory: ten keys × ten 24 MB uploads held the API at
 * 2.6–5.9 GB when nothing counted bytes.
 *
 * A document request reserves `announced body size × factor` on arrival, after authentication and its key's
 * slot and before a byte of its body is read (Content-Length), and holds it until its answer is out or the
 * client is gone. The factor covers the copies a body makes while it is processed (measured, see
 * BODY_COPIES). A request that would cross the budget is answered 503 with a Retry-After at once, and Node
 * discards its unread body without keeping it (a `Connection: close` client's body is discarded first, see
 * refuseAfterBody). A body without Content-Length (chunked) reserves as its bytes
 * arrive (`grow`, called by the body readers); one that would cross the budget is stopped there with the
 * same 503. A request whose reservation alone exceeds the whole budget is admitted only into an empty
 * service, so a budget set below one document still lets documents through one at a time.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { FolioError } from '../errors.js';
import { collectWhenIdle } from '../engines/idle-gc.js';
import { discardBody } from './body-discard.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Document endpoints: the request's share of the in-flight byte budget, released when it is answered. */
    inFlightBytes?: Reservation;
  }
}

/**
 * Bytes of memory one body byte costs while its request is in flight. Measured on Node 20 (peak RSS above
 * idle ÷ body bytes admitted at once, bench/README.md "Memory under pressure"): multipart 2.0 — the one body
 * buffer, the engine thread's copy and its reading; JSON 2.6 — the body buffer (base64, 4/3 of the
 * document) moved to the body thread, its text, the base64 string JSON.parse makes and the decoded bytes,
 * the engine's copy. 3 for both leaves room for engines that read more than verify does.
 */
export const BODY_COPIES = { multipart: 3, json: 3 } as const;

/**
 * A reservation this large given back schedules a full GC of the main thread once no other has been given
 * back for 2 s (idle-gc.ts): the body buffers of a burst are garbage the idle main thread would keep.
 */
const COLLECT_AFTER_BYTES = 8 * 1024 * 1024;

/** Reserved for a body whose size is not announced, before its first bytes count (fields, small JSON). */
const UNANNOUNCED_START = 64 * 1024;

export interface Reservation {
  /** Bytes currently reserved. */
  readonly bytes: number;
  /** Reserves `n` more bytes (a chunked body's arrivals × factor); false when that would cross the budget. */
  grow(n: number): boolean;
  /** Gives the reservation back; later calls do nothing. */
  release(): void;
  /** The 503 to answer when `grow` fails. */
  refusal(): FolioError;
}

export interface InFlightBudgetStatus {
  limitBytes: number;
  usedBytes: number;
  requests: number;
  refused: number;
}

export class InFlightBudget {
  private used = 0;
  private holders = 0;
  private refused = 0;
  /** Mean time a reservation is held (ms), for the Retry-After estimate. */
  private meanHoldMs = 1000;

  constructor(readonly limitBytes: number) {}

  /** Reserves `bytes`, or undefined when that would cross the budget (see the module comment for the one exception). */
  tryReserve(bytes: number): Reservation | undefined {
    if (!this.fits(bytes)) {
      this.refused++;
      return undefined;
    }
    this.used += bytes;
    this.holders++;
    const started = performance.now();
    const state = { held: bytes, released: false };
    return {
      get bytes() {
        return state.held;
      },
      grow: (n: number): boolean => {
        if (state.released) return true;
        // The only request in the service may grow past the budget (the same exception as on arrival).
        if (this.used + n > this.limitBytes && !(this.holders === 1 && state.held === this.used)) {
          this.refused++;
          return false;
        }
        this.used += n;
        state.held += n;
        return true;
      },
      release: (): void => {
        if (state.released) return;
        state.released = true;
        this.used -= state.held;
        this.holders--;
        this.meanHoldMs = this.meanHoldMs * 0.9 + (performance.now() - started) * 0.1;
        if (state.held >= COLLECT_AFTER_BYTES) collectWhenIdle(2000);
      },
      refusal: () => this.refusal(),
    };
  }

  /** Seconds after which a refused client should try again: about one mean request's time, 1–30 s. */
  retryAfterSeconds(): number {
    return Math.min(30, Math.max(1, Math.ceil(this.meanHoldMs / 1000)));
  }

  status(): InFlightBudgetStatus {
    return { limitBytes: this.limitBytes, usedBytes: this.used, requests: this.holders, refused: this.refused };
  }

  /** The 503 for a request that would cross the budget. */
  refusal(): FolioError {
    return new FolioError('SERVICE_UNAVAILABLE', 'The server is processing as many document bytes as it can hold; retry later', {
      retryAfter: this.retryAfterSeconds(),
    });
  }

  private fits(bytes: number): boolean {
    return this.used + bytes <= this.limitBytes || this.holders === 0;
  }
}

/** What a request reserves on arrival: its announced body × the copies its kind makes; unannounced bodies start small. */
export function reservationFor(headers: FastifyRequest['headers'], maxBodyBytes: number): number {
  const type = String(headers['content-type'] ?? '').toLowerCase();
  const copies = type.startsWith('multipart/') ? BODY_COPIES.multipart : BODY_COPIES.json;
  const announced = Number(headers['content-length']);
  // A Content-Length above the body limit is refused (413) by the body readers before they read; it holds
  // no more than the largest acceptable body meanwhile.
  const size = Number.isFinite(announced) && announced >= 0 ? Math.min(announced, maxBodyBytes) : UNANNOUNCED_START;
  return Math.ceil(size * copies);
}

/**
 * Answers a refusal. Node discards the unread body of a kept-alive connection after the answer; a client
 * that asked for `Connection: close` has its connection closed right after the answer instead, while it may
 * still be sending, and the reset that follows can destroy the unread answer in its socket. Its body is
 * therefore discarded (never stored) before the answer, so it reads the 503 like anyone else. A client
 * that waits for `100 Continue` sends no body: answered at once.
 */
function refuseAfterBody(request: FastifyRequest, refusal: FolioError, done: (err?: Error) => void): void {
  const raw = request.raw;
  const closing = String(request.headers.connection ?? '').toLowerCase() === 'close';
  const hasBody = request.headers['content-length'] !== undefined || request.headers['transfer-encoding'] !== undefined;
  if (!closing || !hasBody || request.headers.expect !== undefined || raw.complete) return done(refusal);
  // In turn with the other bodies being discarded (body-discard.ts): a burst of refusals would otherwise
  // starve the accept of new connections.
  discardBody(raw, () => done(refusal));
}

/** The body bytes a reader has received count against a chunked request's reservation (× its copies). */
export function countArrivedBytes(request: FastifyRequest, bytes: number): void {
  const reservation = request.inFlightBytes;
  if (!reservation || request.headers['content-length'] !== undefined) return;
  const type = String(request.headers['content-type'] ?? '').toLowerCase();
  const copies = type.startsWith('multipart/') ? BODY_COPIES.multipart : BODY_COPIES.json;
  if (!reservation.grow(bytes * copies)) throw reservation.refusal();
}

/**
 * The onRequest hook of document endpoints (after the key check and its slot): the reservation, held until
 * the response closes (answer sent, or the connection gone at any stage).
 */
export function admissionHook(budget: InFlightBudget, maxBodyBytes: number) {
  return (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void => {
    const reservation = budget.tryReserve(reservationFor(request.headers, maxBodyBytes));
    if (!reservation) return refuseAfterBody(request, budget.refusal(), done);
    request.inFlightBytes = reservation;
    if (reply.raw.closed) reservation.release();
    else reply.raw.once('close', () => reservation.release());
    done();
  };
}
