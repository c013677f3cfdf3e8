/**
 * Worker thread that owns the SQLite write connection. Each message is one batch of requests, written in one
 * transaction with synchronous=FULL (the WAL is fsynced before the commit returns). Running here, the fsync
 * no longer stalls the event loop: the main thread keeps parsing requests while a commit is under way, and
 * those requests form the next batch (group commit).
 *
 * Requests are inserted ON CONFLICT DO NOTHING on their uid (store.ts), and one already stored has nothing
 * written again: a batch written again after a failure stores each request once. The reply carries the
 * new unique documents per license key (the new-documents cap) and, on failure, SQLite's error code, which
 * tells a refused value from a store that cannot write.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { CollectRecord } from './payload.js';
import { monthOf } from './payload.js';

export interface WriterRequest {
  id: number;
  records?: CollectRecord[];
  close?: boolean;
}
export interface WriterReply {
  id: number;
  error?: string;
  /** SqliteError.code (SQLITE_CONSTRAINT_…, SQLITE_FULL, …) of a failed batch. */
  errorCode?: string;
  /** New unique documents per license key of a committed batch. */
  newDocuments?: Array<[string, number]>;
}

const db = new Database((workerData as { file: string }).file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.pragma('busy_timeout = 5000');

const insertRequest = db.prepare(
  `INSERT INTO telemetry_requests (uid, license_key, received_at, version_field, version, hostname, page_origin, page_path,
     user_agent, screen_width, screen_height, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (uid) DO NOTHING`,
);
const insertEvent = db.prepare(
  `INSERT INTO telemetry_events (request_id, license_key, month, received_at, client_timestamp, document_id, document_created_at)
   VALUES (?, ?, ?, ?, ?, ?, ?)`,
);
const insertDocument = db.prepare(
  'INSERT INTO telemetry_documents (license_key, month, document_id, first_seen_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
);
const insertHostname = db.prepare('INSERT INTO telemetry_hostnames (license_key, month, hostname) VALUES (?, ?, ?) ON CONFLICT DO NOTHING');

/** (key, month, hostname) rows known to be committed: most requests repeat one, and skipping it saves a statement. */
const knownHosts = new Set<string>();
let newHosts: string[] = [];
let newDocuments = new Map<string, number>();

const writeBatch = db.transaction((records: CollectRecord[]) => {
  for (const r of records) {
    const month = monthOf(r.receivedAt);
    const inserted = insertRequest.run(
      r.uid,
      r.licenseKey,
      r.receivedAt,
      r.versionField,
      r.version,
      r.hostname,
      r.pageOrigin,
      r.pagePath,
      r.userAgent,
      r.screenWidth,
      r.screenHeight,
      r.metadata,
    );
    // Already stored by an earlier write of the same request: its events are too.
    if (inserted.changes === 0) continue;
    r.events.forEach((e) => {
      insertEvent.run(inserted.lastInsertRowid, r.licenseKey, month, r.receivedAt, e.timestamp, e.documentId, e.documentCreatedAt);
      if (e.documentId !== null && insertDocument.run(r.licenseKey, month, e.documentId, r.receivedAt).changes > 0) {
        newDocuments.set(r.licenseKey, (newDocuments.get(r.licenseKey) ?? 0) + 1);
      }
    });
    const hostKey = `${r.licenseKey}\u0000${month}\u0000${r.hostname}`;
    if (r.hostname !== '' && !knownHosts.has(hostKey)) {
      insertHostname.run(r.licenseKey, month, r.hostname);
      newHosts.push(hostKey);
    }
  }
});

// id 0: the writer is ready (schema seen, statements prepared); the store waits for it before serving.
parentPort!.postMessage({ id: 0 } satisfies WriterReply);

parentPort!.on('message', (msg: WriterRequest) => {
  if (msg.close) {
    db.close();
    parentPort!.postMessage({ id: msg.id } satisfies WriterReply);
    parentPort!.close();
    return;
  }
  try {
    newHosts = [];
    newDocuments = new Map();
    writeBatch(msg.records ?? []);
    if (knownHosts.size > 10_000) knownHosts.clear();
    for (const h of newHosts) knownHosts.add(h);
    parentPort!.postMessage({ id: msg.id, newDocuments: [...newDocuments] } satisfies WriterReply);
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    parentPort!.postMessage({
      id: msg.id,
      error: (e as Error).message,
      errorCode: typeof code === 'string' ? code : undefined,
    } satisfies WriterReply);
  }
});
