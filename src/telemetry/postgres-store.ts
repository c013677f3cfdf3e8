/**
 * PostgreSQL adapter (TELEMETRY_DATABASE_URL). A batch is one transaction of a few set-based statements
 * (unnest over arrays), so the round trips do not grow with the batch; the commit's WAL flush is what the
 * 202 waits for (synchronous_commit is the server's, normally on). A few batches may commit concurrently:
 * rows of the unique tables are inserted in key order, so two transactions always take their row locks in
 * the same order and cannot deadlock.
 */
import pg from 'pg';
import type { CollectRecord } from './payload.js';
import { monthOf } from './payload.js';
import { SCHEMA_SQL, STORE_HEALTH_TIMEOUT_MS, type StoreHealth, type TelemetryStore, type UsageReport } from './store.js';
import { DependencyError, describeConnectionFailure, isDatabaseUnavailable, mapDatabaseError, poolOptions } from '../coordination/database.js';

/** Hostname rows known to be committed: skipping them spares concurrent batches a wait on one hot row. */
const KNOWN_HOSTS_LIMIT = 10_000;

export class PostgresTelemetryStore implements TelemetryStore {
  readonly dialect = 'postgres' as const;
  private readonly knownHosts = new Set<string>();
  private constructor(private readonly pool: pg.Pool) {}

  /**
   * An unreachable server at start is a DependencyError naming TELEMETRY_DATABASE_URL (one line, exit 1);
   * later a lost connection fails the batch (the ingest answers 503 and acknowledges nothing) and usage
   * reads answer 503.
   */
  static async open(url: string): Promise<PostgresTelemetryStore> {
    const pool = new pg.Pool(poolOptions(url, 4));
    // An idle client whose server went away is reported here; without a listener it would end the process.
    pool.on('error', () => undefined);
    try {
      const client = await pool.connect();
      try {
        // Serialise schema creation between instances starting together.
        await client.query('SELECT pg_advisory_lock(724011)');
        await client.query(SCHEMA_SQL('postgres'));
        await client.query('SELECT pg_advisory_unlock(724011)');
      } finally {
        client.release();
      }
    } catch (e) {
      await pool.end().catch(() => undefined);
      throw new DependencyError('TELEMETRY_DATABASE_URL', describeConnectionFailure(e, url));
    }
    return new PostgresTelemetryStore(pool);
  }

