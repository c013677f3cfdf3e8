/**
 * @folio/client's transport against small local HTTP servers: back-off that honours Retry-After (seconds and
 * HTTP date), the attempt cap, the Retry-After cap, the overall deadline, what is and is not retried (by
 * method and status, network errors), the caller's AbortSignal (also during a back-off sleep), the
 * per-attempt timeout, and the typed errors (envelope fields, families, instanceof across bundles).
 * Time bounds are generous on purpose: they check that a wait happened and was not skipped, not how fast.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { build } from 'esbuild';
import {
  FolioApiError,
  FolioAuthenticationError,
  FolioClient,
  FolioNetworkError,
  FolioRateLimitError,
  FolioServerError,
  FolioTimeoutError,
  FolioUnavailableError,
  FolioValidationError,
  backoffDelay,
  parseRetryAfter,
  DEFAULT_RETRY,
  type RetryEvent,
} from '../../packages/client/src/index.js';
import { envelope, okJson, scriptedServer, type ScriptedServer } from './local-server.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const KEY = 'folio_sk_test';
const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
async function serve(script: Parameters<typeof scriptedServer>[0]): Promise<ScriptedServer> {
  const s = await scriptedServer(script);
  servers.push(s);
  return s;
}
const gaps = (s: ScriptedServer) => s.arrivals.slice(1).map((a, i) => a.at - s.arrivals[i]!.at);

describe('Retry-After and back-off', () => {
  it('parses Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-11-24T06:00:00Z');
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Tue, 24 Nov 2026 06:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Tue, 24 Nov 2026 05:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it('backs off exponentially with jitter, under the cap, and never below Retry-After', () => {
    const policy = { ...DEFAULT_RETRY, baseDelayMs: 100, maxDelayMs: 1000 };
    for (const r of [0, 0.5, 0.999]) {
      const rnd = () => r;
      expect(backoffDelay(1, policy, undefined, rnd)).toBeGreaterThanOrEqual(50);
      expect(backoffDelay(1, policy, undefined, rnd)).toBeLessThanOrEqual(100);
      expect(backoffDelay(3, policy, undefined, rnd)).toBeGreaterThanOrEqual(200);
      expect(backoffDelay(3, policy, undefined, rnd)).toBeLessThanOrEqual(400);
      expect(backoffDelay(10, policy, undefined, rnd)).toBeLessThanOrEqual(1000);
      expect(backoffDelay(1, policy, 700, rnd)).toBeGreaterThanOrEqual(700);
      expect(backoffDelay(1, policy, 700, rnd)).toBeLessThanOrEqual(1000);
    }
  });

  it('retries a 503 with Retry-After: 1 and waits at least that long each time', async () => {
    const s = await serve((_req, res, i) => (i < 2 ? envelope(res, 503, 'SERVICE_UNAVAILABLE', { 'retry-after': '1' }) : okJson(res, { keys: [] })));
    const events: RetryEvent[] = [];
    const client = new FolioClient({ baseUrl: s.url, apiKey: KEY, retry: { baseDelayMs: 50 }, onRetry: (e) => events.push(e) });
    expect(await client.listKeys()).toEqual([]);
    expect(s.arrivals).toHaveLength(3);
    for (const g of gaps(s)) {
      expect(g).toBeGreaterThanOrEqual(950);
      expect(g).toBeLessThan(6000);
    }
    expect(events.map((e) => e.attempt)).toEqual([1, 2]);
    for (const e of events) {
      expect(e.error).toBeInstanceOf(FolioUnavailableError);
      expect(e.delayMs).toBeGreaterThanOrEqual(1000);
      expect(e.delayMs).toBeLessThanOrEqual(1200);
    }
    // Each attempt has its own X-Request-Id, related to the first.
    const ids = s.arrivals.map((a) => a.headers['x-request-id'] as string);
    expect(ids[1]).toBe(`${ids[0]}.2`);
    expect(ids[2]).toBe(`${ids[0]}.3`);
  }, 30_000);

  it('honours Retry-After given as an HTTP date', async () => {
    const s = await serve((_req, res, i) =>
      i === 0 ? envelope(res, 429, 'RATE_LIMIT_ERROR', { 'retry-after': new Date(Date.now() + 2000).toUTCString() }) : okJson(res, { keys: [] }),
    );
    const client = new FolioClient({ baseUrl: s.url, apiKey: KEY, retry: { baseDelayMs: 10 } });
    await client.listKeys();
    expect(s.arrivals).toHaveLength(2);
    // An HTTP date has whole seconds: "now + 2 s" is between 1 and 2 s away.
    expect(gaps(s)[0]).toBeGreaterThanOrEqual(950);
    expect(gaps(s)[0]).toBeLessThan(6000);
  }, 30_000);

  it('a per-call retry object refines the client’s policy; retry: false turns it off for that call', async () => {
    const s = await serve((_req, res) => envelope(res, 503, 'SERVICE_UNAVAILABLE', { 'retry-after': '0' }));
    const client = new FolioClient({ baseUrl: s.url, apiKey: KEY, retry: { maxAttempts: 5, baseDelayMs: 1000 } });
    const err = (await client.listKeys({ retry: { baseDelayMs: 5 } }).catch((e: unknown) => e)) as FolioApiError;
    expect(err.attempts).toBe(5); // the client's maxAttempts, the call's delay
    expect(s.arrivals).toHaveLength(5);
    const once = (await client.listKeys({ retry: false }).catch((e: unknown) => e)) as FolioApiError;
    expect(once.attempts).toBe(1);
  });

  it('stops at maxAttempts and throws the last error with its attempt count', async () => {
    const s = await serve((_req, res) => envelope(res, 503, 'SERVICE_UNAVAILABLE', { 'retry-after': '0' }));
    const client = new FolioClient({ baseUrl: s.url, apiKey: KEY, retry: { maxAttempts: 3, baseDelayMs: 20 } });
    const err = await client.verifyKey().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FolioUnavailableError);
    expect((err as FolioApiError).attempts).toBe(3);
    expect(s.arrivals).toHaveLength(3);
  });

  it('does not wait for a Retry-After beyond maxDelayMs: the error comes at once, with retryAfter', async () => {
    const s = await serve((_req, res) => envelope(res, 429, 'RATE_LIMIT_ERROR', { 'retry-after': '120' }));
    const client = new FolioClient({ baseUrl: s.url, apiKey: KEY, retry: { maxDelayMs: 5000 } });
    const t0 = performance.now();
    const err = (await client.listKeys().catch((e: unknown) => e)) as FolioRateLimitError;
    expect(err).toBeInstanceOf(FolioRateLimitError);
    expect(err.retryAfter).toBe(120);
    expect(s.arrivals).toHaveLength(1);
    expect(performance.now() - t0).toBeLessThan(3000);
  });

  it('does not start a wait that would end past the deadline', async () => {
    const s = await serve((_req, res) => envelope(res, 503, 'SERVICE_UNAVAILABLE', { 'retry-after': '2' }));
    const client = new FolioClient({ baseUrl: s.url, apiKey: KEY });
    const t0 = performance.now();
    const err = await client.listKeys({ deadlineMs: 1500 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FolioUnavailableError);
    expect(s.arrivals).toHaveLength(1);
    expect(performance.now() - t0).toBeLessThan(1500);
  });

  it('with retries disabled, throws the typed error carrying the envelope', async () => {
    const s = await serve((_req, res) => envelope(res, 429, 'RATE_LIMIT_ERROR', { 'retry-after': '1' }));
    const client = new FolioClient({ baseUrl: s.url, apiKey: KEY, retry: false });
    const err = (await client.verify({ base64: 'JVBERi0=' }, { requestId: 'client-chosen-id' }).catch((e: unknown) => e)) as FolioRateLimitError;
    expect(err).toBeInstanceOf(FolioRateLimitError);
    expect(err).toBeInstanceOf(FolioApiError);
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('FolioRateLimitError');
    expect({ status: err.status, code: err.code, requestId: err.requestId, retryAfter: err.retryAfter, attempts: err.attempts }).toEqual({
      status: 429,
      code: 'RATE_LIMIT_ERROR',
      requestId: 'client-chosen-id',
      retryAfter: 1,
      attempts: 1,
    });
    expect(err.error).toBe('Too Many Requests');
    expect(s.arrivals).toHaveLength(1);
  });
});

describe('what is retried', () => {
  it('never retries a POST on another status (500, 502, 504, 422)', async () => {
    for (const [status, code] of [
      [500, 'INTERNAL_ERROR'],
      [502, 'HTTP_ERROR'],
      [504, 'CONVERSION_TIMEOUT'],
      [422, 'UNPROCESSABLE_DOCUMENT'],
    ] as const) {
      const s = await serve((_req, res) => envelope(res, status, code, { 'retry-after': '0' }));
      const client = new FolioClient({ baseUrl: s.url, apiKey: KEY, retry: { baseDelayMs: 10 } });
      const err = (await client
        .sign({ document: { base64: 'AA==' }, signer: { name: 'Ada', email: 'a@b.c' }, auditTrail: [] })
        .catch((e: unknown) => e)) as FolioApiError;
      expect(err.status).toBe(status);
      expect(s.arrivals, `${status}`).toHaveLength(1);
    }
  });

  it('retries an idempotent GET on 502/504 but not on 400/401/404/500', async () => {
    const s = await serve((_req, res, i) =>
      i === 0 ? envelope(res, 502, 'HTTP_ERROR') : i === 1 ? envelope(res, 504, 'HTTP_ERROR') : okJson(res, { keys: [] }),
    );
    const client = new FolioClient({ baseUrl: s.url, apiKey: KEY, retry: { baseDelayMs: 10 } });
    await client.listKeys();
    expect(s.arrivals).toHaveLength(3);
    for (const [status, code, Class] of [
      [400, 'VALIDATION_ERROR', FolioValidationError],
      [401, 'AUTHENTICATION_ERROR', FolioAuthenticationError],
      [500, 'INTERNAL_ERROR', FolioServerError],
    ] as const) {
      const t = await serve((_req, res) => envelope(res, status, code, {}, [{ field: 'x', issue: 'y' }]));
      const c = new FolioClient({ baseUrl: t.url, apiKey: KEY, retry: { baseDelayMs: 10 } });
      const err = (await c.listKeys().catch((e: unknown) => e)) as FolioApiError;
      expect(err).toBeInstanceOf(Class);
      expect(err.details).toEqual([{ field: 'x', issue: 'y' }]);
      expect(t.arrivals).toHaveLength(1);
    }
  });

  it('keeps a non-envelope error body (a proxy page) as the message, with the status family', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<h1>Bad gateway</h1>');
    });
    const client = new FolioClient({ baseUrl: s.url, apiKey: KEY, retry: false });
    const err = (await client.listKeys().catch((e: unknown) => e)) as FolioApiError;
    expect(err).toBeInstanceOf(FolioServerError);
    expect(err.code).toBe('HTTP_ERROR');
    expect(err.message).toContain('Bad gateway');
  });

  it('does not retry a POST whose connection dropped after it was sent', async () => {
    const s = await serve((req) => req.socket.destroy());
    const client = new FolioClient({ baseUrl: s.url, apiKey: KEY, retry: { baseDelayMs: 10 } });
    const err = (await client.verify({ base64: 'AA==' }).catch((e: unknown) => e)) as FolioNetworkError;
    expect(err).toBeInstanceOf(FolioNetworkError);
    expect(err.status).toBe(0);
    expect(err.code).toBe('NETWORK_ERROR');
    expect(err.cause).toBeDefined();
    expect(s.arrivals).toHaveLength(1);
  });

  it('does not retry register or verifyEmail after a dropped connection (a mail sent, a code spent), but does on 429', async () => {
    const s = await serve((req) => req.socket.destroy());
    const client = new FolioClient({ baseUrl: s.url, retry: { baseDelayMs: 10 } });
    expect(await client.register('a@example.org').catch((e: unknown) => e)).toBeInstanceOf(FolioNetworkError);
    expect(await client.verifyEmail('a@example.org', '123456').catch((e: unknown) => e)).toBeInstanceOf(FolioNetworkError);
    expect(s.arrivals).toHaveLength(2);
    const t = await serve((_req, res, i) =>
      i === 0
        ? envelope(res, 429, 'RATE_LIMIT_ERROR', { 'retry-after': '0' })
        : okJson(res, { message: 'm', email: 'a@example.org', expiresInSeconds: 900 }),
    );
    const c = new FolioClient({ baseUrl: t.url, retry: { baseDelayMs: 10 } });
    expect((await c.register('a@example.org')).expiresInSeconds).toBe(900);
    expect(t.arrivals).toHaveLength(2);
    expect(t.arrivals[0]!.headers.authorization).toBeUndefined();
  });

  it('retries an idempotent GET whose connection dropped', async () => {
    const s = await serve((req, res, i) => (i === 0 ? req.socket.destroy() : okJson(res, { keys: [] })));
    const client = new FolioClient({ baseUrl: s.url, apiKey: KEY, retry: { baseDelayMs: 10 } });
    expect(await client.listKeys()).toEqual([]);
    expect(s.arrivals).toHaveLength(2);
  });

  it('retries a POST when the connection was refused (the server never saw it)', async () => {
    const s = await serve(() => undefined);
    const url = s.url;
    await s.close();
    servers.length = 0;
    const events: RetryEvent[] = [];
    const client = new FolioClient({ baseUrl: url, apiKey: KEY, retry: { maxAttempts: 3, baseDelayMs: 10 }, onRetry: (e) => events.push(e) });
    const err = await client.verify({ base64: 'AA==' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FolioNetworkError);
    expect((err as FolioNetworkError).attempts).toBe(3);
    expect(events).toHaveLength(2);
  });
});

describe('AbortSignal and timeouts', () => {
  it('an abort during a back-off sleep rejects at once with AbortError', async () => {
    const s = await serve((_req, res) => envelope(res, 503, 'SERVICE_UNAVAILABLE', { 'retry-after': '20' }));
    const client = new FolioClient({ baseUrl: s.url, apiKey: KEY, retry: { maxDelayMs: 60_000 } });
    const ctrl = new AbortController();
    let sleeping = 0;
    const t0 = performance.now();
    const p = client.listKeys({ signal: ctrl.signal, onRetry: () => (sleeping = performance.now()) });
    const err = p.catch((e: unknown) => e);
    while (!sleeping) await new Promise((r) => setTimeout(r, 10));
    ctrl.abort();
    const aborted = performance.now();
    const e = (await err) as Error;
    expect(e.name).toBe('AbortError');
    expect(performance.now() - aborted).toBeLessThan(1000);
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(s.arrivals).toHaveLength(1);
  });

  it('an abort while the request is in flight rejects with AbortError; an aborted signal sends nothing', async () => {
    const s = await serve((_req, res) => setTimeout(() => okJson(res, { keys: [] }), 5000));
    const client = new FolioClient({ baseUrl: s.url, apiKey: KEY });
    const t0 = performance.now();
    const e = (await client.listKeys({ signal: AbortSignal.timeout(200) }).catch((x: unknown) => x)) as Error;
    expect(e.name).toBe('TimeoutError'); // the signal's own reason, as fetch gives it
    expect(performance.now() - t0).toBeLessThan(3000);
    const ctrl = new AbortController();
    ctrl.abort();
    const e2 = (await client.listKeys({ signal: ctrl.signal }).catch((x: unknown) => x)) as Error;
    expect(e2.name).toBe('AbortError');
    expect(s.arrivals).toHaveLength(1);
  });

  it('a per-attempt timeout is a FolioTimeoutError; an idempotent call is retried after it', async () => {
    const s = await serve((_req, res, i) => (i === 1 ? okJson(res, { keys: [] }) : setTimeout(() => okJson(res, { keys: ['late'] }), 4000)));
    const client = new FolioClient({ baseUrl: s.url, apiKey: KEY, timeoutMs: 300 });
    const t0 = performance.now();
    expect(await client.listKeys({ retry: { baseDelayMs: 10 } })).toEqual([]);
    expect(s.arrivals).toHaveLength(2);
    expect(performance.now() - t0).toBeLessThan(3500);

    const err = (await client.listKeys({ retry: false }).catch((e: unknown) => e)) as FolioTimeoutError;
    expect(err).toBeInstanceOf(FolioTimeoutError);
    expect(err).toMatchObject({ status: 0, code: 'CLIENT_TIMEOUT', timeout: 'attempt' });
  }, 30_000);

  it('a POST that times out is not retried', async () => {
    const s = await serve((_req, res) => setTimeout(() => okJson(res, {}), 3000));
    const client = new FolioClient({ baseUrl: s.url, apiKey: KEY, timeoutMs: 300, retry: { baseDelayMs: 10 } });
    const err = (await client.verify({ base64: 'AA==' }).catch((e: unknown) => e)) as FolioTimeoutError;
    expect(err).toBeInstanceOf(FolioTimeoutError);
    expect(err.timeout).toBe('attempt');
    expect(s.arrivals).toHaveLength(1);
  });

  it('the overall deadline ends a slow call', async () => {
    const s = await serve((_req, res) => setTimeout(() => okJson(res, {}), 3000));
    const client = new FolioClient({ baseUrl: s.url, apiKey: KEY });
    const t0 = performance.now();
    const err = (await client.listKeys({ deadlineMs: 400 }).catch((e: unknown) => e)) as FolioTimeoutError;
    expect(err).toBeInstanceOf(FolioTimeoutError);
    expect(err.timeout).toBe('deadline');
    expect(performance.now() - t0).toBeLessThan(2500);
  });
});

describe('errors across bundles and the browser bundle', () => {
  const dist = path.join(ROOT, 'packages/client/dist/folio-client.min.js');
  it.skipIf(!fs.existsSync(dist))('instanceof holds between the sources and the built browser bundle', async () => {
    const other = (await import(dist)) as typeof import('../../packages/client/src/index.js');
    const fromBundle = new other.FolioRateLimitError(429, 'RATE_LIMIT_ERROR', 'm', 'r', undefined, 1);
    expect(fromBundle).toBeInstanceOf(FolioRateLimitError);
    expect(fromBundle).toBeInstanceOf(FolioApiError);
    expect(fromBundle).not.toBeInstanceOf(FolioUnavailableError);
    expect(fromBundle.name).toBe('FolioRateLimitError');
    const fromSource = new FolioUnavailableError(503, 'SERVICE_UNAVAILABLE', 'm');
    expect(fromSource).toBeInstanceOf(other.FolioUnavailableError);
    expect(fromSource).toBeInstanceOf(other.FolioApiError);
    expect(fromSource).not.toBeInstanceOf(other.FolioRateLimitError);
    expect(new Error('x')).not.toBeInstanceOf(other.FolioApiError);
  });

  it('the browser bundle builds from the sources and has no node: import', async () => {
    const out = await build({
      entryPoints: [path.join(ROOT, 'packages/client/src/index.ts')],
      bundle: true,
      format: 'esm',
      platform: 'browser',
      write: false,
      logLevel: 'silent',
    });
    const code = out.outputFiles[0]!.text;
    expect(code).not.toMatch(/(?:from\s*|import\s*\(?\s*)["']node:/);
    expect(code).not.toMatch(/\brequire\s*\(/);
    expect(code).toContain('FolioRateLimitError');
  });
});
