/**
 * One API call as the client makes it: attempts with a per-attempt timeout, an overall deadline, the caller's
 * AbortSignal (which wins at once, also during a back-off sleep), and retries on 429/503 that honour
 * `Retry-After` with jittered exponential back-off under a cap. Plain `fetch` and timers: browsers and Node.
 *
 * What is retried:
 * - 429 and 503, for every method: the server refused the request before doing any work.
 * - Idempotent calls (GET, HEAD, DELETE) also on 502 and 504, on a per-attempt timeout, and on any network
 *   error. A non-idempotent call (POST, and the two auth GETs that send a mail or spend a code) is retried
 *   after a network error only when the connection was never made (refused, DNS), so the server cannot have
 *   seen it; never after its own timeout and never on another status.
 * - Only a body that can be sent again (string, bytes, Blob, FormData of those, a file path) is retried; a
 *   one-shot stream is sent once (a connection refused before any byte of it was read is still retried).
 */
import { FolioApiError, FolioNetworkError, FolioTimeoutError, errorClassFor, type ErrorDetail, type FolioApiErrorExtra } from './errors.js';

export interface RetryOptions {
  /** Attempts in all, the first included (default 4). 1 turns retrying off (as does `retry: false`). */
  maxAttempts?: number;
  /** First back-off step in ms (default 500); it doubles on each retry, with jitter. */
  baseDelayMs?: number;
  /**
   * Longest single wait in ms (default 30 000). A `Retry-After` longer than this is not waited for: the error
   * is thrown at once, with its `retryAfter`, so the caller can decide.
   */
  maxDelayMs?: number;
}

export interface RetryEvent {
  /** The attempt that failed (1 = the first). */
  attempt: number;
  /** How long the client waits before the next attempt. */
  delayMs: number;
  /** Why: the API's error (429, 503, …), a network error or a per-attempt timeout. */
  error: FolioApiError;
  method: string;
  path: string;
}

/** Per call; every field overrides the client's default. */
export interface RequestOptions {
  /** Aborts the call at once (also during a back-off sleep); it rejects with the signal's reason (an `AbortError`). */
  signal?: AbortSignal;
  /** Per attempt, including reading the answer (default 120 000 ms). 0: none. */
  timeoutMs?: number;
  /** Overall, all attempts and waits included (default 300 000 ms). 0: none. No wait starts that would end past it. */
  deadlineMs?: number;
  /** Retry policy, or `false` for a single attempt. */
  retry?: RetryOptions | false;
  /** Sent as `X-Request-Id` (≤ 64 of `A-Z a-z 0-9 . _ : -`); default a random id. Attempts after the first get `.2`, `.3`, … */
  requestId?: string;
  /** Called before each back-off sleep (progress, logging). */
  onRetry?: (event: RetryEvent) => void;
  /** Extra request headers. */
  headers?: Record<string, string>;
}

export const DEFAULT_RETRY: Required<RetryOptions> = { maxAttempts: 4, baseDelayMs: 500, maxDelayMs: 30_000 };
export const DEFAULT_TIMEOUT_MS = 120_000;
export const DEFAULT_DEADLINE_MS = 300_000;

/** A request body that may be built again for a retry, or a one-shot one. */
export interface BodySource {
  /** Builds the body for one attempt. */
  make(): BodyInit | Promise<BodyInit>;
  /** Can `make()` be called again after an attempt sent the body? */
  replayable: boolean;
  /** For a one-shot body: has any byte been read yet? (Untouched, a refused connection may still be retried.) */
  touched?(): boolean;
  /** A streamed body needs `duplex: 'half'` in fetch. */
  streaming?: boolean;
  headers?: Record<string, string>;
}

export interface Call<T> {
  method: string;
  /** Path and query, e.g. `/v1/convert?to=pdf`. */
  path: string;
  /** Safe to repeat (GET/HEAD/DELETE by default; the auth GETs that send a mail or spend a code are not). */
  idempotent?: boolean;
  headers: Record<string, string>;
  body?: BodySource;
  /** Statuses that are answers rather than errors (default 2xx). */
  answers?: (status: number) => boolean;
  /** Reads the answer (inside the attempt, so the per-attempt timeout covers the download). */
  read(res: Response): Promise<T>;
}

