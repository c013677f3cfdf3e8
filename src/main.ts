/**
 * Entry point: `node dist/src/main.js [api|ingest|all]` (default all). Reads the configuration (one line and
 * exit 1 when invalid), starts the services, serves /metrics on METRICS_PORT, and drains on SIGTERM/SIGINT.
 */
import { ConfigError, type Config } from './config/index.js';
import { loadConfig } from './modules/config.js';
import { createLogger } from './logger.js';
import { buildApi } from './api.js';
import { createHttpMetrics, startMetricsServer } from './http/metrics.js';
import type { Server } from 'node:http';
import { DependencyError } from './coordination/database.js';
import { applyServerLimits, limitsFromConfig } from './http/server-limits.js';

type Mode = 'api' | 'ingest' | 'all';

/** GET /metrics has no body: a request not received in 10 s is not a scraper's. */
const METRICS_RECEIVE_TIMEOUT_MS = 10_000;
const METRICS_MAX_CONNECTIONS = 64;

async function main(): Promise<void> {
  const mode = (process.argv[2] ?? 'all') as Mode;
  if (!['api', 'ingest', 'all'].includes(mode)) {
    console.error(`usage: main.js [api|ingest|all] (got "${mode}")`);
    process.exit(2);
  }
  let config: Config;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message);
      process.exit(1);
    }
    throw e;
  }
  const logger = createLogger(config.logLevel);
  const closers: Array<() => Promise<void>> = [];
  const metrics = createHttpMetrics('folio');
  // Servers sharing this process's file descriptors (src/http/server-limits.ts `connectionCap`).
  const servers = mode === 'all' ? 2 : 1;

  if (mode === 'api' || mode === 'all') {
    const api = await buildApi({ config, logger, metrics, warmUpEngines: true });
    // Receiving a document request cannot take longer than the whole request may (REQUEST_TIMEOUT_MS).
    const limits = applyServerLimits(api.app.server, limitsFromConfig(config, config.requestTimeoutMs, servers));
    await api.app.listen({ host: config.host, port: config.port });
    logger.info({ host: config.host, port: config.port, limits }, 'API listening');
    closers.push(() => api.close());
  }
  if (mode === 'ingest' || mode === 'all') {
    const { startIngestService } = await import('./ingest-entry.js');
    closers.push(await startIngestService(config, logger, metrics.registry, servers));
  }
  let metricsServer: Server | undefined;
  if (config.metricsPort !== undefined) {
    // A handful of scrapers: a small cap, outside the public servers' share of the descriptors.
    const metricsLimits = { ...limitsFromConfig(config, METRICS_RECEIVE_TIMEOUT_MS, servers), maxConnections: METRICS_MAX_CONNECTIONS };
    metricsServer = await startMetricsServer(config.host, config.metricsPort, [metrics.registry], metricsLimits);
    logger.info({ port: config.metricsPort }, 'metrics listening');
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'draining in-flight requests');
    metricsServer?.close();
    for (const close of closers.reverse()) await close().catch((e) => logger.error({ err: e }, 'error while closing'));
    logger.info('stopped');
    logger.flush(() => process.exit(0));
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((e) => {
  // A dependency named by its variable (DATABASE_URL, TELEMETRY_DATABASE_URL) or a bad value: its line alone.
  if (e instanceof DependencyError || e instanceof ConfigError) console.error(e.message);
  else console.error(`Folio failed to start: ${(e as Error).message}`);
  process.exit(1);
});
