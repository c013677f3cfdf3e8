/**
 * SQLite adapter (default; one file in DATA_DIR). Writes go to a worker thread (sqlite-writer.ts) that holds
 * the only write connection, in WAL mode with synchronous=FULL: a batch's promise resolves only after its
 * transaction is committed and the WAL fsynced, so an acknowledged event survives a crash of the process
 * and of the machine. Reads (the usage report) use a connection of their own on the main thread; WAL lets
 * them run beside the writer.
 *
 * A batch SQLite refuses because of its values (SQLITE_CONSTRAINT…, SQLITE_MISMATCH, SQLITE_TOOBIG) is a
 * RowsRejectedError, so the group committer retries it in halves and only the offending request fails;
 * any other failure (disk full, I/O error, the writer gone) fails the batch with 503 and stores nothing of
 * it (the transaction is rolled back). The outcome is never unknown here as it can be with PostgreSQL: the
 * commit and its reply happen in this process, and a writer thread that dies mid-transaction leaves it
 * rolled back by the WAL. (Only a thread dying between its COMMIT and its reply could leave a stored batch
 * answered 503; nothing in the writer runs there but postMessage.)
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { CollectRecord } from './payload.js';
import { FolioError } from '../errors.js';
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
import type { WriterReply, WriterRequest } from './sqlite-writer.js';

type Row = Record<string, unknown>;

/** SQLite result codes that are about the values written, not the database's ability to write. */
const ROW_ERROR_CODES = /^SQLITE_(CONSTRAINT|MISMATCH|TOOBIG|RANGE)/;

/** Adds the uid column to a table created before it existed (SQLite has no ADD COLUMN IF NOT EXISTS). */
function addUidColumn(db: Database.Database): void {
  const columns = db.prepare('PRAGMA table_info(telemetry_requests)').all() as Array<{ name: string }>;
  if (!columns.some((c) => c.name === 'uid')) db.exec('ALTER TABLE telemetry_requests ADD COLUMN uid TEXT');
  db.exec(UID_SQL('sqlite'));
}

/**
 * The writer module next to this one. Built, it is plain .js. From source (tsx, vitest) it is .ts, and a
 * worker does not inherit the parent's loader, so a small bootstrap registers tsx in the worker first.
 */
