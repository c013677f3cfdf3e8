/**
 * The key-lookup cache across instances (issue 14): two DefaultAuthService instances share one store (a
 * SQLite file, and a PostgreSQL database when the machine has one) and one Redis, as two replicas do.
 * A key revoked on A is refused by B on the very next authenticate; without Redis, B refuses within the
 * short TTL; unknown keys are never cached; a dropped subscription flushes the cache and shortens the TTL.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import { DefaultAuthService, DEFAULT_AUTH_POLICY, type KeyCacheOptions } from '../../src/auth/service.js';
import { PostgresAuthStore, SqliteAuthStore, type AuthStore } from '../../src/auth/store.js';
import type { Mailer } from '../../src/auth/mailer.js';
import { generateApiKey, generateKeyId, hashApiKey } from '../../src/auth/keys.js';
import { Coordination } from '../../src/coordination/redis.js';
import { REDIS_URL, redisReachable } from '../support/redis.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/postgres.js';

const redisUp = await redisReachable('the key cache invalidation suite');
const pgUp = await postgresAvailable();
if (!pgUp) console.warn('PostgreSQL is not reachable at 127.0.0.1:5432: the PostgreSQL variant of the key cache suite is SKIPPED');

const silent = pino({ level: 'silent' });
const noMail: Mailer = { send: async () => undefined, close: async () => undefined };
const secret = Buffer.alloc(32, 7);

interface Backend {
  open(): Promise<AuthStore>;
  cleanup(): Promise<void>;
}

function sqliteBackend(): Backend {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-keycache-'));
  const file = path.join(dir, 'folio.sqlite');
  return { open: async () => new SqliteAuthStore(file), cleanup: async () => fs.rmSync(dir, { recursive: true, force: true }) };
}

async function postgresBackend(): Promise<Backend> {
  const db: TestDatabase = await createTestDatabase('folio_keycache');
  return { open: () => PostgresAuthStore.open(db.url), cleanup: () => db.drop() };
}

function service(store: AuthStore, coordination?: Coordination, keyCache?: Partial<KeyCacheOptions>) {
  return new DefaultAuthService(store, noMail, secret, silent, DEFAULT_AUTH_POLICY, Date.now, { coordination, keyCache });
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Two replicas: each its own store handle and (optionally) its own Redis connections. */
async function replicas(backend: Backend, withRedis: boolean, keyCache?: Partial<KeyCacheOptions>) {
  const out = [];
  for (let i = 0; i < 2; i++) {
    const coordination = withRedis ? new Coordination(REDIS_URL, silent) : undefined;
    const auth = service(await backend.open(), coordination, keyCache);
    cleanups.push(async () => {
      await auth.close();
      await coordination?.close();
    });
    if (coordination) {
      expect(await coordination.ready()).toBe(true);
      expect(await coordination.subscriptionReady()).toBe(true);
    }
    out.push({ auth, coordination });
  }
  cleanups.push(() => backend.cleanup());
  return out as [(typeof out)[0], (typeof out)[0]];
}

const backends: Array<[string, () => Promise<Backend>, boolean]> = [
  ['sqlite', async () => sqliteBackend(), true],
  ['postgres', postgresBackend, pgUp],
];

