/**
 * Configuration from the environment (CONTRACT §9). Every variable is optional; a bad value stops
 * start-up with one line naming the variable (ConfigError.message is that line).
 */
import net from 'node:net';
import path from 'node:path';
import { usableCpus } from './cpu-quota.js';
import { defaultInFlightBytes, readMemoryLimit } from './memory-limit.js';

export interface Config {
  host: string;
  port: number;
  ingestPort: number;
  dataDir: string;
  databaseUrl?: string;
  telemetryDatabaseUrl?: string;
  redisUrl?: string;
  /** Prefix of every Redis key and channel (several deployments or test runs can share one Redis). */
  redisKeyPrefix: string;
  smtpUrl?: string;
  mailFrom: string;
  signingP12?: string;
  signingP12Password?: string;
  tsaUrl?: string;
  /** Operator opt-in: sign without a timestamp when the TSA fails (default: the request fails). */
  tsaOptional: boolean;
  /**
   * The API's public base URL (PUBLIC_URL, no trailing slash): a newly generated signing certificate names
   * its CA's CRL and OCSP responder under it (CRL Distribution Points, Authority Information Access).
   */
  publicUrl?: string;
  trustAnchors?: string;
  /** `host:port` pairs the URL fetcher may reach even when they resolve to internal addresses. */
  urlFetchAllowlist: string[];
  adminToken?: string;
  officeWorkers: number;
  /** Conversions waiting for a worker beyond which the server answers 503. */
  officeQueueSize: number;
  /** Time budget of one conversion, in milliseconds. */
  officeTimeoutMs: number;
  /** Resident-memory ceiling of one LibreOffice worker during a conversion (bytes); above it: 422. */
  officeMemoryBytes: number;
  /** Pixels one preview page image may have (PREVIEW_MAX_MEGAPIXELS × 10⁶), checked before rendering; beyond: 422. */
  previewMaxPixels: number;
  /** Address-space cap of one pdftoppm process (PREVIEW_MEMORY_MB, bytes); an allocation beyond it fails: 422. */
  previewMemoryBytes: number;
  /** Worker threads that run the in-process engines (md/html→docx, annotate, sign, verify). */
  engineWorkers: number;
  /** Engine jobs that may wait for a worker thread; beyond: 503. */
  engineQueueSize: number;
  /** Time budget of one engine job, in milliseconds; beyond: 504 and the worker is replaced. */
  engineTimeoutMs: number;
  /** V8 heap ceiling of one engine worker thread, in MB; beyond: 422 and the worker is replaced. */
  engineMemoryMb: number;
  /**
   * Wall time of one whole document request (REQUEST_TIMEOUT_MS): queueing, every conversion, every preview
   * page run and merge input draw from it (src/budget/deadline.ts); spent: 504 and the work is stopped.
   */
  requestTimeoutMs: number;
  /** Bytes one request may produce (OUTPUT_MAX_MB; src/budget/output.ts); beyond: 422 while it is produced. */
  outputMaxBytes: number;
  /** Memory the process tree may use (MEMORY_LIMIT_MB; default the cgroup limit, else the host's memory). */
  memoryLimitBytes: number;
  /**
   * Service-wide budget of request bytes in flight (INFLIGHT_BYTES_MB; src/http/admission.ts); default from
   * the memory limit (src/config/memory-limit.ts `defaultInFlightBytes`). Beyond: 503 before the body is read.
   */
  inFlightBytes: number;
  logLevel: string;
  metricsPort?: number;
  /** Secret for keyed hashes of verification codes; generated into DATA_DIR when absent. */
  codeHashSecret?: string;
  /** Per-client (IP) windows of POST /v1/auth/register and /v1/auth/verify (shared through Redis when set). */
  authClientWindowMs: number;
  authRegisterPerClient: number;
  authVerifyPerClient: number;
  /**
   * Which peers may name the client in `X-Forwarded-For` (Fastify's `trustProxy`): `false` (default: the
   * socket's address is the client), `true` (every peer), a hop count, or addresses/CIDRs (and proxy-addr's
   * `loopback`, `linklocal`, `uniquelocal`). The per-client windows key on the address this yields.
   */
  trustProxy: TrustProxy;
  /**
   * Time and connection budgets of the HTTP servers (src/http/server-limits.ts; docs/operations.md): headers,
   * body (start/stall time and minimum average rate), idle keep-alive, a whole non-document exchange (0 = off)
   * and open connections (MAX_CONNECTIONS; default 10,000, below the descriptor limit).
   */
  httpHeadersTimeoutMs: number;
  httpBodyTimeoutMs: number;
  httpBodyMinBytesPerSecond: number;
  httpKeepAliveTimeoutMs: number;
  httpExchangeTimeoutMs: number;
  maxConnections?: number;
  /**
   * The ingest's billing-integrity limits (src/telemetry/limits.ts; 0 turns one off): POST /v1/collect
   * requests per license key and per client address per minute, new unique documents per license key per
   * hour, wrong ADMIN_TOKEN presentations per address per 15 minutes.
   */
  ingestKeyRequestsPerMinute: number;
  ingestAddressRequestsPerMinute: number;
  ingestNewDocumentsPerHour: number;
  adminAuthFailuresPerAddress: number;
}