export interface Transport {
  baseUrl: string;
  fetch: typeof fetch;
  defaults: RequestOptions;
}

/** `Retry-After` as ms: delta-seconds or an HTTP date (RFC 9110 §10.2.3). Undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value === null || value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * The wait before retry number `retry` (1-based): "equal jitter" exponential back-off (half fixed, half
 * random) capped at maxDelayMs; a `Retry-After` is a floor, to which up to 20 % (at most 1 s) of jitter is
 * added so that clients told the same time do not all come back at once.
 */
export function backoffDelay(retry: number, policy: Required<RetryOptions>, retryAfterMs?: number, random: () => number = Math.random): number {
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  const jittered = exp / 2 + (random() * exp) / 2;
  if (retryAfterMs === undefined) return jittered;
  const floor = retryAfterMs + random() * Math.min(retryAfterMs * 0.2, 1000);
  return Math.min(Math.max(floor, jittered), Math.max(policy.maxDelayMs, retryAfterMs));
}

const CONNECT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'ENETUNREACH', 'EHOSTUNREACH']);

/** True when the error says the connection was never made (so the server cannot have seen the request). */
function neverConnected(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && CONNECT_CODES.has(code)) return true;
    const errors = (e as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.length > 0 && errors.every((x) => neverConnected(x))) return true;
  }
  return false;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

let counter = 0;
function newRequestId(): string {
  const rnd = new Uint8Array(8);
  globalThis.crypto?.getRandomValues?.(rnd);
  const hex = Array.from(rnd, (b) => b.toString(16).padStart(2, '0')).join('');
  return `fc-${hex}-${(counter++).toString(36)}`;
}

interface Envelope {
  code?: string;
  error?: string;
  message?: string;
  requestId?: string;
  details?: ErrorDetail[];
}

/** The typed error for an error answer (the envelope when the body is one; the status and text otherwise). */
export async function errorFromResponse(res: Response, extra: FolioApiErrorExtra, sentRequestId?: string): Promise<FolioApiError> {
  const text = await res.text().catch(() => '');
  let env: Envelope = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object') env = parsed as Envelope;
  } catch {
    // Not the envelope (a proxy's page, say): keep the status and the text.
  }
  const retryMs = parseRetryAfter(res.headers.get('retry-after'));
  const Class = errorClassFor(res.status, env.code);
  return new Class(
    res.status,
    env.code ?? 'HTTP_ERROR',
    env.message ?? (text.slice(0, 200) || res.statusText || `HTTP ${res.status}`),
    env.requestId ?? res.headers.get('x-request-id') ?? sentRequestId,
    env.details,
    retryMs === undefined ? undefined : Math.ceil(retryMs / 100) / 10,
    { ...extra, error: env.error ?? res.statusText },
  );
}

function timeoutError(kind: 'attempt' | 'deadline', ms: number, requestId: string, extra: FolioApiErrorExtra): FolioTimeoutError {
  const e = new FolioTimeoutError(
    0,
    'CLIENT_TIMEOUT',
    kind === 'attempt' ? `No answer within the per-attempt timeout (${ms} ms)` : `The call did not finish within its deadline (${ms} ms)`,
    requestId,
    undefined,
    undefined,
    extra,
  );
  e.timeout = kind;
  return e;
}

function defined<T extends object>(o: T | undefined): Partial<T> {
  const out: Partial<T> = {};
  for (const [k, v] of Object.entries(o ?? {})) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}

