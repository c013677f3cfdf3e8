/**
 * Unread request bodies are discarded a few at a time, so that a burst of refused uploads does not keep the
 * server from accepting new connections.
 *
 * Why: libuv (since 1.45, Node 20) accepts ONE connection per event-loop iteration, and in each iteration
 * reads up to 32 × 64 KB from every readable socket. A burst of 100 uploads of 24 MB of which 95 are refused
 * (admission.ts, 503 before the body is read) had Node discard 95 bodies at once — 2.3 GB through the main
 * thread, up to ~200 MB per iteration — so iterations lasted 50–400 ms and the connections still in the
 * kernel's accept queue were taken one per iteration: a health probe opening a new connection at the start of
 * the burst waited 2.6–5 s behind them, though the event loop was never blocked for that long (measured,
 * test/chaos/uploads.test.ts). With at most DISCARDS_AT_ONCE bodies read for discarding at a time, an
 * iteration reads a few MB and the accept queue drains in well under a second. The bodies still go: the rest
 * wait their turn in the kernel (the client's sending blocks by TCP flow control; its answer is already out),
 * and a body read for more than TURN_MS goes to the back of the line so a trickling client cannot hold a turn.
 * While new connections are being accepted the discards pause briefly (accept first, `noteConnection`):
 * with that, the first health probe of the burst answered in 320–490 ms instead of 360–1150 ms.
 *
 * Discarding, not closing: closing a connection with unread data answers the client with a reset, which can
 * destroy the 503 still unread in its socket (admission.ts). Hand-written because Node offers no hook but the
 * request's internal `_dump` (what it calls after the answer to drain a body nobody read); no library paces
 * that.
 */
import type { IncomingMessage } from 'node:http';

/** Bodies read for discarding at once in this process (1 and 2 measured alike for the health probe of a burst). */
export const DISCARDS_AT_ONCE = 2;

/**
 * How long one body may be read before it goes to the back of the line when others wait: a client trickling
 * its refused body (just above HTTP_BODY_MIN_BYTES_PER_SECOND) would otherwise hold a turn for minutes.
 */
const TURN_MS = 1000;

type Dumpable = IncomingMessage & { _dump?: () => void; _dumped?: boolean };

const waiting: Dumpable[] = [];
/** Bodies being read, with when their turn started and what ends it. */
const active = new Map<Dumpable, { since: number; finish: () => void }>();
/** Rotates the turns while bodies wait (one timer for the process, only then). */
let rotation: NodeJS.Timeout | undefined;

function next(): void {
  while (active.size < DISCARDS_AT_ONCE && waiting.length > 0) {
    const req = waiting.shift()!;
    if (req.destroyed) continue;
    // All of it arrived while it waited: only the buffered part is left, drained without taking a turn.
    if (req.complete) req.resume();
    else start(req);
  }
  if (waiting.length > 0 && !rotation) rotation = setInterval(rotate, TURN_MS / 4).unref();
  else if (waiting.length === 0 && rotation) {
    clearInterval(rotation);
    rotation = undefined;
  }
}

function start(req: Dumpable): void {
  const finish = () => {
    if (!active.delete(req)) return;
    req.removeListener('end', finish);
    req.removeListener('close', finish);
    next();
  };
  active.set(req, { since: Date.now(), finish });
  req.once('end', finish);
  req.once('close', finish);
  if (heldSince === undefined) req.resume();
}

/**
 * Accept first: while new connections keep being accepted (one per loop iteration), the bodies being
 * discarded pause, so each iteration is short and the accept queue drains; they resume HOLD_MS after the
 * last new connection. Never longer than MAX_HOLD_MS at a time, then as long again without a pause, so a
 * steady stream of connections slows the discards down to half at worst and never stops them.
 */
const HOLD_MS = 20;
const MAX_HOLD_MS = 250;
let heldSince: number | undefined;
let holdUntil = 0;
let freeUntil = 0;
let holdTimer: NodeJS.Timeout | undefined;

/** A server accepted a connection (server-limits.ts): discards give way to the accepts for a moment. */
export function noteConnection(): void {
  if (active.size === 0) return;
  const now = Date.now();
  if (now < freeUntil) return;
  if (heldSince === undefined) {
    heldSince = now;
    for (const req of active.keys()) req.pause();
  }
  holdUntil = Math.min(now + HOLD_MS, heldSince + MAX_HOLD_MS);
  if (!holdTimer) holdTimer = setTimeout(release, HOLD_MS).unref();
}

function release(): void {
  holdTimer = undefined;
  const now = Date.now();
  if (now < holdUntil) {
    holdTimer = setTimeout(release, holdUntil - now).unref();
    return;
  }
  if (heldSince !== undefined && now - heldSince >= MAX_HOLD_MS) freeUntil = now + MAX_HOLD_MS;
  heldSince = undefined;
  for (const req of active.keys()) req.resume();
}

/** A body read for longer than TURN_MS while others wait is paused and goes to the back of the line. */
function rotate(): void {
  const now = Date.now();
  for (const [req, turn] of active) {
    if (waiting.length === 0) break;
    if (now - turn.since < TURN_MS) continue;
    active.delete(req);
    req.removeListener('end', turn.finish);
    req.removeListener('close', turn.finish);
    req.pause();
    waiting.push(req);
  }
  next();
}

/**
 * Node's `_dump` made to wait for its turn: same effect (the 'data' listeners removed, the body read and
 * thrown away, 'end' emitted), but a request beyond DISCARDS_AT_ONCE stays paused until one finishes. A
 * request whose body has arrived, or whose connection is gone, is drained at once (nothing left to read).
 */
function pacedDump(this: Dumpable): void {
  if (this._dumped) return;
  this._dumped = true;
  this.removeAllListeners('data');
  if (this.complete || this.destroyed) {
    this.resume();
    return;
  }
  if (active.size < DISCARDS_AT_ONCE) start(this);
  else {
    waiting.push(this);
    next();
  }
}

/** Makes Node discard this request's unread body (after its answer) in turn with the others. */
export function paceDiscard(req: IncomingMessage): void {
  (req as Dumpable)._dump = pacedDump;
}

/** Discards the request's body now, in turn with the others; `ended` runs when it is gone (end or close). */
export function discardBody(req: IncomingMessage, ended: () => void): void {
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    ended();
  };
  if (req.readableEnded || req.destroyed) return once();
  req.once('end', once);
  req.once('close', once);
  req.once('error', once);
  if (req.complete) {
    req.resume();
    return;
  }
  pacedDump.call(req as Dumpable);
}

/** Bodies being discarded and waiting to be (for tests and metrics). */
export function discardStatus(): { active: number; waiting: number } {
  return { active: active.size, waiting: waiting.length };
}