for (const [name, makeBackend, available] of backends) {
  describe.skipIf(!redisUp || !available)(`key cache with Redis invalidation (${name})`, () => {
    it('a key revoked on A is refused by B on the very next authenticate, and A too', async () => {
      const [a, b] = await replicas(await makeBackend(), true);
      const issued = await a.auth.issueKey('owner@example.com');
      // B answers from its cache from now on (the long TTL, since it is subscribed).
      expect(await b.auth.authenticate(issued.apiKey)).toEqual({ keyId: issued.keyId, email: 'owner@example.com' });
      expect(b.auth.keyCacheState()).toEqual({ entries: 1, ttlMs: 60_000 });
      expect(await a.auth.authenticate(issued.apiKey)).not.toBeNull();
      expect(await a.auth.revokeKey({ keyId: issued.keyId, email: 'owner@example.com' }, issued.keyId)).toBe(true);
      expect(await b.auth.authenticate(issued.apiKey)).toBeNull();
      expect(await a.auth.authenticate(issued.apiKey)).toBeNull();
    });

    it('many revocations in a row each reach the other replica before the revoking call returns', async () => {
      const [a, b] = await replicas(await makeBackend(), true);
      for (let i = 0; i < 20; i++) {
        const issued = await a.auth.issueKey(`many${i}@example.com`);
        expect(await b.auth.authenticate(issued.apiKey)).not.toBeNull();
        await a.auth.revokeKey({ keyId: issued.keyId, email: `many${i}@example.com` }, issued.keyId);
        expect(await b.auth.authenticate(issued.apiKey)).toBeNull();
      }
    });

    it('never caches an unknown key: a key issued elsewhere works at once', async () => {
      const [a, b] = await replicas(await makeBackend(), true);
      const rawKey = generateApiKey();
      expect(await b.auth.authenticate(rawKey)).toBeNull();
      expect(b.auth.keyCacheState().entries).toBe(0);
      // A stores the key (as issueKey does) with the hash of the key B was just asked about.
      const keyId = generateKeyId();
      await (a.auth as unknown as { store: AuthStore }).store.insertKey({
        keyId,
        email: 'late@example.com',
        keyHash: hashApiKey(rawKey),
        createdAt: Date.now(),
        lastUsedAt: null,
        revokedAt: null,
      });
      expect(await b.auth.authenticate(rawKey)).toEqual({ keyId, email: 'late@example.com' });
    });

    it('flushes the cache and uses the short TTL while the subscription is down, then the long one again', async () => {
      const [a, b] = await replicas(await makeBackend(), true);
      const issued = await a.auth.issueKey('drop@example.com');
      expect(await b.auth.authenticate(issued.apiKey)).not.toBeNull();
      expect(b.auth.keyCacheState().entries).toBe(1);
      // Break B's subscriber connection the way a network drop would.
      (b.coordination as unknown as { subscriber: { stream: { destroy(): void } } }).subscriber.stream.destroy();
      const deadline = Date.now() + 2000;
      while (b.coordination!.isSubscribed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      expect(b.coordination!.isSubscribed).toBe(false);
      expect(b.auth.keyCacheState()).toEqual({ entries: 0, ttlMs: 5_000 });
      // ioredis reconnects; the subscription is acknowledged again and the long TTL is back.
      expect(await b.coordination!.subscriptionReady(5000)).toBe(true);
      expect(b.auth.keyCacheState().ttlMs).toBe(60_000);
      expect(await b.auth.authenticate(issued.apiKey)).not.toBeNull();
      await a.auth.revokeKey({ keyId: issued.keyId, email: 'drop@example.com' }, issued.keyId);
      expect(await b.auth.authenticate(issued.apiKey)).toBeNull();
    });
  });

  describe.skipIf(!available)(`key cache without Redis (${name})`, () => {
    it('B refuses a key revoked on A within the short TTL', async () => {
      const [a, b] = await replicas(await makeBackend(), false, { unsubscribedTtlMs: 1000 });
      const issued = await a.auth.issueKey('ttl@example.com');
      expect(await b.auth.authenticate(issued.apiKey)).not.toBeNull();
      expect(b.auth.keyCacheState()).toEqual({ entries: 1, ttlMs: 1000 });
      const revokedAt = Date.now();
      await a.auth.revokeKey({ keyId: issued.keyId, email: 'ttl@example.com' }, issued.keyId);
      // A (the revoking instance) refuses at once; B within its TTL.
      expect(await a.auth.authenticate(issued.apiKey)).toBeNull();
      let refusedAfter = -1;
      while (Date.now() - revokedAt < 3000) {
        if ((await b.auth.authenticate(issued.apiKey)) === null) {
          refusedAfter = Date.now() - revokedAt;
          break;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(refusedAfter).toBeGreaterThanOrEqual(0);
      expect(refusedAfter).toBeLessThanOrEqual(1100);
    });

    it('the default TTL without Redis is 5 s and the cache is bounded', async () => {
      const [a] = await replicas(await makeBackend(), false, { maxEntries: 3 });
      expect(a.auth.keyCacheState().ttlMs).toBe(5_000);
      const keys = [];
      for (let i = 0; i < 5; i++) keys.push(await a.auth.issueKey(`lru${i}@example.com`));
      for (const k of keys) expect(await a.auth.authenticate(k.apiKey)).not.toBeNull();
      expect(a.auth.keyCacheState().entries).toBe(3);
    });
  });
}
