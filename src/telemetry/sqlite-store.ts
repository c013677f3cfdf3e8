/**
 * SQLite adapter (default; one file in DATA_DIR). WAL with synchronous=FULL: a commit returns only after the
 * WAL is fsynced, so an acknowledged event survives a crash of the process and of the machine. The group
 * committer above calls `append` with many requests at once, so that fsync is shared.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { CollectRecord } from './payload.js';
import { monthOf } from './payload.js';
import { SCHEMA_SQL, type TelemetryStore, type UsageReport } from './store.js';

type Row = Record<string, unknown>;

export class SqliteTelemetryStore implements TelemetryStore {
  readonly dialect = 'sqlite' as const;
  private readonly db: Database.Database;
  private readonly insertRequest: Database.Statement;
  private readonly insertEvent: Database.Statement;
  private readonly insertDocument: Database.Statement;
  private readonly insertHostname: Database.Statement;
  private readonly writeBatch: (records: CollectRecord[]) => void;

  constructor(file: string) {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(SCHEMA_SQL('sqlite'));
    this.insertRequest = this.db.prepare(
      `INSERT INTO telemetry_requests (license_key, received_at, version_field, version, hostname, page_origin, page_path,
         user_agent, screen_width, screen_height, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.insertEvent = this.db.prepare(
      `INSERT INTO telemetry_events (request_id, license_key, month, received_at, client_timestamp, document_id, document_created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    this.insertDocument = this.db.prepare(
      'INSERT INTO telemetry_documents (license_key, month, document_id, first_seen_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
    );
    this.insertHostname = this.db.prepare(
      'INSERT INTO telemetry_hostnames (license_key, month, hostname) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
    );
    this.writeBatch = this.db.transaction((records: CollectRecord[]) => {
      for (const r of records) {
        const month = monthOf(r.receivedAt);
        const requestId = this.insertRequest.run(
          r.licenseKey, r.receivedAt, r.versionField, r.version, r.hostname, r.pageOrigin, r.pagePath,
          r.userAgent, r.screenWidth, r.screenHeight, r.metadata,
        ).lastInsertRowid;
        for (const e of r.events) {
          this.insertEvent.run(requestId, r.licenseKey, month, r.receivedAt, e.timestamp, e.documentId, e.documentCreatedAt);
          if (e.documentId !== null) this.insertDocument.run(r.licenseKey, month, e.documentId, r.receivedAt);
        }
        if (r.hostname !== '') this.insertHostname.run(r.licenseKey, month, r.hostname);
      }
    });
  }

  async append(records: CollectRecord[]): Promise<void> {
    this.writeBatch(records);
  }

  async usage(licenseKey: string, month: string): Promise<UsageReport> {
    const documents = this.db
      .prepare('SELECT COUNT(*) AS n FROM telemetry_documents WHERE license_key = ? AND month = ?')
      .get(licenseKey, month) as Row;
    const opens = this.db
      .prepare('SELECT COUNT(*) AS n FROM telemetry_events WHERE license_key = ? AND month = ?')
      .get(licenseKey, month) as Row;
    const hostnames = (this.db
      .prepare('SELECT hostname FROM telemetry_hostnames WHERE license_key = ? AND month = ? ORDER BY hostname')
      .all(licenseKey, month) as Row[]).map((r) => String(r.hostname));
    return { licenseKey, month, documents: Number(documents.n), opens: Number(opens.n), hostnames };
  }

  async usageForMonth(month: string): Promise<UsageReport[]> {
    const keys = (this.db
      .prepare('SELECT DISTINCT license_key FROM telemetry_events WHERE month = ? ORDER BY license_key')
      .all(month) as Row[]).map((r) => String(r.license_key));
    const out: UsageReport[] = [];
    for (const k of keys) out.push(await this.usage(k, month));
    return out;
  }

  async documentIds(licenseKey: string, month: string): Promise<string[]> {
    return (this.db
      .prepare('SELECT document_id FROM telemetry_documents WHERE license_key = ? AND month = ? ORDER BY document_id')
      .all(licenseKey, month) as Row[]).map((r) => String(r.document_id));
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
