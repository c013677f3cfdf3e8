/** Starts the telemetry ingest service on INGEST_PORT; returns its closer (drains, then closes the store). */
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from './config/index.js';
import { createIngest } from './telemetry/index.js';

export async function startIngestService(config: Config, logger: Logger, registry: Registry): Promise<() => Promise<void>> {
  const ingest = await createIngest({ config, logger, registry });
  await ingest.app.listen({ host: config.host, port: config.ingestPort });
  const address = ingest.app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.ingestPort;
  logger.info({ host: config.host, port, store: ingest.store.dialect }, 'telemetry ingest listening');
  return () => ingest.close();
}
