/**
 * The ingest's `GET|HEAD /v1/health` (issue 14): no license key, reports whether the store takes writes.
 * SQLite: healthy while the writer thread answers, 503 once it is gone. PostgreSQL: healthy while `SELECT 1`
 * answers, 503 once the database is gone (dropped with its connections), never a 500. Nothing in the answer
 * names a path or a connection string.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestIngest, type TestIngest } from './helpers.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/postgres.js';

const pgUp = await postgresAvailable();
if (!pgUp) console.warn('PostgreSQL is not reachable at 127.0.0.1:5432: the PostgreSQL part of the ingest health suite is SKIPPED');

const opened: TestIngest[] = [];
afterAll(async () => {
  for (const t of opened) await t.close().catch(() => undefined);
});

async function health(t: TestIngest, method = 'GET') {
  const res = await fetch(`${t.url}/v1/health`, { method });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** Exit status of the container/Kubernetes check `deploy/healthcheck.mjs <mode>` against this ingest. */
async function healthcheck(t: TestIngest, mode: 'ingest' | 'ingest-live'): Promise<number | null> {
  const script = path.join(import.meta.dirname, '../../deploy/healthcheck.mjs');
  // Not spawnSync: the ingest answering the check runs in this process.
  const child = spawn(process.execPath, [script, mode], { env: { ...process.env, INGEST_PORT: new URL(t.url).port }, stdio: 'ignore' });
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** The store probe is shared for a second: wait until an answer reflects the new state. */
async function healthUntil(t: TestIngest, status: number) {
  const deadline = Date.now() + 8000;
  for (;;) {
    const h = await health(t);
    if (h.status === status || Date.now() > deadline) return h;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('ingest /v1/health', () => {
  it('SQLite: healthy while the writer thread answers; 503 unhealthy once it has stopped', async () => {
    const t = await startTestIngest();
    opened.push(t);
    const ok = await health(t);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('cache-control')).toBe('no-store');
    const body = JSON.parse(ok.text) as Record<string, unknown>;
    expect(body).toMatchObject({
      status: 'healthy',
      version: '0.9.0',
      service: 'folio-ingest',
      store: { status: 'healthy', dialect: 'sqlite', writer: 'running' },
    });
    expect(ok.text).not.toContain('telemetry.sqlite');
    const head = await health(t, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(await healthcheck(t, 'ingest')).toBe(0);
    expect(await healthcheck(t, 'ingest-live')).toBe(0);

    // The writer thread ends (as when it crashes): the store can no longer take writes.
    await (t.ingest.store as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
    const down = await healthUntil(t, 503);
    expect(down.status).toBe(503);
    expect(JSON.parse(down.text)).toMatchObject({ status: 'unhealthy', store: { status: 'unhealthy', dialect: 'sqlite', writer: 'stopped' } });
    // And what the probe says is what a client meets: events are refused with 503, not acknowledged.
    const collect = await fetch(`${t.url}/v1/collect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-license-key': 'lic_health' },
      body: JSON.stringify({ libraryVersion: '0.9.0', events: [{ timestamp: new Date().toISOString(), documentId: 'd1' }] }),
    });
    expect(collect.status).toBe(503);
    // A dead writer thread does not come back: both the readiness and the liveness check fail (restart).
    expect(await healthcheck(t, 'ingest')).toBe(1);
    expect(await healthcheck(t, 'ingest-live')).toBe(1);
  });

  it.skipIf(!pgUp)('PostgreSQL: healthy while the database answers; 503 unhealthy once it is gone', async () => {
    const db: TestDatabase = await createTestDatabase('folio_ingest_health');
    const t = await startTestIngest({ TELEMETRY_DATABASE_URL: db.url });
    opened.push(t);
    const ok = await health(t);
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.text)).toMatchObject({ status: 'healthy', store: { status: 'healthy', dialect: 'postgres', database: 'reachable' } });
    expect(ok.text).not.toContain('postgres://');

    // The database goes away with its connections: reconnecting fails from now on.
    await db.drop();
    const down = await healthUntil(t, 503);
    expect(down.status).toBe(503);
    expect(JSON.parse(down.text)).toMatchObject({
      status: 'unhealthy',
      store: { status: 'unhealthy', dialect: 'postgres', database: 'unreachable' },
    });
    // Out of the load balancer, but not restarted: a restart cannot bring the database back.
    expect(await healthcheck(t, 'ingest')).toBe(1);
    expect(await healthcheck(t, 'ingest-live')).toBe(0);
  });
});