export type TrustProxy = boolean | number | string[];

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    issue: string,
  ) {
    super(`Invalid configuration: ${variable} ${issue}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function str(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = str(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be an integer, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${n}`);
  return n;
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = str(env, name);
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, 'is not a valid URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')} (got ${parsed.protocol})`);
  }
  return raw;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = str(env, name);
  if (raw === undefined) return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

/** proxy-addr's names of address ranges, accepted in a TRUST_PROXY list as they are. */
const NAMED_RANGES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * TRUST_PROXY: `false`/`true`, a hop count (the number of proxies in front of the API, each appending to
 * `X-Forwarded-For`), or a comma-separated list of proxy addresses, CIDRs or named ranges.
 */
function trustProxy(env: Env): TrustProxy {
  const name = 'TRUST_PROXY';
  const raw = str(env, name);
  if (raw === undefined || /^false$/i.test(raw)) return false;
  if (/^true$/i.test(raw)) return true;
  if (/^\d+$/.test(raw)) {
    const hops = Number(raw);
    if (hops > 32) throw new ConfigError(name, `hop count must be at most 32, got ${hops}`);
    return hops === 0 ? false : hops;
  }
  const entries = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const entry of entries) {
    if (NAMED_RANGES.includes(entry)) continue;
    const [address = '', prefix, extra] = entry.split('/');
    const family = net.isIP(address);
    const bits = family === 4 ? 32 : 128;
    if (family === 0 || extra !== undefined || (prefix !== undefined && !(/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits))) {
      throw new ConfigError(
        name,
        `entry "${entry}" is not an IP address, a CIDR (address/prefix) or one of ${NAMED_RANGES.join(', ')}; ` +
          'the variable is true, false, a hop count or a comma-separated list of those',
      );
    }
  }
  return entries.length === 0 ? false : entries;
}

export function loadConfig(env: Env = process.env): Config {
  const host = str(env, 'HOST') ?? '127.0.0.1';
  const port = int(env, 'PORT', 8080, 0, 65535);
  const ingestPort = int(env, 'INGEST_PORT', 8081, 0, 65535);
  const metricsRaw = str(env, 'METRICS_PORT');
  const metricsPort = metricsRaw === undefined ? undefined : int(env, 'METRICS_PORT', 0, 0, 65535);

  const allowlist = (str(env, 'URL_FETCH_ALLOWLIST') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const entry of allowlist) {
    if (!/^[A-Za-z0-9.-]+:\d{1,5}$|^\[[0-9a-fA-F:.]+\]:\d{1,5}$/.test(entry)) {
      throw new ConfigError('URL_FETCH_ALLOWLIST', `entry "${entry}" is not host:port`);
    }
  }

  const logLevel = (str(env, 'LOG_LEVEL') ?? 'info').toLowerCase();
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  }

  const mailFrom = str(env, 'MAIL_FROM') ?? 'Folio <no-reply@folio.localhost>';
  if (!/@/.test(mailFrom)) throw new ConfigError('MAIL_FROM', 'must contain an e-mail address');

  const signingP12 = str(env, 'SIGNING_P12');
  const signingP12Password = env.SIGNING_P12_PASSWORD;
  if (signingP12Password !== undefined && signingP12 === undefined) {
    throw new ConfigError('SIGNING_P12_PASSWORD', 'is set but SIGNING_P12 is not');
  }

  const redisKeyPrefix = str(env, 'REDIS_KEY_PREFIX') ?? 'folio:';
  if (!/^[A-Za-z0-9:_.-]{1,64}$/.test(redisKeyPrefix)) {
    throw new ConfigError('REDIS_KEY_PREFIX', 'must be 1–64 letters, digits or : _ . -');
  }

  const adminToken = str(env, 'ADMIN_TOKEN');
  if (adminToken !== undefined && adminToken.length < 16) {
    throw new ConfigError('ADMIN_TOKEN', 'must be at least 16 characters');
  }

  // The in-flight byte budget follows the memory limit: the container's (cgroup), or the one set for it.
  const officeWorkers = int(env, 'OFFICE_WORKERS', usableCpus(), 1, 64);
  const officeMemoryBytes = int(env, 'OFFICE_MEMORY_MB', 1536, 256, 65_536) * 1024 * 1024;
  const measuredLimit = readMemoryLimit();
  const memoryLimitMb = str(env, 'MEMORY_LIMIT_MB') === undefined ? undefined : int(env, 'MEMORY_LIMIT_MB', 0, 256, 16_777_216);
  const memoryLimitBytes = memoryLimitMb !== undefined ? memoryLimitMb * 1024 * 1024 : measuredLimit.bytes;
  const inFlightDefaultMb = Math.floor(
    defaultInFlightBytes({
      limitBytes: memoryLimitBytes,
      limited: memoryLimitMb !== undefined || measuredLimit.source !== 'host',
      officeWorkers,
      officeMemoryBytes,
    }) /
      (1024 * 1024),
  );

  return {
    host,
    port,
    ingestPort,
    dataDir: path.resolve(str(env, 'DATA_DIR') ?? './data'),
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    telemetryDatabaseUrl: url(env, 'TELEMETRY_DATABASE_URL', ['postgres:', 'postgresql:']),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    redisKeyPrefix,
    smtpUrl: url(env, 'SMTP_URL', ['smtp:', 'smtps:']),
    mailFrom,
    signingP12,
    signingP12Password,
    tsaUrl: url(env, 'TSA_URL', ['http:', 'https:']),
    tsaOptional: bool(env, 'TSA_OPTIONAL', false),
    publicUrl: url(env, 'PUBLIC_URL', ['http:', 'https:'])?.replace(/\/+$/, ''),
    trustAnchors: str(env, 'TRUST_ANCHORS'),
    urlFetchAllowlist: allowlist,
    adminToken,
    officeWorkers,
    officeQueueSize: int(env, 'OFFICE_QUEUE_SIZE', 64, 1, 10_000),
    officeTimeoutMs: int(env, 'OFFICE_TIMEOUT_MS', 60_000, 1_000, 600_000),
    officeMemoryBytes,
    // 50 MP: an A4 page at the largest width (4000 × 5657 px) is 23 MP, a 1:3 strip 48 MP (~200 MB of bitmap).
    previewMaxPixels: int(env, 'PREVIEW_MAX_MEGAPIXELS', 50, 1, 1000) * 1_000_000,
    // pdftoppm maps ~100 MB of code and fonts; a 50 MP page needs ~210 MB resident. 1 GB leaves room for
    // large embedded images while renders (at most OFFICE_WORKERS at once) stay far from the machine's memory.
    previewMemoryBytes: int(env, 'PREVIEW_MEMORY_MB', 1024, 128, 65_536) * 1024 * 1024,
    engineWorkers: int(env, 'ENGINE_WORKERS', usableCpus(), 1, 64),
    engineQueueSize: int(env, 'ENGINE_QUEUE_SIZE', 64, 1, 10_000),
    engineTimeoutMs: int(env, 'ENGINE_TIMEOUT_MS', 30_000, 1_000, 600_000),
    engineMemoryMb: int(env, 'ENGINE_MEMORY_MB', 1024, 64, 65_536),
    // Two office-length stages: a DOCX converted then rendered or merged, with room for queueing.
    requestTimeoutMs: int(env, 'REQUEST_TIMEOUT_MS', 120_000, 1_000, 3_600_000),
    // Four times the 25 MB upload limit: a DOCX's pictures as base64 in HTML (×4/3) with room to spare.
    outputMaxBytes: int(env, 'OUTPUT_MAX_MB', 100, 1, 4096) * 1024 * 1024,
    memoryLimitBytes,
    inFlightBytes: int(env, 'INFLIGHT_BYTES_MB', inFlightDefaultMb, 16, 16_777_216) * 1024 * 1024,
    logLevel,
    metricsPort,
    codeHashSecret: str(env, 'CODE_HASH_SECRET'),
    authClientWindowMs: int(env, 'AUTH_CLIENT_WINDOW_SECONDS', 600, 10, 86_400) * 1000,
    authRegisterPerClient: int(env, 'AUTH_REGISTER_PER_CLIENT', 20, 1, 1_000_000),
    authVerifyPerClient: int(env, 'AUTH_VERIFY_PER_CLIENT', 30, 1, 1_000_000),
    trustProxy: trustProxy(env),
    // Headers come in one packet from any real client; 10 s covers a congested mobile link.
    httpHeadersTimeoutMs: int(env, 'HTTP_HEADERS_TIMEOUT_MS', 10_000, 100, 600_000),
    // As Apache's mod_reqtimeout: 20 s to start and no stall longer, then 10 KiB/s on average (a 25 MB
    // document slower than 200 KB/s misses REQUEST_TIMEOUT_MS anyway; a trickle costs the sender bandwidth).
    httpBodyTimeoutMs: int(env, 'HTTP_BODY_TIMEOUT_MS', 20_000, 100, 600_000),
    httpBodyMinBytesPerSecond: int(env, 'HTTP_BODY_MIN_BYTES_PER_SECOND', 10_240, 0, 1_000_000_000),
    // Above the 60 s idle timeout of common load balancers, so they never reuse a connection being closed.
    httpKeepAliveTimeoutMs: int(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', 72_000, 100, 600_000),
    // Health, auth (an SMTP send included), keys, OpenAPI, CA: 30 s is far beyond any of them when healthy.
    httpExchangeTimeoutMs: int(env, 'HTTP_EXCHANGE_TIMEOUT_MS', 30_000, 0, 3_600_000),
    maxConnections: str(env, 'MAX_CONNECTIONS') === undefined ? undefined : int(env, 'MAX_CONNECTIONS', 0, 16, 10_000_000),
    // Defaults far above honest use (docs/operations.md, "Billing-integrity measures"): one open is one
    // request, so 1,000/s per key is a very large customer's peak; 50/s from one address is a busy office NAT.
    ingestKeyRequestsPerMinute: int(env, 'INGEST_KEY_REQUESTS_PER_MINUTE', 60_000, 0, 100_000_000),
    ingestAddressRequestsPerMinute: int(env, 'INGEST_ADDRESS_REQUESTS_PER_MINUTE', 3_000, 0, 100_000_000),
    ingestNewDocumentsPerHour: int(env, 'INGEST_NEW_DOCUMENTS_PER_HOUR', 20_000, 0, 100_000_000),
    adminAuthFailuresPerAddress: int(env, 'ADMIN_AUTH_FAILURES_PER_ADDRESS', 10, 0, 1_000_000),
  };
}
