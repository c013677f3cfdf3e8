/**
 * End to end: register → code by real SMTP → verify → key → list → protected call → revoke → 401, and the
 * code rules (5 attempts, single use, cooldown), on SQLite and on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { startTestSmtp, codeFrom, type TestSmtp } from '../helpers/smtp.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/postgres.js';

const pgUp = await postgresAvailable();
if (!pgUp) console.warn('PostgreSQL is not reachable at 127.0.0.1:5432: the PostgreSQL auth suite is SKIPPED');

function expectEnvelope(body: Record<string, unknown>, code: string, res: Response) {
  expect(body.code).toBe(code);
  expect(typeof body.error).toBe('string');
  expect(typeof body.message).toBe('string');
  expect(body.requestId).toBe(res.headers.get('x-request-id'));
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
}

for (const backend of ['sqlite', 'postgres'] as const) {
  describe.skipIf(backend === 'postgres' && !pgUp)(`auth end to end (${backend})`, () => {
    let smtp: TestSmtp;
    let t: TestApi;
    let db: TestDatabase | undefined;

    beforeAll(async () => {
      smtp = await startTestSmtp();
      const env: Record<string, string> = { SMTP_URL: smtp.url };
      if (backend === 'postgres') {
        db = await createTestDatabase('folio_auth');
        env.DATABASE_URL = db.url;
      }
      t = await startTestApi({ env });
    });
    afterAll(async () => {
      await t?.close();
      await smtp?.close();
      await db?.drop();
    });

    const get = (path: string, key?: string) => fetch(t.url + path, { headers: key ? { authorization: `Bearer ${key}` } : {} });

    it('issues a key through the e-mailed code, lists it, and refuses it once revoked', async () => {
      const email = `Alice.${backend}@Example.com`;
      const reg = await get(`/v1/auth/register?email=${encodeURIComponent(email)}`);
      expect(reg.status).toBe(200);
      expect(await reg.json()).toEqual({
        message: 'Check your email for verification code.',
        email: email.toLowerCase(),
        expiresInSeconds: 900,
      });
      const code = codeFrom(await smtp.waitFor(email.toLowerCase()));

      const ver = await get(`/v1/auth/verify?email=${encodeURIComponent(email)}&code=${code}`);
      expect(ver.status).toBe(200);
      expect(ver.headers.get('cache-control')).toContain('no-store');
      const issued = (await ver.json()) as { apiKey: string; keyId: string; email: string; createdAt: string };
      expect(issued.apiKey).toMatch(/^folio_sk_[0-9A-Za-z]{38}$/);
      expect(issued.email).toBe(email.toLowerCase());
      expect(Number.isNaN(Date.parse(issued.createdAt))).toBe(false);

      // The same code cannot be used twice.
      const again = await get(`/v1/auth/verify?email=${encodeURIComponent(email)}&code=${code}`);
      expect(again.status).toBe(400);
      expectEnvelope(await again.json(), 'INVALID_CODE', again);

      const noKey = await get('/v1/auth/keys');
      expect(noKey.status).toBe(401);
      expectEnvelope(await noKey.json(), 'AUTHENTICATION_ERROR', noKey);

      const list = await get('/v1/auth/keys', issued.apiKey);
      expect(list.status).toBe(200);
      const { keys } = (await list.json()) as { keys: Array<Record<string, unknown>> };
      expect(keys).toHaveLength(1);
      expect(keys[0]).toMatchObject({ keyId: issued.keyId, current: true, revokedAt: null });
      expect(typeof keys[0]!.lastUsedAt).toBe('string');
      expect(JSON.stringify(keys)).not.toContain(issued.apiKey);

      // Another owner's key id is 404 for this owner.
      const del404 = await fetch(`${t.url}/v1/auth/keys/${t.keyId}`, { method: 'DELETE', headers: { authorization: `Bearer ${issued.apiKey}` } });
      expect(del404.status).toBe(404);
      expectEnvelope(await del404.json(), 'NOT_FOUND', del404);

      const del = await fetch(`${t.url}/v1/auth/keys/${issued.keyId}`, { method: 'DELETE', headers: { authorization: `Bearer ${issued.apiKey}` } });
      expect(del.status).toBe(204);
      const after = await get('/v1/auth/keys', issued.apiKey);
      expect(after.status).toBe(401);
      expectEnvelope(await after.json(), 'AUTHENTICATION_ERROR', after);

      // The other owner's key still works and sees only its own keys.
      const mine = await get('/v1/auth/keys', t.apiKey);
      expect(mine.status).toBe(200);
      const mineKeys = ((await mine.json()) as { keys: Array<{ keyId: string }> }).keys.map((k) => k.keyId);
      expect(mineKeys).toEqual([t.keyId]);
    });

    it('lists every key of the owner with revocation times', async () => {
      const first = await t.services.auth.issueKey('multi@example.com');
      const second = await t.services.auth.issueKey('multi@example.com');
      await fetch(`${t.url}/v1/auth/keys/${first.keyId}`, { method: 'DELETE', headers: { authorization: `Bearer ${second.apiKey}` } });
      const res = await get('/v1/auth/keys', second.apiKey);
      const keys = ((await res.json()) as { keys: Array<{ keyId: string; revokedAt: string | null; current: boolean }> }).keys;
      expect(keys.map((k) => k.keyId).sort()).toEqual([first.keyId, second.keyId].sort());
      expect(keys.find((k) => k.keyId === first.keyId)!.revokedAt).not.toBeNull();
      expect(keys.find((k) => k.keyId === second.keyId)!.current).toBe(true);
    });

    it('voids a code after 5 wrong attempts, even when the right code comes next', async () => {
      const email = `brute.${backend}@example.com`;
      expect((await get(`/v1/auth/register?email=${email}`)).status).toBe(200);
      const code = codeFrom(await smtp.waitFor(email));
      const wrong = code === '000000' ? '111111' : '000000';
      for (let i = 0; i < 5; i++) {
        const r = await get(`/v1/auth/verify?email=${email}&code=${wrong}`);
        expect(r.status).toBe(400);
        expectEnvelope(await r.json(), 'INVALID_CODE', r);
      }
      const right = await get(`/v1/auth/verify?email=${email}&code=${code}`);
      expect(right.status).toBe(400);
      expectEnvelope(await right.json(), 'INVALID_CODE', right);
    });

    it('answers the same for new and known addresses, and enforces the resend cooldown', async () => {
      const known = `known.${backend}@example.com`;
      await t.services.auth.issueKey(known);
      const unknown = `unknown.${backend}@example.com`;
      const a = await get(`/v1/auth/register?email=${known}`);
      const b = await get(`/v1/auth/register?email=${unknown}`);
      expect(a.status).toBe(200);
      expect(b.status).toBe(200);
      const ja = (await a.json()) as Record<string, unknown>;
      const jb = (await b.json()) as Record<string, unknown>;
      expect({ ...ja, email: 'x' }).toEqual({ ...jb, email: 'x' });
      const again = await get(`/v1/auth/register?email=${known}`);
      expect(again.status).toBe(429);
      expect(Number(again.headers.get('retry-after'))).toBeGreaterThan(0);
      expectEnvelope(await again.json(), 'RATE_LIMIT_ERROR', again);
    });
  });
}
