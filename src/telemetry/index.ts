/**
 * The telemetry ingest (docs/api.md § Telemetry ingest): validated document-open events, stored durably with group commit,
 * counted per license key and UTC month. Public surface: `createIngest` (the app, not yet listening) and
 * `openTelemetryStore`; src/ingest-entry.ts starts it on INGEST_PORT.
 */
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from '../config/index.js';
import { Coordination } from '../coordination/redis.js';
import { GroupCommitter } from './group-commit.js';
import { buildIngestApp } from './http.js';
import { IngestLimits } from './limits.js';
import { createIngestMetrics } from './metrics.js';
import type { CollectRecord } from './payload.js';
import { PostgresTelemetryStore } from './postgres-store.js';
import { SqliteTelemetryStore } from './sqlite-store.js';
import { RowsRejectedError, type TelemetryStore } from './store.js';

export type { TelemetryStore, UsageReport } from './store.js';
export type { CollectRecord, CollectEvent } from './payload.js';
export { COMMUNITY_LICENSE_KEY, monthOf } from './payload.js';
export { SqliteTelemetryStore, PostgresTelemetryStore };

export async function openTelemetryStore(config: Pick<Config, 'dataDir' | 'telemetryDatabaseUrl'>): Promise<TelemetryStore> {
  if (config.telemetryDatabaseUrl) return PostgresTelemetryStore.open(config.telemetryDatabaseUrl);
  const store = new SqliteTelemetryStore(path.join(config.dataDir, 'telemetry.sqlite'));
  try {
    await store.ready;
  } catch (e) {
    await store.close().catch(() => undefined);
    throw new Error(`telemetry store cannot be opened: ${(e as Error).message}`);
  }
  return store;
}

export interface IngestOptions {
  config: Config;
  logger: Logger;
  registry: Registry;
  /** Server clock (tests move it across months); defaults to Date.now. */
  now?: () => number;
}

export interface Ingest {
  app: FastifyInstance;
  store: TelemetryStore;
  /** Stops accepting, waits for in-flight requests and their commits, closes the store. */
  close(): Promise<void>;
}

export async function createIngest(opts: IngestOptions): Promise<Ingest> {
  const store = await openTelemetryStore(opts.config);
  const metrics = createIngestMetrics(opts.registry);
  if (store instanceof PostgresTelemetryStore) {
    store.onUncertainCommit = (settled) => {
      metrics.uncertainCommit(settled);
      opts.logger.warn(
        { settled },
        settled
          ? 'a COMMIT lost its connection; the batch was written again'
          : 'a COMMIT lost its connection and could not be settled: answered 503, its events may be stored',
      );
    };
  }
  // With REDIS_URL the billing-integrity limits are shared by every ingest instance.
  const coordination = opts.config.redisUrl
    ? new Coordination(opts.config.redisUrl, opts.logger, { keyPrefix: opts.config.redisKeyPrefix })
    : undefined;
  const limits = new IngestLimits(
    {
      keyRequestsPerMinute: opts.config.ingestKeyRequestsPerMinute,
      addressRequestsPerMinute: opts.config.ingestAddressRequestsPerMinute,
      newDocumentsPerHour: opts.config.ingestNewDocumentsPerHour,
      adminFailuresPerAddress: opts.config.adminAuthFailuresPerAddress,
    },
    coordination,
    opts.now ?? Date.now,
  );
  const committer = new GroupCommitter<CollectRecord>(
    async (records) => {
      const outcome = await store.append(records);
      // Counted before the requests are answered; a counter that cannot be reached must not fail them.
      await limits.committed(outcome).catch((err: unknown) => opts.logger.warn({ err }, 'new-documents count not updated'));
      return outcome;
    },
    2000,
    (n) => metrics.committed(n),
    // SQLite has one writer; PostgreSQL overlaps a few commits (its pool holds 4 connections).
    store.dialect === 'postgres' ? 3 : 1,
    // Rows the store refuses fail only the requests that hold them (the batch is retried in halves).
    (e) => e instanceof RowsRejectedError,
  );
  const app = await buildIngestApp({
    logger: opts.logger,
    store,
    metrics,
    submit: (record) => committer.submit(record),
    adminToken: opts.config.adminToken,
    now: opts.now ?? Date.now,
    limits,
    trustProxy: opts.config.trustProxy,
  });
  let closed = false;
  return {
    app,
    store,
    async close() {
      if (closed) return;
      closed = true;
      await app.close();
      await committer.drain();
      await store.close();
      await coordination?.close();
    },
  };
}
