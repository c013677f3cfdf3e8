/**
 * Issue 14: Folio as several replicas on one PostgreSQL and one Redis. Two API processes (A, B) and one
 * ingest, started from the compiled build on the machine's PostgreSQL (a fresh database per run) and Redis
 * (a database index claimed for the run, and a REDIS_KEY_PREFIX of its own), with a real SMTP server in this
 * process receiving the codes.
 *
 * 1. a code requested through A is accepted by B;
 * 2. a key issued on A works on B;
 * 3. a key revoked on A is refused (401) by B on the very next request;
 * 4. 14 concurrent slow requests with one key, 7 on A and 7 on B: exactly 10 admitted, 4 × 429 with
 *    Retry-After, no 5xx ("slow" = /v1/verify of a `document.url` served by a local HTTP server that holds
 *    the answer until the test releases it, so each admitted request holds its slot as long as needed);
 * 5. the per-client register window (20 per 10 minutes, the client being 127.0.0.1 for both) holds across
 *    A and B together;
 * 6. SIGKILL of A during mixed traffic (telemetry to the ingest, document and auth requests to A and B)
 *    leaves B answering every request, and every event the ingest acknowledged is in PostgreSQL; the
 *    slots A died holding are free again once their lease (SLOT_LEASE_MS) has passed: B admits all 10;
 * 7. with a redis-server of our own: stopping it degrades to per-process limits (A alone admits 10 of 12),
 *    with a warning in A's log and /v1/health naming Redis as degraded; once it is back, health recovers
 *    within seconds and the limit is shared again (7 + 7 → 10 + 4).
 *
 * Skips, with a printed reason, only when PostgreSQL or Redis is absent.
 */
import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/postgres.js';
import { codeFrom, startTestSmtp, type TestSmtp } from '../helpers/smtp.js';
import { REDIS_URL, redisReachable } from '../support/redis.js';
import { SLOT_LEASE_MS } from '../../src/http/in-flight.js';
import {
  CLAIM_KEY,
  HeldDocumentServer,
  OwnRedis,
  REDIS_SERVER_BIN,
  Replica,
  claimRedisDb,
  folioEntry,
  redisKeys,
  sleep,
  smallPdf,
  until,
} from './cluster.js';

const SUITE = 'the multi-instance suite (test/replicas, issue 14)';
const pgUp = await postgresAvailable();
if (!pgUp) console.warn(`PostgreSQL is not reachable at ${process.env.FOLIO_TEST_PG_ADMIN_URL ?? '127.0.0.1:5432'}: ${SUITE} is SKIPPED`);
const redisUp = await redisReachable(SUITE);
const ownRedisPossible = fs.existsSync(REDIS_SERVER_BIN);
if (pgUp && redisUp && !ownRedisPossible) console.warn(`${REDIS_SERVER_BIN} is missing: the Redis-outage part of ${SUITE} is SKIPPED`);

/** The server's per-client register window (src/auth/service.ts DEFAULT_AUTH_POLICY.registerPerClient). */
const REGISTER_PER_CLIENT = 20;
const MAX_IN_FLIGHT = 10;
const ADMIN_TOKEN = 'replicas-admin-token-0123456789';

interface Answer {
  target: string;
  status: number;
  retryAfter: string | null;
  code?: string;
  error?: string;
}

interface IssuedKey {
  apiKey: string;
  keyId: string;
  email: string;
}

const runId = randomBytes(4).toString('hex');
let emailSeq = 0;
/** REDIS_KEY_PREFIX of this run's servers: their keys and channels only. */
const KEY_PREFIX = `folio-replicas-${runId}:`;
const newEmail = (label: string) => `replica-${label}-${runId}-${emailSeq++}@example.com`;

