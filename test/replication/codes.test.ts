/**
 * Codes across instances (issue 14): two DefaultAuthService instances on one store (SQLite file, and
 * PostgreSQL when the machine has one). A code sent through A is accepted by B; wrong attempts on A and B
 * add up to the same 5; concurrent registers for one address on A and B send exactly one code (the
 * per-address cooldown is checked in the write itself).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import { DefaultAuthService, DEFAULT_AUTH_POLICY } from '../../src/auth/service.js';
import { PostgresAuthStore, SqliteAuthStore, type AuthStore } from '../../src/auth/store.js';
import type { Mailer, MailMessage } from '../../src/auth/mailer.js';
import { FolioError } from '../../src/errors.js';
import { createTestDatabase, postgresAvailable } from '../helpers/postgres.js';

const pgUp = await postgresAvailable();
if (!pgUp) console.warn('PostgreSQL is not reachable at 127.0.0.1:5432: the PostgreSQL variant of the codes suite is SKIPPED');

const silent = pino({ level: 'silent' });
const secret = Buffer.alloc(32, 9);
const policy = { ...DEFAULT_AUTH_POLICY, registerPerClient: 1000, verifyPerClient: 1000 };

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function twoInstances(backend: 'sqlite' | 'postgres') {
  let open: () => Promise<AuthStore>;
  if (backend === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-codes-'));
    cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
    open = async () => new SqliteAuthStore(path.join(dir, 'folio.sqlite'));
  } else {
    const db = await createTestDatabase('folio_codes');
    cleanups.push(() => db.drop());
    open = () => PostgresAuthStore.open(db.url);
  }
  const sent: MailMessage[] = [];
  const mailer: Mailer = { send: async (m) => void sent.push(m), close: async () => undefined };
  const make = async () => {
    const s = new DefaultAuthService(await open(), mailer, secret, silent, policy);
    cleanups.push(() => s.close());
    return s;
  };
  return { a: await make(), b: await make(), sent };
}

const codeIn = (m: MailMessage) => /(\d{6})/.exec(m.text)![1]!;

for (const backend of ['sqlite', 'postgres'] as const) {
  describe.skipIf(backend === 'postgres' && !pgUp)(`verification codes across two instances (${backend})`, () => {
    it('a code requested through A is accepted by B, once', async () => {
      const { a, b, sent } = await twoInstances(backend);
      await a.register('cross@example.com', '10.0.0.1');
      const code = codeIn(sent[0]!);
      const issued = await b.verify('cross@example.com', code, '10.0.0.1');
      expect(issued.email).toBe('cross@example.com');
      await expect(a.verify('cross@example.com', code, '10.0.0.1')).rejects.toMatchObject({ code: 'INVALID_CODE' });
      expect(await a.authenticate(issued.apiKey)).toEqual({ keyId: issued.keyId, email: 'cross@example.com' });
    });

    it('wrong attempts on A and B count together: 5 in all void the code', async () => {
      const { a, b, sent } = await twoInstances(backend);
      await a.register('split@example.com', '10.0.0.2');
      const code = codeIn(sent[0]!);
      const wrong = code === '000000' ? '111111' : '000000';
      for (let i = 0; i < 5; i++) {
        await expect((i % 2 ? a : b).verify('split@example.com', wrong, '10.0.0.2')).rejects.toMatchObject({ code: 'INVALID_CODE' });
      }
      await expect(a.verify('split@example.com', code, '10.0.0.2')).rejects.toMatchObject({ code: 'INVALID_CODE' });
    });

    it('concurrent registers for one address on A and B send exactly one code; the others are 429', async () => {
      const { a, b, sent } = await twoInstances(backend);
      const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).register('race@example.com', `10.0.1.${i}`)));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of results) {
        if (r.status === 'rejected') {
          expect(r.reason).toBeInstanceOf(FolioError);
          expect((r.reason as FolioError).code).toBe('RATE_LIMIT_ERROR');
          expect((r.reason as FolioError).retryAfter).toBeGreaterThan(0);
        }
      }
      expect(sent).toHaveLength(1);
    });
  });
}
