/**
 * The error envelope on every kind of failure, the per-key in-flight limit, and bad input that must get a
 * clear 4xx while the server stays healthy.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { buildApiApp } from '../../src/http/app.js';
import { LocalInFlightLimiter } from '../../src/http/in-flight.js';
import { generateApiKey, isWellFormedApiKey } from '../../src/auth/keys.js';

async function expectEnvelope(res: Response, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = (await res.json()) as Record<string, unknown>;
  expect(body).toMatchObject({ code, requestId: res.headers.get('x-request-id') });
  expect(typeof body.error).toBe('string');
  expect(typeof body.message).toBe('string');
  return body;
}

/** Raw HTTP exchange for requests fetch refuses to send (huge request lines). */
function rawRequest(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let out = '';
    socket.on('data', (d) => (out += d.toString('latin1')));
    socket.on('end', () => resolve(out));
    socket.on('error', (e) => (out ? resolve(out) : reject(e)));
    socket.write(text);
  });
}

describe('error envelope on the real API', () => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi();
  });
  afterAll(async () => t?.close());

  it('404 for unknown paths with or without a key, 405 for a wrong method', async () => {
    await expectEnvelope(await fetch(`${t.url}/v1/nothing-here`), 404, 'NOT_FOUND');
    await expectEnvelope(await fetch(`${t.url}/v1/nothing-here`, { headers: { authorization: `Bearer ${t.apiKey}` } }), 404, 'NOT_FOUND');
    // `/` is the playground page; any other path outside /v1 that nothing serves is a 404.
    await expectEnvelope(await fetch(`${t.url}/nothing-here`), 404, 'NOT_FOUND');
    const res = await fetch(`${t.url}/v1/health`, { method: 'DELETE' });
    await expectEnvelope(res, 405, 'METHOD_NOT_ALLOWED');
    expect(res.headers.get('allow')).toContain('GET');
  });

  it('echoes a safe X-Request-Id and replaces an unsafe one', async () => {
    const ok = await fetch(`${t.url}/v1/nothing`, { headers: { 'x-request-id': 'abc-123' } });
    expect(ok.headers.get('x-request-id')).toBe('abc-123');
    expect(((await ok.json()) as { requestId: string }).requestId).toBe('abc-123');
    const bad = await fetch(`${t.url}/v1/health`, { headers: { 'x-request-id': 'x'.repeat(65) } });
    expect(bad.headers.get('x-request-id')).not.toBe('x'.repeat(65));
    expect(bad.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('401 for missing, malformed, garbage, bad-checksum and unknown keys', async () => {
    const key = generateApiKey();
    const flipped = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
    expect(isWellFormedApiKey(key)).toBe(true);
    expect(isWellFormedApiKey(flipped)).toBe(false);
    for (const header of [
      undefined,
      'Bearer',
      'Bearer ',
      'Basic abc',
      `Bearer ${'\u00ff'.repeat(10)}`,
      'Bearer garbage!!',
      `Bearer ${flipped}`,
      `Bearer ${key}`,
    ]) {
      const headers: Record<string, string> = {};
      if (header !== undefined) headers.authorization = header;
      await expectEnvelope(
        await fetch(`${t.url}/v1/auth/keys`, { headers }).catch(() => fetch(`${t.url}/v1/auth/keys`)),
        401,
        'AUTHENTICATION_ERROR',
      );
    }
  });

  it('400 for malformed e-mail and for a code with letters', async () => {
    const a = await expectEnvelope(await fetch(`${t.url}/v1/auth/register?email=not-an-email`), 400, 'VALIDATION_ERROR');
    expect(a.details).toEqual([{ field: 'email', issue: expect.any(String) }]);
    const b = await expectEnvelope(await fetch(`${t.url}/v1/auth/verify?email=a@example.com&code=12ab56`), 400, 'VALIDATION_ERROR');
    expect((b.details as Array<{ field: string }>)[0]!.field).toBe('code');
    await expectEnvelope(await fetch(`${t.url}/v1/auth/register`), 400, 'VALIDATION_ERROR');
  });

  it('a 10 MB query string gets a 4xx envelope and the server stays healthy', async () => {
    const port = new URL(t.url).port;
    const reply = await rawRequest(Number(port), `GET /v1/auth/register?email=${'a'.repeat(10 * 1024 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(reply).toMatch(/^HTTP\/1\.1 4\d\d /);
    expect(reply).toContain('"code":"VALIDATION_ERROR"');
    expect((await fetch(`${t.url}/v1/health`)).status).toBe(200);
  });
});

describe('error envelope for body failures and thrown faults (real app builder, test routes)', () => {
  let app: FastifyInstance;
  let url: string;
  const release: Array<() => void> = [];
  const key = { keyId: 'key_test', email: 't@example.com' };

  beforeAll(async () => {
    const apiKey = generateApiKey();
    app = await buildApiApp({
      logger: pino({ level: 'silent' }),
      authenticator: { authenticate: async (k) => (k === apiKey ? key : null) },
      limiter: new LocalInFlightLimiter(10),
      routes: [
        async (a) => {
          a.post(
            '/t/json',
            { schema: { body: { type: 'object', additionalProperties: false, properties: { n: { type: 'integer' } } } } },
            async (req) => req.body,
          );
          a.get('/t/boom', async () => {
            throw new Error('secret internal detail');
          });
          a.post('/t/doc', { config: { auth: true, documentEndpoint: true } }, async () => {
            await new Promise<void>((r) => release.push(r));
            return { ok: true };
          });
        },
      ],
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    (globalThis as Record<string, unknown>).__apiKey = apiKey;
  });
  afterAll(async () => {
    release.forEach((r) => r());
    await app?.close();
  });

  const json = (body: string, type = 'application/json') => ({ method: 'POST', headers: { 'content-type': type }, body });

  it('malformed JSON, empty body, unknown property, deep nesting, wrong content type', async () => {
    await expectEnvelope(await fetch(`${url}/t/json`, json('{"n":')), 400, 'VALIDATION_ERROR');
    await expectEnvelope(await fetch(`${url}/t/json`, json('')), 400, 'VALIDATION_ERROR');
    const unknown = await expectEnvelope(await fetch(`${url}/t/json`, json('{"n":1,"extra":2}')), 400, 'VALIDATION_ERROR');
    expect(unknown.details).toEqual([{ field: 'extra', issue: 'unknown property' }]);
    await expectEnvelope(await fetch(`${url}/t/json`, json('['.repeat(10_000) + ']'.repeat(10_000))), 400, 'VALIDATION_ERROR');
    await expectEnvelope(await fetch(`${url}/t/json`, json('{"n":1}', 'text/plain')), 415, 'UNSUPPORTED_MEDIA_TYPE');
    await expectEnvelope(await fetch(`${url}/t/json`, json('<x/>', 'application/xml')), 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('a body over the limit is refused from Content-Length with 413', async () => {
    const big = 'x'.repeat(40 * 1024 * 1024);
    await expectEnvelope(await fetch(`${url}/t/json`, json(`{"n":"${big}"}`)), 413, 'FILE_TOO_LARGE');
  });

  it('a thrown fault is a 500 envelope that does not leak the message', async () => {
    const body = await expectEnvelope(await fetch(`${url}/t/boom`), 500, 'INTERNAL_ERROR');
    expect(JSON.stringify(body)).not.toContain('secret internal detail');
  });

  it('holds 10 document requests per key; the 11th gets 429 with Retry-After; the 12th passes after one ends', async () => {
    const apiKey = (globalThis as Record<string, unknown>).__apiKey as string;
    const headers = { authorization: `Bearer ${apiKey}` };
    const held = Array.from({ length: 10 }, () => fetch(`${url}/t/doc`, { method: 'POST', headers }));
    while (release.length < 10) await new Promise((r) => setTimeout(r, 10));
    const eleventh = await fetch(`${url}/t/doc`, { method: 'POST', headers });
    await expectEnvelope(eleventh, 429, 'RATE_LIMIT_ERROR');
    expect(Number(eleventh.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    release.shift()!();
    expect((await held[0]!).status).toBe(200);
    const twelfth = fetch(`${url}/t/doc`, { method: 'POST', headers });
    while (release.length < 10) await new Promise((r) => setTimeout(r, 10));
    release.splice(0).forEach((r) => r());
    expect((await twelfth).status).toBe(200);
    for (const h of held.slice(1)) expect((await h).status).toBe(200);
  });

  it('an aborted document request gives its slot back', async () => {
    const apiKey = (globalThis as Record<string, unknown>).__apiKey as string;
    const controllers = Array.from({ length: 10 }, () => new AbortController());
    const held = controllers.map((c) =>
      fetch(`${url}/t/doc`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}` }, signal: c.signal }).catch(() => null),
    );
    while (release.length < 10) await new Promise((r) => setTimeout(r, 10));
    controllers.forEach((c) => c.abort());
    await Promise.all(held);
    release.splice(0).forEach((r) => r());
    await new Promise((r) => setTimeout(r, 100));
    const next = fetch(`${url}/t/doc`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}` } });
    while (release.length < 1) await new Promise((r) => setTimeout(r, 10));
    release.splice(0).forEach((r) => r());
    expect((await next).status).toBe(200);
  });
});
