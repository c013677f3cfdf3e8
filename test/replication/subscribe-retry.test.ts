/**
 * The revocation subscription recovers on its own (issue 14). Two replicas (DefaultAuthService on one SQLite
 * file) share a Redis of the test's own. Redis is made to refuse SUBSCRIBE (an ACL rule, which is exact
 * where racing a load spike is not) and the subscriber connections are dropped: the reconnected subscriber
 * is refused, reports itself unsubscribed, the key cache falls back to its short TTL, and once SUBSCRIBE
 * is allowed again the retry subscribes without any new connection, so a revocation on A is refused by B
 * on the very next request. A frozen Redis (SIGSTOP) is noticed by the subscriber's probe the same way.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { DefaultAuthService, DEFAULT_AUTH_POLICY, DEFAULT_KEY_CACHE } from '../../src/auth/service.js';
import { SqliteAuthStore } from '../../src/auth/store.js';
import type { Mailer } from '../../src/auth/mailer.js';
import { Coordination } from '../../src/coordination/redis.js';
import { OwnRedis, capturingLogger, freePort, hasRedisServer, until } from './own-redis.js';

if (!hasRedisServer) console.warn('redis-server is not installed: the subscription recovery suite is SKIPPED');

const noMail: Mailer = { send: async () => undefined, close: async () => undefined };

describe.skipIf(!hasRedisServer)('revocation subscription: retried until Redis acknowledges it', () => {
  let redis: OwnRedis;
  let admin: Redis;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-subscribe-'));
  const logB = capturingLogger();
  const replicas: Array<{ auth: DefaultAuthService; coordination: Coordination }> = [];

  beforeAll(async () => {
    redis = new OwnRedis(await freePort());
    await redis.start();
    admin = new Redis(redis.url, { lazyConnect: false, maxRetriesPerRequest: 1 });
    for (const logger of [pino({ level: 'silent' }), logB.logger]) {
      const coordination = new Coordination(redis.url, logger);
      const auth = new DefaultAuthService(
        new SqliteAuthStore(path.join(dir, 'folio.sqlite')),
        noMail,
        Buffer.alloc(32, 3),
        logger,
        DEFAULT_AUTH_POLICY,
        Date.now,
        {
          coordination,
        },
      );
      replicas.push({ auth, coordination });
      expect(await coordination.subscriptionReady()).toBe(true);
    }
  });
  afterAll(async () => {
    for (const r of replicas) {
      await r.auth.close();
      await r.coordination.close();
    }
    admin?.disconnect();
    if (redis?.child?.pid) redis.child.kill('SIGCONT');
    await redis?.stop();
    redis?.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a refused SUBSCRIBE is retried with back-off; meanwhile the cache uses its short TTL', async () => {
    const [a, b] = replicas as [(typeof replicas)[0], (typeof replicas)[0]];
    const issued = await a.auth.issueKey('sub@example.com');
    expect(await b.auth.authenticate(issued.apiKey)).toMatchObject({ keyId: issued.keyId });
    expect(b.auth.keyCacheState().ttlMs).toBe(DEFAULT_KEY_CACHE.subscribedTtlMs);

    await admin.call('ACL', 'SETUSER', 'default', '-subscribe');
    await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
    // The subscriber reconnects at once, is refused, and says so; the command connection stays up.
    expect(await until(() => logB.lines.some((l) => /SUBSCRIBE failed/.test(l.msg)), 5000)).toBe(true);
    expect(b.coordination.available).toBe(true);
    expect(b.coordination.isSubscribed).toBe(false);
    expect(b.coordination.status()).toMatchObject({ status: 'healthy', invalidations: 'unsubscribed' });
    expect(b.auth.keyCacheState().ttlMs).toBe(DEFAULT_KEY_CACHE.unsubscribedTtlMs);
    // Still refused after several retries: one warning for the episode, not one per attempt.
    await new Promise((r) => setTimeout(r, 1000));
    expect(b.coordination.isSubscribed).toBe(false);
    expect(logB.lines.filter((l) => /SUBSCRIBE failed/.test(l.msg))).toHaveLength(1);

    await admin.call('ACL', 'SETUSER', 'default', '+subscribe');
    // Back-off is at most 2 s: the same connection subscribes again without any reconnect.
    expect(await b.coordination.subscriptionReady(4000)).toBe(true);
    expect(await a.coordination.subscriptionReady(4000)).toBe(true);
    expect(b.auth.keyCacheState().ttlMs).toBe(DEFAULT_KEY_CACHE.subscribedTtlMs);

    // Revocations propagate again: B caches the key (long TTL), A revokes, B refuses on the next request.
    expect(await b.auth.authenticate(issued.apiKey)).toMatchObject({ keyId: issued.keyId });
    expect(await a.auth.revokeKey({ keyId: issued.keyId, email: 'sub@example.com' }, issued.keyId)).toBe(true);
    expect(await b.auth.authenticate(issued.apiKey)).toBeNull();
  });

  it('a subscriber that stops answering (frozen Redis) is reported unsubscribed, then subscribes again', async () => {
    const [a, b] = replicas as [(typeof replicas)[0], (typeof replicas)[0]];
    const issued = await a.auth.issueKey('frozen@example.com');
    expect(await b.auth.authenticate(issued.apiKey)).not.toBeNull();
    redis.child!.kill('SIGSTOP');
    try {
      // The probe (every second, 250 ms timeout) notices without any request.
      expect(await until(() => !b.coordination.isSubscribed, 4000)).toBe(true);
      expect(b.auth.keyCacheState().ttlMs).toBe(DEFAULT_KEY_CACHE.unsubscribedTtlMs);
    } finally {
      redis.child!.kill('SIGCONT');
    }
    expect(await b.coordination.subscriptionReady(8000)).toBe(true);
    expect(await a.coordination.subscriptionReady(8000)).toBe(true);
    expect(await b.auth.authenticate(issued.apiKey)).not.toBeNull();
    expect(await a.auth.revokeKey({ keyId: issued.keyId, email: 'frozen@example.com' }, issued.keyId)).toBe(true);
    expect(await b.auth.authenticate(issued.apiKey)).toBeNull();
  });
});
