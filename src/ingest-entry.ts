/** Starts the telemetry ingest service on INGEST_PORT; returns its closer. */
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from './config/index.js';

export async function startIngestService(config: Config, logger: Logger, _registry: Registry): Promise<() => Promise<void>> {
  logger.warn('telemetry ingest is not available in this build');
  void config;
  return async () => {};
}
