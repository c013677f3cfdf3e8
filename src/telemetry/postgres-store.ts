/**
 * PostgreSQL adapter (TELEMETRY_DATABASE_URL). A batch is one transaction of a few set-based statements
 * (unnest over arrays), so the round trips do not grow with the batch; the commit's WAL flush is what the
 * 202 waits for (synchronous_commit is the server's, normally on). A few batches may commit concurrently:
 * rows of the unique tables are inserted in key order, so two transactions always take their row locks in
 * the same order and cannot deadlock.
 *
 * Lost connections (a failover, a restart, a proxy or NAT dropping them under load). Every client has an
 * `error` listener: the pool's idle ones through `pool.on('error')`, the one a batch holds through its own
 * listener for as long as it holds it (pg emits `error` on a checked-out client whose socket dies between
 * two queries; unheard, that ends the process). A broken client is released with its error, so the pool
 * destroys it and opens a fresh one for the next batch. What the batch's requests are told:
 * - Lost before COMMIT was sent: the server rolls the transaction back when the connection goes, so
 *   nothing is stored. Answer 503 + Retry-After: the requests failed and nothing of them is kept.
 * - Lost while COMMIT was in flight: the outcome is unknown (the server may have committed and lost only
 *   the reply). Answering 503 could leave stored events the client was told failed; answering 202 could
 *   acknowledge events that were never stored. So the batch is written again on a fresh connection, with
 *   the same request uids, retrying for up to COMMIT_SETTLE_MS: the uid column is unique and
 *   inserted ON CONFLICT DO NOTHING (documents and hostnames are sets already), so whether or not the first
 *   COMMIT landed, a successful second one leaves every row stored exactly once, and the answer is 202.
 *   The unique indexes also make a second write wait for a first that is still committing on the server.
 * - Only when the database stays unreachable for all of COMMIT_SETTLE_MS is such a batch answered 503
 *   while its rows may be stored. This is the one case the answer cannot be made to agree with the store
 *   without a distributed commit (PREPARE TRANSACTION is off by default on PostgreSQL); it needs a
 *   connection lost during the few milliseconds of a COMMIT and a database then unreachable for seconds,
 *   and what it costs is an open counted that the client believes failed (the client never retries, and a
 *   document is counted once per month however often it is sent, so billing is not inflated by it).
 * Data errors (SQLSTATE classes 22 and 23: a value the server refuses) are RowsRejectedError, so the group
 * committer retries the batch in halves and only the request holding the refused value fails.
 */
import pg from 'pg';
import type { CollectRecord } from './payload.js';
import { monthOf } from './payload.js';
import {
  RowsRejectedError,
  SCHEMA_SQL,
  STORE_HEALTH_TIMEOUT_MS,
  UID_SQL,
  type AppendOutcome,
  type StoreHealth,
  type TelemetryStore,
  type UsageReport,
} from './store.js';
import {
  DATABASE_RETRY_AFTER_SECONDS,
  DependencyError,
  describeConnectionFailure,
  isDatabaseUnavailable,
  mapDatabaseError,
  poolOptions,
} from '../coordination/database.js';
import { FolioError } from '../errors.js';

/** Hostname rows known to be committed: skipping them spares concurrent batches a wait on one hot row. */
const KNOWN_HOSTS_LIMIT = 10_000;
/**
 * How long a batch whose COMMIT lost its connection keeps trying to write itself again (see the header).
 * Within the ingest's 15 s request timeout, with room for the first attempt; long enough for a pooler or
 * proxy to reconnect, or a replica to be promoted by a fast failover.
 */
export const COMMIT_SETTLE_MS = 8000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The connection went while COMMIT was in flight: the transaction may or may not be committed. */
class CommitOutcomeUnknown extends Error {
  constructor(readonly lost: unknown) {
    super('the connection was lost during COMMIT', { cause: lost });
  }
}

/** SQLSTATE classes of errors caused by the values written (22 data exception, 23 integrity). */
function isRowError(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' && /^2[23]/.test(code) && !isDatabaseUnavailable(e);
}

export class PostgresTelemetryStore implements TelemetryStore {
  readonly dialect = 'postgres' as const;
  private readonly knownHosts = new Set<string>();
  /** Told of every batch whose COMMIT lost its connection: settled (written again) or not (answered 503). */
  onUncertainCommit?: (settled: boolean) => void;
  private constructor(private readonly pool: pg.Pool) {}

