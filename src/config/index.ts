/**
 * The configuration: environment variables read once at start-up through one TypeBox schema, the core
 * settings below joined with each module's own (src/<module>/module.ts `settings`; the composition in
 * src/modules/config.ts `loadConfig`). Every variable is optional; a bad value stops start-up with one line
 * naming the variable (ConfigError.message is that line).
 *
 * The core settings are what every capability runs on: the servers, the pools, the budgets, Redis, fetching.
 * A module's settings join `Config` by declaration merging, keyed by the module's id:
 *
 *   declare module '../config/index.js' { interface ModuleSettings { sign: typeof signSettings } }
 */
import net from 'node:net';
import { Type, type Static } from '@fastify/type-provider-typebox';
import { usableCpus } from './cpu-quota.js';
import { defaultInFlightBytes, readMemoryLimit } from './memory-limit.js';
import { ConfigError, Setting, type Env, type ReadContext } from './settings.js';

export { ConfigError, Setting, joinSettings, readSettings, settingVariable, type Env } from './settings.js';

const MB = 1024 * 1024;

/** proxy-addr's names of address ranges, accepted in a TRUST_PROXY list as they are. */
const NAMED_RANGES = ['loopback', 'linklocal', 'uniquelocal'];

export type TrustProxy = boolean | number | string[];

/**
 * TRUST_PROXY: `false`/`true`, a hop count (the number of proxies in front of the API, each appending to
 * `X-Forwarded-For`), or a comma-separated list of proxy addresses, CIDRs or named ranges.
 */
function readTrustProxy(text: string | undefined, ctx: ReadContext): TrustProxy {
  const raw = text === undefined || text.trim() === '' ? undefined : text.trim();
  if (raw === undefined || /^false$/i.test(raw)) return false;
  if (/^true$/i.test(raw)) return true;
  if (/^\d+$/.test(raw)) {
    const hops = Number(raw);
    if (hops > 32) throw new ConfigError(ctx.name, `hop count must be at most 32, got ${hops}`);
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
        ctx.name,
        `entry "${entry}" is not an IP address, a CIDR (address/prefix) or one of ${NAMED_RANGES.join(', ')}; ` +
          'the variable is true, false, a hop count or a comma-separated list of those',
      );
    }
  }
  return entries.length === 0 ? false : entries;
}

const isSet = (env: Env, name: string) => (env[name] ?? '').trim() !== '';

