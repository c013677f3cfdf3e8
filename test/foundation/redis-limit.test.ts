/** REDIS_URL: two API instances share one key's 10 in-flight slots (CONTRACT §9, beyond). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { randomBytes } from 'node:crypto';
import { buildApiApp } from '../../src/http/app.js';
import { RedisInFlightLimiter } from '../../src/http/in-flight.js';
import { generateApiKey } from '../../src/auth/keys.js';
import { REDIS_URL, redisReachable } from '../support/redis.js';

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