  /**
   * An unreachable server at start is a DependencyError naming TELEMETRY_DATABASE_URL (one line, exit 1);
   * later a lost connection fails the batch (the ingest answers 503 and acknowledges nothing) and usage
   * reads answer 503.
   */
  static async open(url: string): Promise<PostgresTelemetryStore> {
    const pool = new pg.Pool(poolOptions(url, 4));
    // An idle client whose server went away is reported here; without a listener it would end the process.
    // The pool then drops that client and opens another when one is next needed.
    pool.on('error', () => undefined);
    try {
      const client = await pool.connect();
      let lost: Error | undefined;
      client.on('error', (e: Error) => (lost = e));
      try {
        // Serialise schema creation between instances starting together.
        await client.query('SELECT pg_advisory_lock(724011)');
        await client.query(SCHEMA_SQL('postgres'));
        await client.query(UID_SQL('postgres'));
        await client.query('SELECT pg_advisory_unlock(724011)');
      } finally {
        client.release(lost);
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

  async append(records: CollectRecord[]): Promise<AppendOutcome> {
    if (records.length === 0) return { newDocuments: new Map() };
    try {
      return await this.write(records);
    } catch (e) {
      if (!(e instanceof CommitOutcomeUnknown)) throw e;
      return this.settle(records, e);
    }
  }

  /** Writes a batch whose first COMMIT went unanswered again (idempotent) until it commits or time is up. */
  private async settle(records: CollectRecord[], first: CommitOutcomeUnknown): Promise<AppendOutcome> {
    const until = Date.now() + COMMIT_SETTLE_MS;
    let last: unknown = first.lost;
    for (let wait = 100; Date.now() < until; wait = Math.min(wait * 2, 1000)) {
      try {
        const outcome = await this.write(records);
        this.onUncertainCommit?.(true);
        return outcome;
      } catch (e) {
        if (e instanceof RowsRejectedError) throw e;
        last = e instanceof CommitOutcomeUnknown ? e.lost : e;
      }
      await sleep(Math.min(wait, Math.max(0, until - Date.now())));
    }
    this.onUncertainCommit?.(false);
    throw new FolioError('SERVICE_UNAVAILABLE', 'The database connection was lost while the events were committed; retry later', {
      retryAfter: DATABASE_RETRY_AFTER_SECONDS,
      cause: last,
    });
  }

  /** One transaction. Throws CommitOutcomeUnknown, RowsRejectedError, or 503 (nothing stored). */
  private async write(records: CollectRecord[]): Promise<AppendOutcome> {
    const cols = {
      uid: [] as string[],
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
      cols.uid.push(r.uid);
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
    // Held by this batch, the client is not the pool's to watch: a socket dying between two queries is
    // emitted here (the query in flight, if any, also rejects with it).
    let lost: Error | undefined;
    const onError = (e: Error) => (lost ??= e);
    client.on('error', onError);
    let broken: Error | undefined;
    let committing = false;
    try {
      await client.query('BEGIN');
      // Ids are drawn from the sequence first, so each event row can name its request without relying on
      // the order of RETURNING rows.
      const ids = await client.query<{ id: string }>(
        "SELECT nextval(pg_get_serial_sequence('telemetry_requests', 'id'))::text AS id FROM generate_series(1, $1)",
        [records.length],
      );
      // A request already stored (its uid is there: an earlier write of this batch did commit) returns no
      // row, and nothing of it (events, documents, hostnames) is written again.
      const inserted = await client.query<{ id: string }>(
        `INSERT INTO telemetry_requests (id, uid, license_key, received_at, version_field, version, hostname, page_origin, page_path,
           user_agent, screen_width, screen_height, metadata)
         SELECT * FROM unnest($1::bigint[], $13::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
           $9::text[], $10::int[], $11::int[], $12::text[])
         ON CONFLICT (uid) DO NOTHING RETURNING id::text AS id`,
        [
          ids.rows.map((r) => r.id),
          cols.key,
          cols.at,
          cols.vf,
          cols.v,
          cols.host,
          cols.origin,
          cols.path,
          cols.ua,
          cols.sw,
          cols.sh,
          cols.meta,
          cols.uid,
        ],
      );
      const fresh = new Set(inserted.rows.map((r) => r.id));
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
        if (!fresh.has(ids.rows[i]!.id)) return;
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
      const newDocuments = new Map<string, number>();
      if (docs.doc.length > 0) {
        const added = await client.query<{ k: string; n: string }>(
          `WITH added AS (
             INSERT INTO telemetry_documents (license_key, month, document_id, first_seen_at)
             SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) AS t(k, m, d, a) ORDER BY k, m, d
             ON CONFLICT DO NOTHING RETURNING license_key)
           SELECT license_key AS k, COUNT(*)::text AS n FROM added GROUP BY license_key`,
          [docs.key, docs.month, docs.doc, docs.at],
        );
        for (const row of added.rows) newDocuments.set(row.k, Number(row.n));
      }
      if (hosts.host.length > 0) {
        await client.query(
          `INSERT INTO telemetry_hostnames (license_key, month, hostname)
           SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) AS t(k, m, h) ORDER BY k, m, h ON CONFLICT DO NOTHING`,
          [hosts.key, hosts.month, hosts.host],
        );
      }
      committing = true;
      await client.query('COMMIT');
      committing = false;
      if (this.knownHosts.size > KNOWN_HOSTS_LIMIT) this.knownHosts.clear();
      hosts.host.forEach((h, i) => this.knownHosts.add(`${hosts.key[i]}\u0000${hosts.month[i]}\u0000${h}`));
      return { newDocuments };
    } catch (e) {
      const gone = lost !== undefined || isDatabaseUnavailable(e);
      if (gone) {
        broken = e instanceof Error ? e : (lost ?? new Error('connection lost'));
        if (committing) throw new CommitOutcomeUnknown(e);
        throw mapDatabaseError(isDatabaseUnavailable(e) ? e : lost);
      }
      // The connection is fine: roll back; if even that fails, do not give the client back to the pool.
      await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
      if (isRowError(e)) throw new RowsRejectedError((e as Error).message, { cause: e });
      throw mapDatabaseError(e);
    } finally {
      // A client whose connection broke is destroyed (the pool opens a fresh one), not returned to the pool.
      // The listener stays on a destroyed client (a late 'error' must still be heard); a healthy one sheds it.
      broken ??= lost;
      if (!broken) client.off('error', onError);
      client.release(broken);
    }
  }

  async knownDocuments(licenseKey: string, month: string, documentIds: string[]): Promise<Set<string>> {
    if (documentIds.length === 0) return new Set();
    const r = await this.read<{ document_id: string }>(
      'SELECT document_id FROM telemetry_documents WHERE license_key = $1 AND month = $2 AND document_id = ANY($3::text[])',
      [licenseKey, month, documentIds],
    );
    return new Set(r.rows.map((x) => x.document_id));
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
