/**
 * Issue 7 benchmark: events/s accepted by POST /v1/collect with durable writes (202 only after the commit),
 * one event per request like the real client, 100 concurrent connections (autocannon), p99 latency; against a
 * bare Fastify endpoint that only parses the same JSON, in the same run. SQLite always; PostgreSQL too when
 * it is reachable. Goals: ≥ 10,000 events/s on SQLite with p99 ≤ 30 ms, and ≥ 0.5× the bare endpoint.
 *
 * `node --import tsx bench/telemetry.ts` (or `npm run bench -- telemetry`); BENCH_SECONDS sets the duration.
 * The targets run in a child process (this same file with `--serve`), autocannon in this one.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';

const root = path.resolve(import.meta.dirname, '..');

if (process.argv.includes('--serve')) {
  const { default: Fastify } = await import('fastify');
  const { Registry } = await import('prom-client');
  const { loadConfig } = await import('../src/modules/config.js');
  const { createLogger } = await import('../src/logger.js');
  const { createIngest } = await import('../src/telemetry/index.js');
  const { postgresAvailable, createTestDatabase } = await import('../test/helpers/postgres.js');

  const bare = Fastify({ bodyLimit: 64 * 1024 });
  bare.post('/v1/collect', async (request, reply) => {
    const body = request.body as { events?: unknown[] };
    return reply.code(202).send({ accepted: Array.isArray(body?.events) ? body.events.length : 0 });
  });
  await bare.listen({ host: '127.0.0.1', port: 0 });

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-bench-telemetry-'));
  const logger = createLogger(process.env.LOG_LEVEL ?? 'info');
  // One loopback address sends every request and every document is new: the billing-integrity limits
  // (src/telemetry/limits.ts) would refuse most of it, so they are off; what is measured is the write path.
  const noLimits = { INGEST_ADDRESS_REQUESTS_PER_MINUTE: '0', INGEST_KEY_REQUESTS_PER_MINUTE: '0', INGEST_NEW_DOCUMENTS_PER_HOUR: '0' };
  const sqliteConfig = loadConfig({ DATA_DIR: dataDir, INGEST_PORT: '0', LOG_LEVEL: 'info', ...noLimits });
  const sqlite = await createIngest({ config: sqliteConfig, logger, registry: new Registry() });
  await sqlite.app.listen({ host: '127.0.0.1', port: 0 });

  let postgres: Awaited<ReturnType<typeof createIngest>> | undefined;
  let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  if (await postgresAvailable()) {
    db = await createTestDatabase('folio_bench_telemetry');
    postgres = await createIngest({
      config: loadConfig({ DATA_DIR: dataDir, INGEST_PORT: '0', TELEMETRY_DATABASE_URL: db.url, ...noLimits }),
      logger,
      registry: new Registry(),
    });
    await postgres.app.listen({ host: '127.0.0.1', port: 0 });
  }
  const port = (s: { server: { address(): unknown } }) => (s.server.address() as AddressInfo).port;
  process.stderr.write(JSON.stringify({ bare: port(bare), sqlite: port(sqlite.app), postgres: postgres ? port(postgres.app) : null }) + '\n');
  // A signal listener's promise is dropped: a failed shutdown is printed and exits non-zero here.
  process.on('SIGTERM', () => {
    (async () => {
      const month = new Date().toISOString().slice(0, 7);
      const counts = {
        sqlite: (await sqlite.store.usage('bench_license', month)).opens,
        postgres: postgres ? (await postgres.store.usage('bench_license', month)).opens : null,
      };
      process.stderr.write(JSON.stringify({ stored: counts }) + '\n');
      await sqlite.close();
      await postgres?.close();
      await db?.drop();
      await bare.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
      process.exit(0);
    })().catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
  });
} else {
  const seconds = Number(process.env.BENCH_SECONDS ?? 10);
  const connections = 100;
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'bench/telemetry.ts'), '--serve'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let buf = '';
  child.stderr.on('data', (d) => (buf += d));
  const nextLine = <T>(key: string) =>
    new Promise<T>((resolve, reject) => {
      const check = () => {
        const line = buf.split('\n').find((l) => l.startsWith(`{"${key}"`));
        if (line) return resolve(JSON.parse(line));
        if (child.exitCode !== null) return reject(new Error(`bench server exited: ${buf}`));
        setTimeout(check, 50);
      };
      check();
    });
  const ports = await nextLine<{ bare: number; sqlite: number; postgres: number | null }>('bare');

  let seq = 0;
  const body = () =>
    JSON.stringify({
      libraryVersion: '0.9.0',
      browserInfo: {
        userAgent: 'Mozilla/5.0 (bench)',
        currentUrl: 'https://app.example.com/editor',
        hostname: 'app.example.com',
        screenSize: { width: 1920, height: 1080 },
      },
      events: [{ timestamp: new Date().toISOString(), documentId: `bench-${process.pid}-${seq++}`, documentCreatedAt: '2024-01-15T10:30:00Z' }],
    });

  const acknowledged: Record<string, number> = {};
  async function run(title: string, port: number) {
    const opts = {
      url: `http://127.0.0.1:${port}/v1/collect`,
      connections,
      method: 'POST' as const,
      headers: { 'content-type': 'application/json', 'x-license-key': 'bench_license' },
      requests: [{ setupRequest: (req: autocannon.Request) => ({ ...req, body: body() }) }],
    };
    const warm = await autocannon({ ...opts, duration: 2 }); // warm-up: JIT, connections, SQLite pages
    const r = await autocannon({ ...opts, duration: seconds });
    acknowledged[title] = warm['2xx'] + r['2xx'];
    const bad = r.non2xx + r.errors + r.timeouts;
    console.log(
      `${title.padEnd(36)} ${r.requests.average.toFixed(0).padStart(7)} events/s   p50 ${String(r.latency.p50).padStart(3)} ms   p99 ${String(r.latency.p99).padStart(3)} ms   non-2xx/errors ${bad}`,
    );
    return { rps: r.requests.average, p99: r.latency.p99, total: r.requests.total + 0 };
  }

  console.log(
    `autocannon, ${connections} connections, ${seconds} s per target, one event per request; ${os.cpus().length} CPUs (load ${os.loadavg()[0]!.toFixed(2)})`,
  );
  const bare = await run('bare Fastify (parse JSON only)', ports.bare);
  const sqlite = await run('Folio ingest, SQLite (durable 202)', ports.sqlite);
  const postgres = ports.postgres ? await run('Folio ingest, PostgreSQL (durable 202)', ports.postgres) : undefined;
  if (!ports.postgres) console.log('PostgreSQL not reachable: its run is skipped');
  console.log(
    `SQLite: ${sqlite.rps.toFixed(0)} events/s (goal ≥ 10000), p99 ${sqlite.p99} ms (goal ≤ 30), ${(sqlite.rps / bare.rps).toFixed(2)}× bare (goal ≥ 0.50)`,
  );
  if (postgres) console.log(`PostgreSQL: ${postgres.rps.toFixed(0)} events/s, p99 ${postgres.p99} ms, ${(postgres.rps / bare.rps).toFixed(2)}× bare`);
  child.kill('SIGTERM');
  const stored = await nextLine<{ stored: { sqlite: number; postgres: number | null } }>('stored');
  const sqliteAcked = acknowledged['Folio ingest, SQLite (durable 202)'];
  const pgAcked = acknowledged['Folio ingest, PostgreSQL (durable 202)'];
  console.log(
    `acknowledged (2xx, warm-up included) vs stored: SQLite ${sqliteAcked} / ${stored.stored.sqlite}` +
      (stored.stored.postgres !== null ? `, PostgreSQL ${pgAcked} / ${stored.stored.postgres}` : ''),
  );
}
