/**
 * Storage of accounts' keys and verification codes behind one small interface, with a SQLite adapter
 * (default, file in DATA_DIR) and a PostgreSQL adapter (DATABASE_URL). Times are epoch milliseconds in
 * both so the adapters stay symmetrical. Each adapter migrates its schema on open.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { DependencyError, describeConnectionFailure, mapDatabaseError, poolOptions } from '../coordination/database.js';

export interface CodeRecord {
  email: string;
  codeHash: string;
  createdAt: number;
  expiresAt: number;
  attempts: number;
  usedAt: number | null;
}

export interface KeyRecord {
  keyId: string;
  email: string;
  keyHash: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

export interface AuthStore {
  /**
   * Replaces any previous code for the address (a new code voids the old one). With `cooldownSince`, an
   * unused code created after that time is kept and false returned: the check and the write are one
   * statement, so two instances answering the same address at once cannot both send a code.
   */
  putCode(code: Omit<CodeRecord, 'attempts' | 'usedAt'>, cooldownSince?: number): Promise<boolean>;
  getCode(email: string): Promise<CodeRecord | undefined>;
  /** Adds one failed attempt; returns the new count. */
  recordFailedAttempt(email: string): Promise<number>;
  /** Marks the code used if it is still usable; false when another request got there first. */
  consumeCode(email: string, codeHash: string, now: number, maxAttempts: number): Promise<boolean>;
  insertKey(key: KeyRecord): Promise<void>;
  findKeyByHash(keyHash: string): Promise<KeyRecord | undefined>;
  touchKey(keyId: string, now: number): Promise<void>;
  listKeys(email: string): Promise<KeyRecord[]>;
  /** Revokes the key if it belongs to `email`; false when not found for that owner. */
  revokeKey(keyId: string, email: string, now: number): Promise<boolean>;
  /** Reads a setting, creating it with `create()` atomically when absent (first writer wins). */
  getOrCreateSetting(name: string, create: () => string): Promise<string>;
  close(): Promise<void>;
}

/** Ordered migrations; each runs once, recorded in schema_migrations. Dialect differences are small. */
const MIGRATIONS: Array<{ version: number; sql: (dialect: 'sqlite' | 'pg') => string }> = [
  {
    version: 1,
    sql: (d) => `
      CREATE TABLE IF NOT EXISTS verification_codes (
        email TEXT PRIMARY KEY,
        code_hash TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        used_at BIGINT
      );
      CREATE TABLE IF NOT EXISTS api_keys (
        key_id TEXT PRIMARY KEY,
        email TEXT NOT NULL,
        key_hash TEXT NOT NULL UNIQUE,
        created_at BIGINT NOT NULL,
        last_used_at BIGINT,
        revoked_at BIGINT
      );
      CREATE INDEX IF NOT EXISTS api_keys_email ON api_keys (email);
      CREATE TABLE IF NOT EXISTS auth_settings (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL
      )${d === 'pg' ? '' : ''};`,
  },
  {
    // Key listing (GET /v1/auth/keys) reads the owner's keys in order straight from the index, no sort.
    version: 2,
    sql: () => 'CREATE INDEX IF NOT EXISTS api_keys_email_created ON api_keys (email, created_at, key_id);',
  },
];

type Row = Record<string, unknown>;
const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

function toCode(r: Row | undefined): CodeRecord | undefined {
  if (!r) return undefined;
  return {
    email: String(r.email),
    codeHash: String(r.code_hash),
    createdAt: Number(r.created_at),
    expiresAt: Number(r.expires_at),
    attempts: Number(r.attempts),
    usedAt: num(r.used_at),
  };
}

function toKey(r: Row | undefined): KeyRecord | undefined {
  if (!r) return undefined;
  return {
    keyId: String(r.key_id),
    email: String(r.email),
    keyHash: String(r.key_hash),
    createdAt: Number(r.created_at),
    lastUsedAt: num(r.last_used_at),
    revokedAt: num(r.revoked_at),
  };
}

export class SqliteAuthStore implements AuthStore {
  private readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();

  /** Prepared once per SQL text: preparing is most of the cost of a small query. */
  private stmt(sql: string): Database.Statement {
    let s = this.statements.get(sql);
    if (!s) this.statements.set(sql, (s = this.db.prepare(sql)));
    return s;
  }

