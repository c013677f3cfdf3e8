/**
 * The telemetry module: the ingest service's settings. The ingest is its own server (INGEST_PORT, started by
 * src/main.ts through src/ingest-entry.ts), so the module adds nothing to the API; its settings are read and
 * checked at start-up with everyone else's.
 */
import { Type } from '@fastify/type-provider-typebox';
import { Setting } from '../config/index.js';
import type { Module } from '../http/capability.js';

export const telemetrySettings = Type.Object({
  ingestPort: Setting.integer('INGEST_PORT', { default: 8081, minimum: 0, maximum: 65535 }),
  /** PostgreSQL for the ingest's records; absent: SQLite in DATA_DIR. */
  telemetryDatabaseUrl: Setting.url('TELEMETRY_DATABASE_URL', ['postgres:', 'postgresql:']),
  /** Bearer token of GET /v1/usage; absent: nobody may read usage. */
  adminToken: Setting.optionalString('ADMIN_TOKEN', { minLength: 16 }),
  /**
   * The ingest's billing-integrity limits (src/telemetry/limits.ts; 0 turns one off): POST /v1/collect
   * requests per license key and per client address per minute, new unique documents per license key per
   * hour, wrong ADMIN_TOKEN presentations per address per 15 minutes. Defaults far above honest use
   * (docs/operations.md, "Billing-integrity measures"): one open is one request, so 1,000/s per key is a very
   * large customer's peak; 50/s from one address is a busy office NAT.
   */
  ingestKeyRequestsPerMinute: Setting.integer('INGEST_KEY_REQUESTS_PER_MINUTE', { default: 60_000, minimum: 0, maximum: 100_000_000 }),
  ingestAddressRequestsPerMinute: Setting.integer('INGEST_ADDRESS_REQUESTS_PER_MINUTE', { default: 3_000, minimum: 0, maximum: 100_000_000 }),
  ingestNewDocumentsPerHour: Setting.integer('INGEST_NEW_DOCUMENTS_PER_HOUR', { default: 20_000, minimum: 0, maximum: 100_000_000 }),
  adminAuthFailuresPerAddress: Setting.integer('ADMIN_AUTH_FAILURES_PER_ADDRESS', { default: 10, minimum: 0, maximum: 1_000_000 }),
});

declare module '../config/index.js' {
  interface ModuleSettings {
    telemetry: typeof telemetrySettings;
  }
}

export default { id: 'telemetry', settings: telemetrySettings } satisfies Module;