/** The settings every module runs on. Order matters only where a default follows an earlier value. */
export const CORE_SETTINGS = Type.Object({
  host: Setting.string('HOST', { default: '127.0.0.1' }),
  port: Setting.integer('PORT', { default: 8080, minimum: 0, maximum: 65535 }),
  metricsPort: Setting.optionalInteger('METRICS_PORT', { minimum: 0, maximum: 65535 }),
  dataDir: Setting.path('DATA_DIR', { default: './data' }),
  redisUrl: Setting.url('REDIS_URL', ['redis:', 'rediss:']),
  /** Prefix of every Redis key and channel (several deployments or test runs can share one Redis). */
  redisKeyPrefix: Setting.string('REDIS_KEY_PREFIX', {
    default: 'folio:',
    pattern: '^[A-Za-z0-9:_.-]{1,64}$',
    message: 'must be 1–64 letters, digits or : _ . -',
  }),
  /**
   * The API's public base URL (PUBLIC_URL, no trailing slash): a newly generated signing certificate names
   * its CA's CRL and OCSP responder under it (CRL Distribution Points, Authority Information Access).
   */
  publicUrl: Setting.url('PUBLIC_URL', ['http:', 'https:'], { trimTrailingSlash: true }),
  /** `host:port` pairs the URL fetcher may reach even when they resolve to internal addresses. */
  urlFetchAllowlist: Setting.list('URL_FETCH_ALLOWLIST', {
    pattern: '^[A-Za-z0-9.-]+:\\d{1,5}$|^\\[[0-9a-fA-F:.]+\\]:\\d{1,5}$',
    message: (entry) => `entry "${entry}" is not host:port`,
  }),
  logLevel: Setting.string('LOG_LEVEL', { default: 'info', lowercase: true, oneOf: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] }),
  officeWorkers: Setting.integer('OFFICE_WORKERS', { default: () => usableCpus(), minimum: 1, maximum: 64 }),
  /** Conversions waiting for a worker beyond which the server answers 503. */
  officeQueueSize: Setting.integer('OFFICE_QUEUE_SIZE', { default: 64, minimum: 1, maximum: 10_000 }),
  /** Time budget of one conversion, in milliseconds. */
  officeTimeoutMs: Setting.integer('OFFICE_TIMEOUT_MS', { default: 60_000, minimum: 1_000, maximum: 600_000 }),
  /** Resident-memory ceiling of one LibreOffice worker during a conversion (bytes); above it: 422. */
  officeMemoryBytes: Setting.integer('OFFICE_MEMORY_MB', { default: 1536, minimum: 256, maximum: 65_536, scale: MB }),
  /** Worker threads that run the in-process engines (md/html→docx, annotate, sign, verify). */
  engineWorkers: Setting.integer('ENGINE_WORKERS', { default: () => usableCpus(), minimum: 1, maximum: 64 }),
  /** Engine jobs that may wait for a worker thread; beyond: 503. */
  engineQueueSize: Setting.integer('ENGINE_QUEUE_SIZE', { default: 64, minimum: 1, maximum: 10_000 }),
  /** Time budget of one engine job, in milliseconds; beyond: 504 and the worker is replaced. */
  engineTimeoutMs: Setting.integer('ENGINE_TIMEOUT_MS', { default: 30_000, minimum: 1_000, maximum: 600_000 }),
  /** V8 heap ceiling of one engine worker thread, in MB; beyond: 422 and the worker is replaced. */
  engineMemoryMb: Setting.integer('ENGINE_MEMORY_MB', { default: 1024, minimum: 64, maximum: 65_536 }),
  /**
   * Wall time of one whole document request (REQUEST_TIMEOUT_MS): queueing, every conversion, every preview
   * page run and merge input draw from it (src/budget/deadline.ts); spent: 504 and the work is stopped.
   * Two office-length stages: a DOCX converted then rendered or merged, with room for queueing.
   */
  requestTimeoutMs: Setting.integer('REQUEST_TIMEOUT_MS', { default: 120_000, minimum: 1_000, maximum: 3_600_000 }),
  /**
   * Bytes one request may produce (OUTPUT_MAX_MB; src/budget/output.ts); beyond: 422 while it is produced.
   * Four times the 25 MB upload limit: a DOCX's pictures as base64 in HTML (×4/3) with room to spare.
   */
  outputMaxBytes: Setting.integer('OUTPUT_MAX_MB', { default: 100, minimum: 1, maximum: 4096, scale: MB }),
  /** Memory the process tree may use (MEMORY_LIMIT_MB; default the cgroup limit, else the host's memory). */
  memoryLimitBytes: Setting.integer('MEMORY_LIMIT_MB', { default: () => readMemoryLimit().bytes, minimum: 256, maximum: 16_777_216, scale: MB }),
  /**
   * Service-wide budget of request bytes in flight (INFLIGHT_BYTES_MB; src/http/admission.ts); default from
   * the memory limit (src/config/memory-limit.ts `defaultInFlightBytes`): the container's (cgroup), or the
   * one set for it. Beyond: 503 before the body is read.
   */
  inFlightBytes: Setting.integer('INFLIGHT_BYTES_MB', {
    minimum: 16,
    maximum: 16_777_216,
    scale: MB,
    default: ({ env, values }) =>
      Math.floor(
        defaultInFlightBytes({
          limitBytes: values.memoryLimitBytes as number,
          limited: isSet(env, 'MEMORY_LIMIT_MB') || readMemoryLimit().source !== 'host',
          officeWorkers: values.officeWorkers as number,
          officeMemoryBytes: values.officeMemoryBytes as number,
        }) / MB,
      ) * MB,
  }),
  /**
   * Which peers may name the client in `X-Forwarded-For` (Fastify's `trustProxy`): `false` (default: the
   * socket's address is the client), `true` (every peer), a hop count, or addresses/CIDRs (and proxy-addr's
   * `loopback`, `linklocal`, `uniquelocal`). The per-client windows key on the address this yields.
   */
  trustProxy: Setting.custom('TRUST_PROXY', Type.Union([Type.Boolean(), Type.Integer(), Type.Array(Type.String())]), (raw, ctx) =>
    readTrustProxy(raw, ctx),
  ),
  /**
   * Time and connection budgets of the HTTP servers (src/http/server-limits.ts; docs/operations.md): headers,
   * body (start/stall time and minimum average rate), idle keep-alive, a whole non-document exchange (0 = off)
   * and open connections (MAX_CONNECTIONS; default 10,000, below the descriptor limit).
   * Headers come in one packet from any real client; 10 s covers a congested mobile link.
   */
  httpHeadersTimeoutMs: Setting.integer('HTTP_HEADERS_TIMEOUT_MS', { default: 10_000, minimum: 100, maximum: 600_000 }),
  // As Apache's mod_reqtimeout: 20 s to start and no stall longer, then 10 KiB/s on average (a 25 MB
  // document slower than 200 KB/s misses REQUEST_TIMEOUT_MS anyway; a trickle costs the sender bandwidth).
  httpBodyTimeoutMs: Setting.integer('HTTP_BODY_TIMEOUT_MS', { default: 20_000, minimum: 100, maximum: 600_000 }),
  httpBodyMinBytesPerSecond: Setting.integer('HTTP_BODY_MIN_BYTES_PER_SECOND', { default: 10_240, minimum: 0, maximum: 1_000_000_000 }),
  // Above the 60 s idle timeout of common load balancers, so they never reuse a connection being closed.
  httpKeepAliveTimeoutMs: Setting.integer('HTTP_KEEP_ALIVE_TIMEOUT_MS', { default: 72_000, minimum: 100, maximum: 600_000 }),
  // Health, auth (an SMTP send included), keys, OpenAPI, CA: 30 s is far beyond any of them when healthy.
  httpExchangeTimeoutMs: Setting.integer('HTTP_EXCHANGE_TIMEOUT_MS', { default: 30_000, minimum: 0, maximum: 3_600_000 }),
  maxConnections: Setting.optionalInteger('MAX_CONNECTIONS', { minimum: 16, maximum: 10_000_000 }),
});

/**
 * Each module's settings schema by module id, joined by declaration merging (the module's own folder adds
 * its entry); `Config` is the values of all of them. src/modules/index.ts checks at compile time that every
 * entry belongs to a listed module, so the type and what `loadConfig` reads are the same settings.
 */
export interface ModuleSettings {
  core: typeof CORE_SETTINGS;
}

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

/** The configuration: the core settings' values and every module's. */
export type Config = UnionToIntersection<{ [K in keyof ModuleSettings]: Static<ModuleSettings[K]> }[keyof ModuleSettings]>;