function writerWorker(file: string): Worker {
  if (!import.meta.url.endsWith('.ts')) {
    return new Worker(new URL('./sqlite-writer.js', import.meta.url), { workerData: { file } });
  }
  const require = createRequire(import.meta.url);
  const tsxApi = pathToFileURL(require.resolve('tsx/esm/api').replace(/index\.cjs$/, 'index.mjs')).href;
  const entry = new URL('./sqlite-writer.ts', import.meta.url).href;
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); })`;
  return new Worker(bootstrap, { eval: true, workerData: { file } });
}

export class SqliteTelemetryStore implements TelemetryStore {
  readonly dialect = 'sqlite' as const;
  private readonly db: Database.Database;
  private readonly worker: Worker;
  private readonly waiting = new Map<number, { resolve: (reply: WriterReply) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private failed?: Error;
  /** Resolves when the writer has opened the database and prepared its statements; rejects if it cannot. */
  readonly ready: Promise<void>;

  constructor(file: string) {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(SCHEMA_SQL('sqlite'));
    addUidColumn(this.db);
    this.worker = writerWorker(file);
    let started!: () => void;
    let notStarted!: (e: Error) => void;
    this.ready = new Promise<void>((resolve, reject) => {
      started = resolve;
      notStarted = reject;
    });
    this.ready.catch(() => undefined);
    this.worker.on('message', (reply: WriterReply) => {
      if (reply.id === 0) return started();
      const w = this.waiting.get(reply.id);
      this.waiting.delete(reply.id);
      if (!reply.error) w?.resolve(reply);
      else if (reply.errorCode && ROW_ERROR_CODES.test(reply.errorCode)) w?.reject(new RowsRejectedError(`${reply.errorCode}: ${reply.error}`));
      else w?.reject(new Error(`telemetry store write failed: ${reply.error}`));
    });
    const fail = (e: Error) => {
      notStarted(e);
      this.failed = e;
      for (const w of this.waiting.values()) w.reject(e);
      this.waiting.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`telemetry writer exited (${code})`)));
  }

  private send(msg: Omit<WriterRequest, 'id'>): Promise<WriterReply> {
    if (this.failed) return Promise.reject(this.failed);
    const id = this.nextId++;
    return new Promise<WriterReply>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ ...msg, id } satisfies WriterRequest);
    });
  }

  async append(records: CollectRecord[]): Promise<AppendOutcome> {
    try {
      const reply = await this.send({ records });
      return { newDocuments: new Map(reply.newDocuments ?? []) };
    } catch (e) {
      if (e instanceof RowsRejectedError) throw e;
      throw new FolioError('SERVICE_UNAVAILABLE', 'The telemetry store cannot write; retry later', { retryAfter: 5, cause: e });
    }
  }

  async knownDocuments(licenseKey: string, month: string, documentIds: string[]): Promise<Set<string>> {
    if (documentIds.length === 0) return new Set();
    const rows = this.db
      .prepare(
        `SELECT document_id FROM telemetry_documents WHERE license_key = ? AND month = ? AND document_id IN (${documentIds.map(() => '?').join(',')})`,
      )
      .all(licenseKey, month, ...documentIds) as Row[];
    return new Set(rows.map((r) => String(r.document_id)));
  }

  /** An empty batch through the writer thread: it answers once the batches queued before it are committed. */
  async health(): Promise<StoreHealth> {
    const started = Date.now();
    const result = (writer: NonNullable<StoreHealth['writer']>): StoreHealth => ({
      status: writer === 'running' ? 'healthy' : 'unhealthy',
      dialect: 'sqlite',
      writer,
      latencyMs: Date.now() - started,
    });
    if (this.failed) return result('stopped');
    let timer: NodeJS.Timeout | undefined;
    const answered = await Promise.race([
      this.send({ records: [] }).then(
        () => true,
        () => false,
      ),
      new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), STORE_HEALTH_TIMEOUT_MS))),
    ]);
    clearTimeout(timer);
    return result(answered === true ? 'running' : answered === 'late' ? 'not answering' : 'stopped');
  }

  async usage(licenseKey: string, month: string): Promise<UsageReport> {
    const documents = this.db
      .prepare('SELECT COUNT(*) AS n FROM telemetry_documents WHERE license_key = ? AND month = ?')
      .get(licenseKey, month) as Row;
    const opens = this.db.prepare('SELECT COUNT(*) AS n FROM telemetry_events WHERE license_key = ? AND month = ?').get(licenseKey, month) as Row;
    const hostnames = (
      this.db
        .prepare('SELECT hostname FROM telemetry_hostnames WHERE license_key = ? AND month = ? ORDER BY hostname')
        .all(licenseKey, month) as Row[]
    ).map((r) => String(r.hostname));
    return { licenseKey, month, documents: Number(documents.n), opens: Number(opens.n), hostnames };
  }

  async usageForMonth(month: string): Promise<UsageReport[]> {
    const keys = (this.db.prepare('SELECT DISTINCT license_key FROM telemetry_events WHERE month = ? ORDER BY license_key').all(month) as Row[]).map(
      (r) => String(r.license_key),
    );
    const out: UsageReport[] = [];
    for (const k of keys) out.push(await this.usage(k, month));
    return out;
  }

  async documentIds(licenseKey: string, month: string): Promise<string[]> {
    return (
      this.db
        .prepare('SELECT document_id FROM telemetry_documents WHERE license_key = ? AND month = ? ORDER BY document_id')
        .all(licenseKey, month) as Row[]
    ).map((r) => String(r.document_id));
  }

  async close(): Promise<void> {
    if (!this.failed) {
      await this.send({ close: true }).catch(() => undefined);
      await new Promise<void>((r) => (this.worker.threadId === -1 ? r() : this.worker.once('exit', () => r())));
    }
    if (this.db.open) this.db.close();
  }
}