/** Runs a call with the transport's defaults merged under the call's options. */
export async function perform<T>(t: Transport, call: Call<T>, options: RequestOptions = {}): Promise<T> {
  const o: RequestOptions = { ...t.defaults, ...defined(options) };
  o.headers = { ...t.defaults.headers, ...options.headers };
  // A per-call retry object refines the client's (unset fields keep the client's values); `false` turns retrying off.
  const policy: Required<RetryOptions> =
    o.retry === false
      ? { ...DEFAULT_RETRY, maxAttempts: 1 }
      : { ...DEFAULT_RETRY, ...defined(t.defaults.retry || undefined), ...defined(options.retry || undefined) };
  const timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const deadlineMs = o.deadlineMs ?? DEFAULT_DEADLINE_MS;
  const idempotent = call.idempotent ?? ['GET', 'HEAD', 'DELETE', 'OPTIONS', 'PUT'].includes(call.method);
  const signal = o.signal;
  const baseId = o.requestId ?? newRequestId();
  const started = Date.now();
  const deadlineAt = deadlineMs > 0 ? started + deadlineMs : Infinity;
  const answers = call.answers ?? ((s: number) => s >= 200 && s < 300);

  if (signal?.aborted) throw abortReason(signal);

  for (let attempt = 1; ; attempt++) {
    const requestId = attempt === 1 ? baseId : `${baseId}.${attempt}`.slice(-64);
    const extra: FolioApiErrorExtra = { attempts: attempt, method: call.method, path: call.path };
    const ctrl = new AbortController();
    let why: 'attempt' | 'deadline' | undefined;
    const remaining = deadlineAt - Date.now();
    if (remaining <= 0) throw timeoutError('deadline', deadlineMs, requestId, extra);
    const limit = Math.min(timeoutMs > 0 ? timeoutMs : Infinity, remaining);
    const timer =
      limit === Infinity
        ? undefined
        : setTimeout(() => {
            why = timeoutMs > 0 && timeoutMs <= remaining ? 'attempt' : 'deadline';
            ctrl.abort(new DOMException('timeout', 'TimeoutError'));
          }, limit);
    const onAbort = () => ctrl.abort(abortReason(signal!));
    signal?.addEventListener('abort', onAbort, { once: true });

    let failure: FolioApiError;
    let sentBody = false;
    try {
      const headers: Record<string, string> = { ...call.headers, ...o.headers, 'x-request-id': requestId };
      let body: BodyInit | undefined;
      if (call.body) {
        body = await call.body.make();
        Object.assign(headers, call.body.headers);
        sentBody = true;
      }
      const init: RequestInit & { duplex?: 'half' } = { method: call.method, headers, body, credentials: 'omit', signal: ctrl.signal };
      if (call.body?.streaming) init.duplex = 'half';
      const res = await t.fetch(`${t.baseUrl}${call.path}`, init);
      if (answers(res.status)) return await call.read(res);
      failure = await errorFromResponse(res, extra, requestId);
    } catch (err) {
      if (signal?.aborted) throw abortReason(signal);
      if (why) failure = timeoutError(why, why === 'attempt' ? timeoutMs : deadlineMs, requestId, extra);
      else if (err instanceof FolioApiError) failure = err;
      else if (err instanceof DOMException && err.name === 'AbortError') throw err;
      else {
        const cause = err as Error & { cause?: Error };
        failure = new FolioNetworkError(
          0,
          'NETWORK_ERROR',
          `${call.method} ${call.path}: ${cause.cause?.message ?? cause.message ?? String(err)}`,
          requestId,
          undefined,
          undefined,
          {
            ...extra,
            cause: err,
          },
        );
      }
    } finally {
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }

    // Decide whether to try again.
    if (failure instanceof FolioTimeoutError && failure.timeout === 'deadline') throw failure;
    if (attempt >= policy.maxAttempts) throw failure;
    // A one-shot body can go again only if the failed attempt did not start reading it.
    const b = call.body;
    const canResend = !b || b.replayable || !sentBody || (b.touched !== undefined && !b.touched());
    let retryable: boolean;
    if (failure.status === 429 || failure.status === 503) retryable = canResend;
    else if (failure.status === 502 || failure.status === 504) retryable = idempotent && canResend;
    else if (failure instanceof FolioTimeoutError) retryable = idempotent && canResend;
    else if (failure instanceof FolioNetworkError) retryable = canResend && (idempotent || neverConnected((failure as { cause?: unknown }).cause));
    else retryable = false;
    if (!retryable) throw failure;

    const retryAfterMs = failure.retryAfter === undefined ? undefined : failure.retryAfter * 1000;
    // A server that asks for more patience than the cap allows: say so now rather than come back too early.
    if (retryAfterMs !== undefined && retryAfterMs > policy.maxDelayMs) throw failure;
    const delayMs = backoffDelay(attempt, policy, retryAfterMs);
    if (Date.now() + delayMs >= deadlineAt) throw failure;
    o.onRetry?.({ attempt, delayMs, error: failure, method: call.method, path: call.path });
    await sleep(delayMs, signal);
  }
}