  constructor(file: string) {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)');
    const applied = new Set((this.db.prepare('SELECT version FROM schema_migrations').all() as Row[]).map((r) => Number(r.version)));
    for (const m of MIGRATIONS) {
      if (applied.has(m.version)) continue;
      this.db.transaction(() => {
        this.db.exec(m.sql('sqlite'));
        this.db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(m.version, Date.now());
      })();
    }
  }

  async putCode(c: Omit<CodeRecord, 'attempts' | 'usedAt'>, cooldownSince?: number): Promise<boolean> {
    const r = this.stmt(
      `INSERT INTO verification_codes (email, code_hash, created_at, expires_at, attempts, used_at)
         VALUES (?, ?, ?, ?, 0, NULL)
         ON CONFLICT (email) DO UPDATE SET code_hash = excluded.code_hash, created_at = excluded.created_at,
           expires_at = excluded.expires_at, attempts = 0, used_at = NULL
         WHERE verification_codes.used_at IS NOT NULL OR verification_codes.created_at <= ?`,
    ).run(c.email, c.codeHash, c.createdAt, c.expiresAt, cooldownSince ?? Number.MAX_SAFE_INTEGER);
    return r.changes === 1;
  }

  async getCode(email: string) {
    return toCode(this.stmt('SELECT * FROM verification_codes WHERE email = ?').get(email) as Row | undefined);
  }

  async recordFailedAttempt(email: string): Promise<number> {
    const r = this.stmt('UPDATE verification_codes SET attempts = attempts + 1 WHERE email = ? RETURNING attempts').get(email) as Row | undefined;
    return r ? Number(r.attempts) : 0;
  }

  async consumeCode(email: string, codeHash: string, now: number, maxAttempts: number): Promise<boolean> {
    const r = this.stmt(
      `UPDATE verification_codes SET used_at = ? WHERE email = ? AND code_hash = ? AND used_at IS NULL
         AND expires_at > ? AND attempts < ?`,
    ).run(now, email, codeHash, now, maxAttempts);
    return r.changes === 1;
  }

  async insertKey(k: KeyRecord): Promise<void> {
    this.stmt('INSERT INTO api_keys (key_id, email, key_hash, created_at, last_used_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?)').run(
      k.keyId,
      k.email,
      k.keyHash,
      k.createdAt,
      k.lastUsedAt,
      k.revokedAt,
    );
  }

  async findKeyByHash(keyHash: string) {
    return toKey(this.stmt('SELECT * FROM api_keys WHERE key_hash = ?').get(keyHash) as Row | undefined);
  }

  async touchKey(keyId: string, now: number): Promise<void> {
    this.stmt('UPDATE api_keys SET last_used_at = ? WHERE key_id = ?').run(now, keyId);
  }

  async listKeys(email: string) {
    return (this.stmt('SELECT * FROM api_keys WHERE email = ? ORDER BY created_at, key_id').all(email) as Row[]).map((r) => toKey(r)!);
  }

  async revokeKey(keyId: string, email: string, now: number): Promise<boolean> {
    const found = this.stmt('SELECT revoked_at FROM api_keys WHERE key_id = ? AND email = ?').get(keyId, email) as Row | undefined;
    if (!found) return false;
    this.stmt('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE key_id = ?').run(now, keyId);
    return true;
  }

  async getOrCreateSetting(name: string, create: () => string): Promise<string> {
    this.stmt('INSERT INTO auth_settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING').run(name, create());
    return String((this.stmt('SELECT value FROM auth_settings WHERE name = ?').get(name) as Row).value);
  }

  async close(): Promise<void> {
    this.db.close();
  }
}

export class PostgresAuthStore implements AuthStore {
  private constructor(private readonly pool: pg.Pool) {}

  /**
   * Opens the pool and migrates. An unreachable or refusing server is a DependencyError naming
   * DATABASE_URL (one line at start-up); later, a lost connection is a 503 for the request that needs it.
   */
  static async open(connectionString: string): Promise<PostgresAuthStore> {
    const pool = new pg.Pool(poolOptions(connectionString, 10));
    // An idle client whose server went away is reported here; without a listener it would end the process.
    pool.on('error', () => undefined);
    try {
      await PostgresAuthStore.migrate(pool);
    } catch (e) {
      await pool.end().catch(() => undefined);
      throw new DependencyError('DATABASE_URL', describeConnectionFailure(e, connectionString));
    }
    return new PostgresAuthStore(pool);
  }

