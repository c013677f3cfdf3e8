/**
 * REDIS_URL: two API instances share one key's 10 in-flight slots (README § Configuration) and the per-client
 * register/verify windows; with Redis unreachable the API serves with in-process limits and says so in health.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { randomBytes } from 'node:crypto';
import { buildApiApp } from '../../src/http/app.js';
import { RedisInFlightLimiter } from '../../src/http/in-flight.js';
import { generateApiKey } from '../../src/auth/keys.js';
import { REDIS_URL, redisReachable } from '../support/redis.js';
import net from 'node:net';
import { startTestApi, type TestApi } from '../helpers/api.js';

const redisUp = await redisReachable('the shared in-flight limit suite');

describe.skipIf(!redisUp)('per-key in-flight limit shared through Redis', () => {
  const apps: FastifyInstance[] = [];
  const limiters: RedisInFlightLimiter[] = [];
  const urls: string[] = [];
  const release: Array<() => void> = [];
  const apiKey = generateApiKey();
  const keyId = `key_${randomBytes(6).toString('hex')}`;

  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      const limiter = new RedisInFlightLimiter(REDIS_URL, 10);
      limiters.push(limiter);
      expect(await limiter.ready()).toBe(true);
      const app = await buildApiApp({
        logger: pino({ level: 'silent' }),
        authenticator: { authenticate: async (k) => (k === apiKey ? { keyId, email: 'r@example.com' } : null) },
        limiter,
        routes: [
          async (a) => {
            a.post('/t/doc', { config: { auth: true, documentEndpoint: true } }, async () => {
              await new Promise<void>((r) => release.push(r));
              return { ok: true };
            });
          },
        ],
      });
      await app.listen({ host: '127.0.0.1', port: 0 });
      apps.push(app);
      urls.push(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`);
    }
  });
  afterAll(async () => {
    release.splice(0).forEach((r) => r());
    for (const a of apps) await a.close();
    for (const l of limiters) await l.close();
  });

  it('ten on instance A make the eleventh on instance B a 429; a finished one frees a slot for B', async () => {
    const headers = { authorization: `Bearer ${apiKey}` };
    const held = Array.from({ length: 10 }, () => fetch(`${urls[0]}/t/doc`, { method: 'POST', headers }));
    while (release.length < 10) await new Promise((r) => setTimeout(r, 10));
    expect(await limiters[1]!.inFlight(keyId)).toBe(10);
    const eleventh = await fetch(`${urls[1]}/t/doc`, { method: 'POST', headers });
    expect(eleventh.status).toBe(429);
    expect(((await eleventh.json()) as { code: string }).code).toBe('RATE_LIMIT_ERROR');
    release.shift()!();
    expect((await held[0]!).status).toBe(200);
    const twelfth = fetch(`${urls[1]}/t/doc`, { method: 'POST', headers });
    while (release.length < 10) await new Promise((r) => setTimeout(r, 10));
    release.splice(0).forEach((r) => r());
    expect((await twelfth).status).toBe(200);
    await Promise.all(held);
    await new Promise((r) => setTimeout(r, 50));
    expect(await limiters[0]!.inFlight(keyId)).toBe(0);
  });
});

describe.skipIf(!redisUp)('register and verify windows shared through Redis', () => {
  const apis: TestApi[] = [];
  // A prefix of our own: the machine's Redis is shared with other test runs counting 127.0.0.1 too.
  const prefix = `folio-test-${randomBytes(4).toString('hex')}:`;

  beforeAll(async () => {
    for (let i = 0; i < 2; i++) apis.push(await startTestApi({ env: { REDIS_URL, REDIS_KEY_PREFIX: prefix } }));
  });
  afterAll(async () => {
    for (const a of apis) await a.close();
  });

  it('20 registers from one client spread over A and B, then the 21st is 429 on either', async () => {
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${apis[i % 2]!.url}/v1/auth/register?email=win${i}@example.com`);
      expect(res.status).toBe(200);
      await res.body?.cancel();
    }
    for (const a of apis) {
      const res = await fetch(`${a.url}/v1/auth/register?email=win-over@example.com`);
      expect(res.status).toBe(429);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(500);
      expect(((await res.json()) as { code: string }).code).toBe('RATE_LIMIT_ERROR');
    }
  });

  it('30 verifies from one client spread over A and B, then the 31st is 429 on either', async () => {
    for (let i = 0; i < 30; i++) {
      const res = await fetch(`${apis[i % 2]!.url}/v1/auth/verify?email=nobody${i}@example.com&code=123456`);
      expect(res.status).toBe(400);
      await res.body?.cancel();
    }
    for (const a of apis) {
      const res = await fetch(`${a.url}/v1/auth/verify?email=nobody@example.com&code=123456`);
      expect(res.status).toBe(429);
      await res.body?.cancel();
    }
  });
});

describe('REDIS_URL set but Redis unreachable', () => {
  let t: TestApi;
  beforeAll(async () => {
    // A port nothing listens on.
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    const port = (probe.address() as net.AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    t = await startTestApi({ env: { REDIS_URL: `redis://127.0.0.1:${port}` } });
  });
  afterAll(async () => t?.close());

  it('serves with in-process limits, and /v1/health says "degraded" with the Redis state, still 200', async () => {
    const res = await fetch(`${t.url}/v1/health`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { status: string; engines: Record<string, Record<string, unknown>> };
    expect(body.status).toBe('degraded');
    expect(body.engines.coordination).toEqual({
      status: 'degraded',
      redis: 'unreachable',
      since: expect.any(String),
      invalidations: 'unsubscribed',
    });
    expect(Date.parse(body.engines.coordination!.since as string)).not.toBeNaN();
    const started = Date.now();
    const keys = await fetch(`${t.url}/v1/auth/keys`, { headers: { authorization: `Bearer ${t.apiKey}` } });
    expect(keys.status).toBe(200);
    const reg = await fetch(`${t.url}/v1/auth/register?email=noredis@example.com`);
    expect(reg.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
