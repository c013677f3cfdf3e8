/**
 * PostgreSQL availability for the stores (auth: DATABASE_URL, telemetry: TELEMETRY_DATABASE_URL): pool
 * settings that bound how long a request can wait on an unreachable server, and the mapping of connection
 * failures to what the contract answers (503 SERVICE_UNAVAILABLE with Retry-After, never a 500 with a stack;
 * at start-up, one line naming the variable).
 */
import type pg from 'pg';
import { FolioError } from '../errors.js';

/** A connection attempt that takes longer fails (pg waits for ever by default). */
export const PG_CONNECT_TIMEOUT_MS = 3000;
/** A statement that takes longer fails (a server that stopped answering mid-query). */
export const PG_QUERY_TIMEOUT_MS = 15_000;
/** What a client is told to wait before retrying while the database is unreachable. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

export function poolOptions(connectionString: string, max: number): pg.PoolConfig {
  return {
    connectionString,
    max,
    connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS,
    query_timeout: PG_QUERY_TIMEOUT_MS,
    // Dead connections are noticed by the kernel instead of hanging a query until the timeout.
    keepAlive: true,
  };
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'ECONNABORTED',
]);

/** SQLSTATEs of a server that is going away, not accepting connections, or out of connection slots. */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '53400']);

const CONNECTION_MESSAGES =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Query read timeout|not queryable|Client was closed|Cannot use a pool after calling end/i;

/** True when `err` says the database cannot be reached or dropped the connection (not a bad query). */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as { code?: unknown; message?: unknown; errors?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  if (NETWORK_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code) || code.startsWith('08')) return true;
  // Connecting to a host with several addresses fails with an AggregateError of the attempts.
  if (Array.isArray(e.errors) && e.errors.some((x) => isDatabaseUnavailable(x))) return true;
  return typeof e.message === 'string' && CONNECTION_MESSAGES.test(e.message);
}

/** The contract's answer for an unreachable database; other errors pass through unchanged. */
export function mapDatabaseError(err: unknown): unknown {
  if (err instanceof FolioError || !isDatabaseUnavailable(err)) return err;
  return new FolioError('SERVICE_UNAVAILABLE', 'The database is unreachable; retry shortly', {
    retryAfter: DATABASE_RETRY_AFTER_SECONDS,
    cause: err,
  });
}

/** A short, secret-free description of a connection failure (code and address, never the URL's password). */
export function describeConnectionFailure(err: unknown, connectionString: string): string {
  let where = 'the server';
  try {
    const u = new URL(connectionString);
    where = `${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    // The URL was validated by the configuration; keep the generic wording.
  }
  const e = err as { code?: unknown; message?: unknown; errors?: Array<{ code?: unknown }> };
  const code = typeof e?.code === 'string' ? e.code : typeof e?.errors?.[0]?.code === 'string' ? e.errors[0].code : '';
  const message = typeof e?.message === 'string' && e.message ? e.message.split('\n')[0]! : '';
  const reason = code && !message.includes(code) ? `${code}: ${message}` : message || code || 'unknown error';
  return `PostgreSQL at ${where} cannot be used (${reason.replace(connectionString, '<url>')})`;
}

/** Start-up failure of a dependency named by its variable; main.ts prints the message alone and exits 1. */
export class DependencyError extends Error {
  constructor(
    readonly variable: string,
    issue: string,
  ) {
    super(`Cannot start: ${variable}: ${issue}`);
    this.name = 'DependencyError';
  }
}