  private static async migrate(pool: pg.Pool): Promise<void> {
    const client = await pool.connect();
    // A checked-out client is not watched by the pool: a connection lost between two statements is emitted
    // here, and unheard it would end the process (the statement in flight, if any, rejects with it too).
    let lost: Error | undefined;
    client.on('error', (e: Error) => (lost ??= e));
    try {
      // One migrator at a time across instances.
      await client.query('SELECT pg_advisory_lock(727001)');
      await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)');
      const { rows } = await client.query('SELECT version FROM schema_migrations');
      const applied = new Set(rows.map((r: Row) => Number(r.version)));
      for (const m of MIGRATIONS) {
        if (applied.has(m.version)) continue;
        await client.query('BEGIN');
        try {
          await client.query(m.sql('pg'));
          await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [m.version, Date.now()]);
          await client.query('COMMIT');
        } catch (e) {
          await client.query('ROLLBACK');
          throw e;
        }
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock(727001)').catch(() => undefined);
      client.release(lost);
    }
  }

  /** Every statement goes through here: connection failures become 503 SERVICE_UNAVAILABLE. */
  private async query(sql: string, params: unknown[]): Promise<pg.QueryResult> {
    try {
      return await this.pool.query(sql, params);
    } catch (e) {
      throw mapDatabaseError(e);
    }
  }

  async putCode(c: Omit<CodeRecord, 'attempts' | 'usedAt'>, cooldownSince?: number): Promise<boolean> {
    const r = await this.query(
      `INSERT INTO verification_codes (email, code_hash, created_at, expires_at, attempts, used_at)
       VALUES ($1, $2, $3, $4, 0, NULL)
       ON CONFLICT (email) DO UPDATE SET code_hash = EXCLUDED.code_hash, created_at = EXCLUDED.created_at,
         expires_at = EXCLUDED.expires_at, attempts = 0, used_at = NULL
       WHERE verification_codes.used_at IS NOT NULL OR verification_codes.created_at <= $5`,
      [c.email, c.codeHash, c.createdAt, c.expiresAt, cooldownSince ?? Number.MAX_SAFE_INTEGER],
    );
    return r.rowCount === 1;
  }

  async getCode(email: string) {
    const { rows } = await this.query('SELECT * FROM verification_codes WHERE email = $1', [email]);
    return toCode(rows[0]);
  }

  async recordFailedAttempt(email: string): Promise<number> {
    const { rows } = await this.query('UPDATE verification_codes SET attempts = attempts + 1 WHERE email = $1 RETURNING attempts', [email]);
    return rows[0] ? Number(rows[0].attempts) : 0;
  }

  async consumeCode(email: string, codeHash: string, now: number, maxAttempts: number): Promise<boolean> {
    const r = await this.query(
      `UPDATE verification_codes SET used_at = $1 WHERE email = $2 AND code_hash = $3 AND used_at IS NULL
       AND expires_at > $1 AND attempts < $4`,
      [now, email, codeHash, maxAttempts],
    );
    return r.rowCount === 1;
  }

  async insertKey(k: KeyRecord): Promise<void> {
    await this.query('INSERT INTO api_keys (key_id, email, key_hash, created_at, last_used_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6)', [
      k.keyId,
      k.email,
      k.keyHash,
      k.createdAt,
      k.lastUsedAt,
      k.revokedAt,
    ]);
  }

  async findKeyByHash(keyHash: string) {
    const { rows } = await this.query('SELECT * FROM api_keys WHERE key_hash = $1', [keyHash]);
    return toKey(rows[0]);
  }

  async touchKey(keyId: string, now: number): Promise<void> {
    await this.query('UPDATE api_keys SET last_used_at = $1 WHERE key_id = $2', [now, keyId]);
  }

  async listKeys(email: string) {
    const { rows } = await this.query('SELECT * FROM api_keys WHERE email = $1 ORDER BY created_at, key_id', [email]);
    return rows.map((r: Row) => toKey(r)!);
  }

  async revokeKey(keyId: string, email: string, now: number): Promise<boolean> {
    const r = await this.query('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $1) WHERE key_id = $2 AND email = $3', [now, keyId, email]);
    return r.rowCount === 1;
  }

  async getOrCreateSetting(name: string, create: () => string): Promise<string> {
    await this.query('INSERT INTO auth_settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [name, create()]);
    const { rows } = await this.query('SELECT value FROM auth_settings WHERE name = $1', [name]);
    return String(rows[0].value);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