async function call(target: Replica, path: string, init: RequestInit = {}, timeoutMs = 60_000): Promise<Answer> {
  try {
    const r = await fetch(target.url + path, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    const text = await r.text();
    let code: string | undefined;
    try {
      code = (JSON.parse(text) as { code?: string }).code;
    } catch {
      /* not JSON */
    }
    return { target: target.name, status: r.status, retryAfter: r.headers.get('retry-after'), code };
  } catch (e) {
    const err = e as Error & { cause?: Error };
    return { target: target.name, status: 0, retryAfter: null, error: `${err.name}: ${err.cause?.message ?? err.message}` };
  }
}

const bearer = (key: IssuedKey) => ({ authorization: `Bearer ${key.apiKey}` });

/** Register → code from the SMTP server → verify, on the given replicas. */
class Registrar {
  /** Register requests answered 200 so far, i.e. hits counted in the client's window. */
  admitted = 0;
  constructor(private readonly smtp: TestSmtp) {}

  async register(target: Replica, email: string): Promise<Answer> {
    const a = await call(target, `/v1/auth/register?email=${encodeURIComponent(email)}`);
    if (a.status === 200) this.admitted++;
    return a;
  }

  async code(email: string): Promise<string> {
    return codeFrom(await this.smtp.waitFor(email, 20_000));
  }

  async verify(target: Replica, email: string, code: string): Promise<{ status: number; body: Record<string, unknown> }> {
    const r = await fetch(`${target.url}/v1/auth/verify?email=${encodeURIComponent(email)}&code=${code}`, { signal: AbortSignal.timeout(60_000) });
    return { status: r.status, body: (await r.json()) as Record<string, unknown> };
  }

  async key(registerOn: Replica, verifyOn: Replica, label: string): Promise<IssuedKey> {
    const email = newEmail(label);
    const reg = await this.register(registerOn, email);
    expect(reg.status, `register on ${registerOn.name}: ${JSON.stringify(reg)}`).toBe(200);
    const ver = await this.verify(verifyOn, email, await this.code(email));
    expect(ver.status, `verify on ${verifyOn.name}: ${JSON.stringify(ver.body)}`).toBe(200);
    return { apiKey: ver.body.apiKey as string, keyId: ver.body.keyId as string, email };
  }
}

/** POST /v1/verify of a document fetched from the held-document server: holds a slot until released. */
function heldRequest(target: Replica, key: IssuedKey, docs: HeldDocumentServer): Promise<Answer> {
  return call(target, '/v1/verify', {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify({ document: { url: docs.url } }),
  });
}

/**
 * Sends `counts[i]` held requests to `targets[i]`, all at once; waits until every one is either held at the
 * document server (admitted) or answered (refused), then releases the held ones and returns every answer
 * together with how many were held at that moment.
 */
async function slotRace(
  targets: Replica[],
  counts: number[],
  key: IssuedKey,
  docs: HeldDocumentServer,
): Promise<{ answers: Answer[]; held: number }> {
  docs.hold();
  const baseWaiting = docs.waiting;
  expect(baseWaiting).toBe(0);
  let answered = 0;
  const total = counts.reduce((a, b) => a + b, 0);
  const pending = targets.flatMap((t, i) =>
    Array.from({ length: counts[i]! }, () =>
      heldRequest(t, key, docs).then((a) => {
        answered++;
        return a;
      }),
    ),
  );
  let held = 0;
  try {
    await until(
      'every request held at the document server or answered',
      90_000,
      async () => (docs.waiting + answered >= total ? true : undefined),
      20,
    );
    // Nothing else is on its way: let a straggler show itself before counting.
    await sleep(300);
    held = docs.waiting;
  } finally {
    docs.release();
  }
  return { answers: await Promise.all(pending), held };
}

function tally(answers: Answer[]): Record<string, number> {
  const t: Record<string, number> = {};
  for (const a of answers) t[a.status] = (t[a.status] ?? 0) + 1;
  return t;
}

function expectRaceOutcome(r: { answers: Answer[]; held: number }, admitted: number, refused: number): void {
  const t = tally(r.answers);
  const expected: Record<string, number> = { 200: admitted };
  if (refused > 0) expected[429] = refused;
  expect(t, JSON.stringify(r.answers.filter((a) => a.status !== 200 && a.status !== 429))).toEqual(expected);
  expect(r.held).toBe(admitted);
  for (const a of r.answers.filter((x) => x.status === 429)) {
    expect(a.code).toBe('RATE_LIMIT_ERROR');
    expect(a.retryAfter).toMatch(/^[1-9]\d*$/);
  }
}

async function health(target: Replica): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(`${target.url}/v1/health`, { signal: AbortSignal.timeout(5000) });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

/**
 * What /v1/health says about Redis: 'ok', 'degraded', or undefined when the body does not report it (the
 * feature is missing). The API lists it beside its engines: `engines.coordination` =
 * `{ status: 'healthy'|'degraded', redis: 'connected'|'unreachable', since, invalidations: 'subscribed'|'unsubscribed' }`.
 * 'ok' also needs the revocation channel subscribed again, when the body says; 'between' is any other state.
 */
function redisHealth(body: Record<string, unknown>): 'ok' | 'degraded' | 'between' | undefined {
  const c = (body.engines as Record<string, Record<string, unknown> | undefined> | undefined)?.coordination;
  if (!c || typeof c.redis !== 'string') return undefined;
  if (c.status === 'healthy' && c.redis === 'connected' && (c.invalidations === undefined || c.invalidations === 'subscribed')) return 'ok';
  return c.redis === 'unreachable' && c.status === 'degraded' ? 'degraded' : 'between';
}

describe.skipIf(!pgUp || !redisUp)('Folio replicas on one PostgreSQL and one Redis (issue 14)', () => {
  let db: TestDatabase;
  let smtp: TestSmtp;
  let docs: HeldDocumentServer;
  let redis: { url: string; db: number; release(): Promise<void> };
  let A: Replica;
  let B: Replica;
  let ingest: Replica;
  let registrar: Registrar;
  let pdfBase64: string;
  const started: Replica[] = [];
  const t0 = Date.now();

  /** Environment every API replica gets. */
  const apiEnv = (redisUrl: string): Record<string, string> => ({
    DATABASE_URL: db.url,
    REDIS_URL: redisUrl,
    // Keys and pub/sub channels of this run only (channels are shared by every database index of a server).
    REDIS_KEY_PREFIX: KEY_PREFIX,
    SMTP_URL: smtp.url,
    URL_FETCH_ALLOWLIST: docs.hostPort,
    OFFICE_WORKERS: '1',
    OFFICE_MEMORY_MB: '1024',
    ENGINE_WORKERS: '1',
    ENGINE_MEMORY_MB: '512',
  });

  beforeAll(async () => {
    const entry = folioEntry(); // compiles once if dist/ is stale
    console.log(`replicas: server from ${entry.label}`);
    db = await createTestDatabase('folio_replicas');
    smtp = await startTestSmtp();
    pdfBase64 = Buffer.from(await smallPdf()).toString('base64');
    docs = await HeldDocumentServer.start(Buffer.from(pdfBase64, 'base64'));
    redis = await claimRedisDb(REDIS_URL, runId, KEY_PREFIX);
    registrar = new Registrar(smtp);
    const env = apiEnv(redis.url);
    [A, B, ingest] = await Promise.all([
      Replica.start('A', 'api', env),
      Replica.start('B', 'api', env),
      Replica.start('ingest', 'ingest', { TELEMETRY_DATABASE_URL: db.url, ADMIN_TOKEN }),
    ]);
    started.push(A, B, ingest);
    // Both replicas connected to Redis and subscribed to revocations before the first step (when health says).
    for (const r of [A, B]) {
      await until(`${r.name} connected to Redis`, 15_000, async () => {
        const h = await health(r);
        const state = redisHealth(h.body);
        return state === undefined || state === 'ok' ? true : undefined;
      }).catch(() => undefined);
    }
    console.log(`replicas: A, B and the ingest answer after ${Date.now() - t0} ms (Redis db ${redis.db}, ${db.url})`);
  }, 600_000);

  afterAll(async () => {
    await Promise.all(started.map((r) => r.stop().catch(() => undefined)));
    await docs?.close().catch(() => undefined);
    await smtp?.close().catch(() => undefined);
    await redis?.release().catch(() => undefined);
    await db?.drop().catch(() => undefined);
    console.log(`replicas: whole suite ${Date.now() - t0} ms`);
  }, 120_000);

  let k1: IssuedKey; // register on A, verify on B; revoked in 3
  let k2: IssuedKey; // register on B, verify (issued) on A
  let k4: IssuedKey; // the slot race's key

  it('1. a code requested through A is accepted by B', async () => {
    const email = newEmail('k1');
    const reg = await registrar.register(A, email);
    expect(reg.status).toBe(200);
    const code = await registrar.code(email);
    const ver = await registrar.verify(B, email, code);
    expect(ver.status).toBe(200);
    expect(ver.body.apiKey).toMatch(/^folio_sk_[0-9A-Za-z]{38}$/);
    expect(ver.body.email).toBe(email);
    k1 = { apiKey: ver.body.apiKey as string, keyId: ver.body.keyId as string, email };
    // Single use across replicas too: the same code is refused by A now.
    const again = await registrar.verify(A, email, code);
    expect(again.status).toBe(400);
    expect(again.body.code).toBe('INVALID_CODE');
  }, 120_000);

  it('2. a key issued on A works on B', async () => {
    k2 = await registrar.key(B, A, 'k2');
    const listed = await fetch(`${B.url}/v1/auth/keys`, { headers: bearer(k2) });
    expect(listed.status).toBe(200);
    const keys = ((await listed.json()) as { keys: Array<{ keyId: string; current: boolean }> }).keys;
    expect(keys).toEqual([expect.objectContaining({ keyId: k2.keyId, current: true })]);
    const doc = await call(B, '/v1/verify', {
      method: 'POST',
      headers: { ...bearer(k2), 'content-type': 'application/json' },
      body: JSON.stringify({ document: { base64: pdfBase64 } }),
    });
    expect(doc.status).toBe(200);
  }, 120_000);

  it('3. a key revoked on A is refused by B on the very next request', async () => {
    expect(k1, 'needs the key of step 1').toBeDefined();
    // B has served this key (and may have it cached) before the revocation.
    for (const r of [B, A, B]) expect((await call(r, '/v1/auth/keys', { headers: bearer(k1) })).status).toBe(200);
    const del = await call(A, `/v1/auth/keys/${k1.keyId}`, { method: 'DELETE', headers: bearer(k1) });
    expect(del.status).toBe(204);
    const next = await call(B, '/v1/auth/keys', { headers: bearer(k1) });
    expect(next.status).toBe(401);
    expect(next.code).toBe('AUTHENTICATION_ERROR');
    const docOnB = await call(B, '/v1/verify', {
      method: 'POST',
      headers: { ...bearer(k1), 'content-type': 'application/json' },
      body: JSON.stringify({ document: { base64: pdfBase64 } }),
    });
    expect(docOnB.status).toBe(401);
    expect((await call(A, '/v1/auth/keys', { headers: bearer(k1) })).status).toBe(401);
  }, 120_000);

  it('4. 14 concurrent slow requests with one key, 7 on A and 7 on B: exactly 10 admitted, 4 × 429 with Retry-After, no 5xx', async () => {
    k4 = await registrar.key(A, B, 'k4');
    const race = await slotRace([A, B], [7, 7], k4, docs);
    expectRaceOutcome(race, MAX_IN_FLIGHT, 4);
    // The slots came back: one key, 10 more held requests spread over both are all admitted.
    await sleep(1000);
    const again = await slotRace([A, B], [5, 5], k4, docs);
    expectRaceOutcome(again, 10, 0);
  }, 240_000);

  it('5. the per-client register window holds across A and B together', async () => {
    const left = REGISTER_PER_CLIENT - registrar.admitted;
    expect(left).toBeGreaterThan(0);
    const answers: Answer[] = [];
    for (let i = 0; i < left + 4; i++) answers.push(await registrar.register(i % 2 === 0 ? A : B, newEmail('window')));
    const statuses = answers.map((a) => a.status);
    expect(statuses, `after ${REGISTER_PER_CLIENT - left} earlier registrations`).toEqual([...Array(left).fill(200), 429, 429, 429, 429]);
    const refused = answers.slice(left);
    expect(new Set(refused.map((a) => a.target))).toEqual(new Set(['A', 'B']));
    for (const a of refused) {
      expect(a.code).toBe('RATE_LIMIT_ERROR');
      expect(a.retryAfter).toMatch(/^[1-9]\d*$/);
    }
    // The shared window is a key of this run (REDIS_KEY_PREFIX): nothing outside the prefix but our claim.
    const keys = await redisKeys(redis.url);
    expect(keys.some((k) => k.startsWith(KEY_PREFIX))).toBe(true);
    expect(keys.filter((k) => !k.startsWith(KEY_PREFIX) && k !== CLAIM_KEY)).toEqual([]);
  }, 180_000);

  it('6. SIGKILL of A during mixed traffic leaves B answering and loses no acknowledged telemetry event', async () => {
    expect(k2 && k4, 'needs the keys of steps 2 and 4').toBeTruthy();
    const license = `lic_replicas_${runId}`;
    const acknowledged: string[] = [];
    const telemetryAnswers: Answer[] = [];
    const onB: Array<Answer & { kind: string; at: number }> = [];
    const onA: Array<Answer & { kind: string; at: number }> = [];
    let killedAt = 0;
    const heldOnA: Array<Promise<Answer>> = [];
    let stop = false;
    let seq = 0;

    const telemetryWorker = async () => {
      while (!stop) {
        const ids = Array.from({ length: 5 }, () => `replicas-${runId}-${seq++}`);
        const body = {
          libraryVersion: '0.9.0',
          browserInfo: {
            userAgent: 'replicas-test',
            currentUrl: 'https://app.example.com/doc',
            hostname: 'app.example.com',
            screenSize: { width: 1, height: 1 },
          },
          events: ids.map((documentId) => ({ timestamp: new Date().toISOString(), documentId, documentCreatedAt: '2024-01-15T10:30:00Z' })),
        };
        const a = await call(ingest, '/v1/collect', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-license-key': license },
          body: JSON.stringify(body),
        });
        telemetryAnswers.push(a);
        if (a.status === 202) acknowledged.push(...ids);
      }
    };
    const docWorker = (target: Replica, key: IssuedKey, out: typeof onB) => async () => {
      while (!stop && (target === B || target.alive())) {
        const a = await call(target, '/v1/verify', {
          method: 'POST',
          headers: { ...bearer(key), 'content-type': 'application/json' },
          body: JSON.stringify({ document: { base64: pdfBase64 } }),
        });
        out.push({ ...a, kind: 'verify', at: Date.now() });
      }
    };
    const authWorker = (target: Replica, key: IssuedKey, out: typeof onB) => async () => {
      while (!stop && (target === B || target.alive())) {
        out.push({ ...(await call(target, '/v1/auth/keys', { headers: bearer(key) })), kind: 'keys', at: Date.now() });
        out.push({ ...(await call(target, '/v1/health')), kind: 'health', at: Date.now() });
      }
    };
    const workers = [
      ...Array.from({ length: 4 }, () => telemetryWorker()),
      docWorker(A, k2, onA)(),
      docWorker(A, k2, onA)(),
      docWorker(B, k4, onB)(),
      docWorker(B, k4, onB)(),
      authWorker(A, k2, onA)(),
      authWorker(B, k4, onB)(),
    ];
    try {
      // Kill A in full flight: traffic has run a while and both replicas have answered.
      await until('traffic on both replicas and the ingest', 60_000, async () =>
        onA.filter((a) => a.kind === 'verify' && a.status === 200).length >= 3 && onB.length >= 6 && acknowledged.length >= 50 ? true : undefined,
      );
      // ...and with three of A's document requests certainly in flight (held at the document server).
      docs.hold();
      heldOnA.push(...[0, 1, 2].map(() => heldRequest(A, k2, docs)));
      await until("three of A's requests held", 30_000, async () => (docs.waiting >= 3 ? true : undefined), 20);
      A.kill();
      killedAt = Date.now();
      expect(await A.waitExit(10_000)).toBe(true);
      expect(A.exitInfo()?.signal).toBe('SIGKILL');
      docs.release();
      // Keep going on B and the ingest for a while after the kill.
      const bBefore = onB.length;
      await until('B to keep answering after the kill', 60_000, async () =>
        onB.length >= bBefore + 12 && Date.now() - killedAt > 3000 ? true : undefined,
      );
    } finally {
      stop = true;
      docs.release();
      await Promise.all(workers);
      await Promise.all(heldOnA);
    }

    const bAfter = onB.filter((a) => a.at > killedAt);
    expect(bAfter.length).toBeGreaterThan(0);
    // Every answer of B, before and after the kill, is a success: nothing refused, nothing failed.
    expect(onB.filter((a) => a.status !== 200)).toEqual([]);
    expect(bAfter.filter((a) => a.kind === 'verify').length).toBeGreaterThan(0);
    expect(onA.filter((a) => a.status >= 500)).toEqual([]);
    expect(telemetryAnswers.filter((a) => a.status !== 202)).toEqual([]);
    // A fresh request on B after the storm.
    expect((await call(B, '/v1/auth/keys', { headers: bearer(k4) })).status).toBe(200);
    // A died holding at least three slots of k2 (its held requests). Slots are leases that A no longer
    // renews: once the lease has passed since the kill, B admits all ten of that key again.
    await sleep(Math.max(0, killedAt + SLOT_LEASE_MS + 1000 - Date.now()));
    const afterKill = await slotRace([B], [10], k2, docs);
    expect(afterKill.answers.filter((a) => a.status !== 200 && a.status !== 429)).toEqual([]);
    expect(afterKill.held).toBe(10);
    console.log(
      `replicas: A died holding at least 3 slots of its key; ${((Date.now() - killedAt) / 1000).toFixed(1)} s later B admits ${afterKill.held} of 10 held requests with that key (${JSON.stringify(tally(afterKill.answers))})`,
    );

    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const stored = new Set(
        (await client.query<{ document_id: string }>('SELECT document_id FROM telemetry_events WHERE license_key = $1', [license])).rows.map(
          (r) => r.document_id,
        ),
      );
      const missing = acknowledged.filter((id) => !stored.has(id));
      expect(acknowledged.length).toBeGreaterThanOrEqual(50);
      expect(missing).toEqual([]);
      console.log(
        `replicas: SIGKILL of A after ${onA.length} answers from A; B answered ${onB.length} (${bAfter.length} after the kill), ` +
          `all 200; ${acknowledged.length} telemetry events acknowledged, all ${stored.size >= acknowledged.length ? 'stored' : 'NOT stored'}`,
      );
    } finally {
      await client.end();
    }
  }, 240_000);

  describe.skipIf(!ownRedisPossible)('7. Redis stopped mid-test (a redis-server of our own)', () => {
    let own: OwnRedis;
    let A2: Replica;
    let B2: Replica;

    beforeAll(async () => {
      own = await OwnRedis.start();
      const env = apiEnv(own.url);
      [A2, B2] = await Promise.all([Replica.start('A2', 'api', env), Replica.start('B2', 'api', env)]);
      started.push(A2, B2);
    }, 600_000);

    afterAll(async () => {
      await own?.down().catch(() => undefined);
    });

    it('degrades to per-process limits with a warning and health naming Redis, and recovers when Redis returns', async () => {
      // The window of step 5 is in the machine's Redis; this Redis is fresh.
      const key = await registrar.key(A2, B2, 'k5');
      for (const r of [A2, B2]) {
        // Right after start-up the revocation channel may still be subscribing.
        const h = await until(`${r.name} health to show Redis ok`, 15_000, async () => {
          const x = await health(r);
          return redisHealth(x.body) === 'ok' ? x : undefined;
        }).catch(() => health(r));
        expect(h.status).toBe(200);
        expect(redisHealth(h.body), `${r.name} health: ${JSON.stringify(h.body)}`).toBe('ok');
      }
      const warningsBefore = A2.logLines(40).length;

      await own.down();
      const downAt = Date.now();
      // Health names Redis as degraded on both replicas.
      for (const r of [A2, B2]) {
        const h = await until(`${r.name} health to show Redis degraded`, 30_000, async () => {
          const x = await health(r);
          return redisHealth(x.body) === 'degraded' ? x : undefined;
        });
        expect(h.status).toBe(200);
        expect(h.body.status).toBe('degraded');
      }
      console.log(`replicas: health showed Redis degraded ${Date.now() - downAt} ms after redis-server stopped`);

      // Still served: authentication, key listing, registration.
      for (const r of [A2, B2]) expect((await call(r, '/v1/auth/keys', { headers: bearer(key) })).status).toBe(200);
      expect((await registrar.register(B2, newEmail('outage'))).status).toBe(200);
      // Per-process limits: 12 at once on A2 alone → its local limiter admits 10.
      const local = await slotRace([A2], [12], key, docs);
      expectRaceOutcome(local, MAX_IN_FLIGHT, 2);

      // A warning naming Redis in A2's log (pino flushes at least once a second).
      const warning = await until('a warning about Redis in A2 log', 10_000, async () =>
        A2.logLines(40)
          .slice(warningsBefore)
          .find((l) => /redis/i.test(JSON.stringify(l))),
      );
      console.log(`replicas: A2 logged: ${JSON.stringify(warning)}`);

      await sleep(500);
      await own.up();
      const upAt = Date.now();
      for (const r of [A2, B2]) {
        await until(`${r.name} health to show Redis ok again`, 30_000, async () => (redisHealth((await health(r)).body) === 'ok' ? true : undefined));
      }
      const recoveredMs = Date.now() - upAt;
      console.log(`replicas: health showed Redis ok ${recoveredMs} ms after redis-server was back`);
      expect(recoveredMs).toBeLessThan(15_000);

      // Shared again: 7 + 7 over both → 10 admitted, 4 × 429.
      await sleep(500);
      const shared = await slotRace([A2, B2], [7, 7], key, docs);
      expectRaceOutcome(shared, MAX_IN_FLIGHT, 4);
    }, 300_000);
  });
});
