/**
 * Benchmark target: a bare Fastify hello-world and the real Folio API (SQLite, info-level logs, the HTTP
 * metrics as src/main.ts has them; Redis when
 * BENCH_REDIS_URL is set) in one process, each on its own port. Prints one JSON line with the ports, an API
 * key and a well-formed key that exists nowhere, then serves.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { loadConfig } from '../../src/modules/config.js';
import { createLogger } from '../../src/logger.js';
import { buildApi } from '../../src/api.js';
import { generateApiKey } from '../../src/auth/keys.js';
import { createHttpMetrics } from '../../src/http/metrics.js';

const bare = Fastify();
bare.get('/hello', async () => ({ hello: 'world' }));
await bare.listen({ host: '127.0.0.1', port: 0 });

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-bench-'));
const config = loadConfig({
  ...process.env,
  PORT: '0',
  DATA_DIR: dataDir,
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
  REDIS_URL: process.env.BENCH_REDIS_URL ?? '',
  REDIS_KEY_PREFIX: `folio-bench-${process.pid}:`,
});
// With the HTTP metrics, as src/main.ts always runs the API (BENCH_METRICS=0 leaves them out).
const metrics = process.env.BENCH_METRICS === '0' ? undefined : createHttpMetrics('folio');
const api = await buildApi({ config, logger: createLogger(config.logLevel), metrics, withoutOffice: true });
await api.app.listen({ host: '127.0.0.1', port: 0 });
const key = await api.services.auth.issueKey('bench@example.com');

process.stderr.write(
  JSON.stringify({
    bare: (bare.server.address() as AddressInfo).port,
    api: (api.app.server.address() as AddressInfo).port,
    apiKey: key.apiKey,
    unknownKey: generateApiKey(),
  }) + '\n',
);
// A signal listener's promise is dropped: a failed shutdown is printed and exits non-zero here.
process.on('SIGTERM', () => {
  (async () => {
    await api.close();
    await bare.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    process.exit(0);
  })().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
});
