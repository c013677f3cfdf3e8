/**
 * Storage of accepted telemetry behind one interface (SQLite by default, PostgreSQL with
 * TELEMETRY_DATABASE_URL). `append` writes a whole batch of requests in one transaction and resolves only
 * after the commit: the HTTP layer answers 202 on that promise, so an acknowledged event is durable.
 *
 * Tables (same in both dialects):
 * - telemetry_requests: one row per accepted request (license key, receive time, version, page origin and
 *   path, hostname, user agent, screen size, metadata). No column exists for the client address.
 * - telemetry_events: one row per event (an "open"), with the month it is billed in.
 * - telemetry_documents: the exact set of unique (license key, month, documentId); the primary key makes a
 *   re-open a no-op, so the billed count is `COUNT(*)` and never an estimate.
 * - telemetry_hostnames: the set of (license key, month, hostname) seen, for the usage report.
 *
 * Requests carry a `uid` assigned by the ingest when the request is accepted for storage (a random
 * UUID). It is unique and inserted with ON CONFLICT DO NOTHING, and a request found already stored has
 * nothing of it (events, documents, hostnames) written again, so writing the same batch twice stores it
 * once: that is what lets the PostgreSQL adapter settle a commit whose outcome it could not see
 * (postgres-store.ts) and the group committer retry parts of a failed batch (group-commit.ts) without
 * double-counting an open. (One unique index on requests, not one on events: a request's events are
 * written with it or not at all.) Rows written before the column existed have a NULL uid (a unique index
 * admits any number of NULLs).
 */
import type { CollectRecord } from './payload.js';

export interface UsageReport {
  licenseKey: string;
  month: string;
  /** Unique documents opened in the month (documentId set). */
  documents: number;
  /** Every open, including those without a documentId. */
  opens: number;
  hostnames: string[];
}

/** What the ingest's /v1/health says of its store (no paths, no connection strings). */
export interface StoreHealth {
  status: 'healthy' | 'unhealthy';
  dialect: 'sqlite' | 'postgres';
  /** SQLite: the writer thread answered an empty batch ("running") or not ("stopped", "not answering"). */
  writer?: 'running' | 'stopped' | 'not answering';
  /** PostgreSQL: `SELECT 1` answered within the probe's time. */
  database?: 'reachable' | 'unreachable';
  /** How long the probe took. */
  latencyMs: number;
}

/** What a committed batch added: new unique documents per license key (feeds the new-documents cap). */
export interface AppendOutcome {
  newDocuments: Map<string, number>;
}

/**
 * The store refused the rows themselves (a data or constraint error, not an outage): the batch can be
 * split and retried so that only the requests whose rows are refused fail (group-commit.ts), and such a
 * request is answered 400, not 503 (retrying it would fail again).
 */
export class RowsRejectedError extends Error {
  constructor(
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`the store refused the rows: ${reason}`, options);
    this.name = 'RowsRejectedError';
  }
}

/** A health probe of the store gives up after this long (and then reports it unhealthy). */
export const STORE_HEALTH_TIMEOUT_MS = 2000;

export interface TelemetryStore {
  readonly dialect: 'sqlite' | 'postgres';
  /** Probes the write path: the SQLite writer thread, or a PostgreSQL round trip; never throws. */
  health(): Promise<StoreHealth>;
  /**
   * Durably stores every record in one transaction; resolves after the commit. Idempotent per record uid.
   * Rejects with RowsRejectedError when the rows themselves are refused, with 503 SERVICE_UNAVAILABLE when
   * the store cannot be reached (and nothing of the batch is stored).
   */
  append(records: CollectRecord[]): Promise<AppendOutcome>;
  /** Which of `documentIds` are already counted for the key and month (the new-documents cap's exact check). */
  knownDocuments(licenseKey: string, month: string, documentIds: string[]): Promise<Set<string>>;
  usage(licenseKey: string, month: string): Promise<UsageReport>;
  /** Usage of every license key with activity in the month, ordered by key (CSV export). */
  usageForMonth(month: string): Promise<UsageReport[]>;
  /** The documentIds counted for a key and month (dispute evidence; also what the durability test reads). */
  documentIds(licenseKey: string, month: string): Promise<string[]>;
  close(): Promise<void>;
}

export const SCHEMA_SQL = (dialect: 'sqlite' | 'postgres') => {
  const id = dialect === 'sqlite' ? 'INTEGER PRIMARY KEY' : 'BIGSERIAL PRIMARY KEY';
  return `
  CREATE TABLE IF NOT EXISTS telemetry_requests (
    id ${id},
    uid TEXT,
    license_key TEXT NOT NULL,
    received_at BIGINT NOT NULL,
    version_field TEXT NOT NULL,
    version TEXT NOT NULL,
    hostname TEXT NOT NULL,
    page_origin TEXT NOT NULL,
    page_path TEXT NOT NULL,
    user_agent TEXT NOT NULL,
    screen_width INTEGER,
    screen_height INTEGER,
    metadata TEXT
  );
  CREATE TABLE IF NOT EXISTS telemetry_events (
    id ${id},
    request_id BIGINT NOT NULL,
    license_key TEXT NOT NULL,
    month TEXT NOT NULL,
    received_at BIGINT NOT NULL,
    client_timestamp TEXT NOT NULL,
    document_id TEXT,
    document_created_at TEXT
  );
  CREATE INDEX IF NOT EXISTS telemetry_events_key_month ON telemetry_events (license_key, month);
  CREATE TABLE IF NOT EXISTS telemetry_documents (
    license_key TEXT NOT NULL,
    month TEXT NOT NULL,
    document_id TEXT NOT NULL,
    first_seen_at BIGINT NOT NULL,
    PRIMARY KEY (license_key, month, document_id)
  );
  CREATE TABLE IF NOT EXISTS telemetry_hostnames (
    license_key TEXT NOT NULL,
    month TEXT NOT NULL,
    hostname TEXT NOT NULL,
    PRIMARY KEY (license_key, month, hostname)
  );`;
};

/**
 * The uid column's index, run after SCHEMA_SQL and after the column was added to a table created by an
 * older version (PostgreSQL: ADD COLUMN IF NOT EXISTS here; SQLite has no such clause, sqlite-store.ts adds
 * it when table_info lacks it).
 */
export const UID_SQL = (dialect: 'sqlite' | 'postgres') => `
  ${dialect === 'postgres' ? 'ALTER TABLE telemetry_requests ADD COLUMN IF NOT EXISTS uid TEXT;' : ''}
  CREATE UNIQUE INDEX IF NOT EXISTS telemetry_requests_uid ON telemetry_requests (uid);`;
