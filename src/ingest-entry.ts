/** Starts the telemetry ingest service on INGEST_PORT; returns its closer (drains, then closes the store). */
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from './config/index.js';
import { createIngest } from './telemetry/index.js';
import { applyServerLimits, limitsFromConfig } from './http/server-limits.js';

/**
 * POST /v1/collect is answered by its commit, never by the exchange timeout: a 503 sent while the commit
 * still goes through would report a stored event as lost (the answer must say what was committed).
 */
const isCollect = (req: IncomingMessage) => req.method === 'POST' && (req.url ?? '').startsWith('/v1/collect');
/** Bodies are at most 64 KB: a request still arriving after 15 s is a slow-loris, not a client. */
const INGEST_RECEIVE_TIMEOUT_MS = 15_000;

export async function startIngestService(config: Config, logger: Logger, registry: Registry, servers = 1): Promise<() => Promise<void>> {
  const ingest = await createIngest({ config, logger, registry });
  const limits = applyServerLimits(ingest.app.server, limitsFromConfig(config, INGEST_RECEIVE_TIMEOUT_MS, servers), undefined, isCollect);
  await ingest.app.listen({ host: config.host, port: config.ingestPort });
  const address = ingest.app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.ingestPort;
  logger.info({ host: config.host, port, store: ingest.store.dialect, limits }, 'telemetry ingest listening');
  return () => ingest.close();
}