  private async read<R extends pg.QueryResultRow>(sql: string, params: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.pool.query<R>(sql, params);
    } catch (e) {
      throw mapDatabaseError(e);
    }
  }

  async append(records: CollectRecord[]): Promise<void> {
    if (records.length === 0) return;
    const cols = {
      key: [] as string[],
      at: [] as string[],
      vf: [] as string[],
      v: [] as string[],
      host: [] as string[],
      origin: [] as string[],
      path: [] as string[],
      ua: [] as string[],
      sw: [] as (number | null)[],
      sh: [] as (number | null)[],
      meta: [] as (string | null)[],
    };
    for (const r of records) {
      cols.key.push(r.licenseKey);
      cols.at.push(String(r.receivedAt));
      cols.vf.push(r.versionField);
      cols.v.push(r.version);
      cols.host.push(r.hostname);
      cols.origin.push(r.pageOrigin);
      cols.path.push(r.pagePath);
      cols.ua.push(r.userAgent);
      cols.sw.push(r.screenWidth);
      cols.sh.push(r.screenHeight);
      cols.meta.push(r.metadata);
    }
    const client = await this.pool.connect().catch((e: unknown) => {
      throw mapDatabaseError(e);
    });
    let broken = false;
    try {
      await client.query('BEGIN');
      // Ids are drawn from the sequence first, so each event row can name its request without relying on
      // the order of RETURNING rows.
      const ids = await client.query<{ id: string }>(
        "SELECT nextval(pg_get_serial_sequence('telemetry_requests', 'id'))::text AS id FROM generate_series(1, $1)",
        [records.length],
      );
      await client.query(
        `INSERT INTO telemetry_requests (id, license_key, received_at, version_field, version, hostname, page_origin, page_path,
           user_agent, screen_width, screen_height, metadata)
         SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
           $9::text[], $10::int[], $11::int[], $12::text[])`,
        [ids.rows.map((r) => r.id), cols.key, cols.at, cols.vf, cols.v, cols.host, cols.origin, cols.path, cols.ua, cols.sw, cols.sh, cols.meta],
      );
      const ev = {
        req: [] as string[],
        key: [] as string[],
        month: [] as string[],
        at: [] as string[],
        ts: [] as string[],
        doc: [] as (string | null)[],
        created: [] as (string | null)[],
      };
      const docs = { key: [] as string[], month: [] as string[], doc: [] as string[], at: [] as string[] };
      const hosts = { key: [] as string[], month: [] as string[], host: [] as string[] };
      records.forEach((r, i) => {
        const month = monthOf(r.receivedAt);
        for (const e of r.events) {
          ev.req.push(ids.rows[i]!.id);
          ev.key.push(r.licenseKey);
          ev.month.push(month);
          ev.at.push(String(r.receivedAt));
          ev.ts.push(e.timestamp);
          ev.doc.push(e.documentId);
          ev.created.push(e.documentCreatedAt);
          if (e.documentId !== null) {
            docs.key.push(r.licenseKey);
            docs.month.push(month);
            docs.doc.push(e.documentId);
            docs.at.push(String(r.receivedAt));
          }
        }
        const hostKey = `${r.licenseKey}\u0000${month}\u0000${r.hostname}`;
        if (r.hostname !== '' && !this.knownHosts.has(hostKey)) {
          hosts.key.push(r.licenseKey);
          hosts.month.push(month);
          hosts.host.push(r.hostname);
        }
      });
      await client.query(
        `INSERT INTO telemetry_events (request_id, license_key, month, received_at, client_timestamp, document_id, document_created_at)
         SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::text[])`,
        [ev.req, ev.key, ev.month, ev.at, ev.ts, ev.doc, ev.created],
      );
      if (docs.doc.length > 0) {
        await client.query(
          `INSERT INTO telemetry_documents (license_key, month, document_id, first_seen_at)
           SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) AS t(k, m, d, a) ORDER BY k, m, d
           ON CONFLICT DO NOTHING`,
          [docs.key, docs.month, docs.doc, docs.at],
        );
      }
      if (hosts.host.length > 0) {
        await client.query(
          `INSERT INTO telemetry_hostnames (license_key, month, hostname)
           SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) AS t(k, m, h) ORDER BY k, m, h ON CONFLICT DO NOTHING`,
          [hosts.key, hosts.month, hosts.host],
        );
      }
      await client.query('COMMIT');
      if (this.knownHosts.size > KNOWN_HOSTS_LIMIT) this.knownHosts.clear();
      hosts.host.forEach((h, i) => this.knownHosts.add(`${hosts.key[i]}\u0000${hosts.month[i]}\u0000${h}`));
    } catch (e) {
      broken = isDatabaseUnavailable(e);
      await client.query('ROLLBACK').catch(() => undefined);
      throw mapDatabaseError(e);
    } finally {
      // A client whose connection broke is discarded, not returned to the pool.
      client.release(broken);
    }
  }

  async usage(licenseKey: string, month: string): Promise<UsageReport> {
    const r = await this.read<{ documents: string; opens: string; hostnames: string[] | null }>(
      `SELECT (SELECT COUNT(*) FROM telemetry_documents WHERE license_key = $1 AND month = $2) AS documents,
              (SELECT COUNT(*) FROM telemetry_events WHERE license_key = $1 AND month = $2) AS opens,
              (SELECT array_agg(hostname ORDER BY hostname) FROM telemetry_hostnames WHERE license_key = $1 AND month = $2) AS hostnames`,
      [licenseKey, month],
    );
    const row = r.rows[0]!;
    return { licenseKey, month, documents: Number(row.documents), opens: Number(row.opens), hostnames: row.hostnames ?? [] };
  }

  async usageForMonth(month: string): Promise<UsageReport[]> {
    const keys = await this.read<{ license_key: string }>('SELECT DISTINCT license_key FROM telemetry_events WHERE month = $1 ORDER BY license_key', [
      month,
    ]);
    const out: UsageReport[] = [];
    for (const k of keys.rows) out.push(await this.usage(k.license_key, month));
    return out;
  }

  async documentIds(licenseKey: string, month: string): Promise<string[]> {
    const r = await this.read<{ document_id: string }>(
      'SELECT document_id FROM telemetry_documents WHERE license_key = $1 AND month = $2 ORDER BY document_id',
      [licenseKey, month],
    );
    return r.rows.map((x) => x.document_id);
  }

  /** `SELECT 1` through the pool, bounded by STORE_HEALTH_TIMEOUT_MS. */
  async health(): Promise<StoreHealth> {
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const reachable = await Promise.race([
      this.pool.query('SELECT 1').then(
        () => true,
        () => false,
      ),
      new Promise<false>((r) => (timer = setTimeout(() => r(false), STORE_HEALTH_TIMEOUT_MS))),
    ]);
    clearTimeout(timer);
    return {
      status: reachable ? 'healthy' : 'unhealthy',
      dialect: 'postgres',
      database: reachable ? 'reachable' : 'unreachable',
      latencyMs: Date.now() - started,
    };
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
