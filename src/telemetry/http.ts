/**
 * The ingest's own Fastify app (docs/api.md § Telemetry ingest): `POST /v1/collect` (CORS for any origin, no credentials),
 * `OPTIONS /v1/collect` (preflight), `GET /v1/usage` (admin token; JSON or `?format=csv`). Errors use the
 * API's envelope. The handler knows nothing of storage beyond `submit`, which resolves after the commit.
 * `GET|HEAD /v1/health` (no key) reports whether the store takes writes, for probes and load balancers.
 * Billing-integrity limits (limits.ts) answer 429 + Retry-After: per address and per key before the body is
 * read, the new-documents cap once it is parsed, ADMIN_TOKEN failures before the token is compared.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { FolioError } from '../errors.js';
import { clientErrorHandler, errorEnvelopeSchema, errorResponses, sendError, toFolioError } from '../http/envelope.js';
import { parseJsonBody } from '../http/json-body.js';
import type { TrustProxy } from '../config/index.js';
import type { IngestLimits } from './limits.js';
import type { IngestMetrics, RejectReason } from './metrics.js';
import { MAX_BODY_BYTES, isLegacyBatch, licenseKeyFrom, monthOf, parseCollectBody, type CollectRecord } from './payload.js';
import { RowsRejectedError, type StoreHealth, type TelemetryStore } from './store.js';
import { usageCsv } from './usage.js';
import { requestIdFor } from '../http/request-id.js';

/** The ingest's version in /v1/health (the API's, docs/api.md § Health). */
const INGEST_VERSION = '0.9.0';
const startTime = new Date();
/** A store probe serves every health request for this long (load balancers poll every few seconds). */
const STORE_HEALTH_CACHE_MS = 1000;
const INGEST_HEALTH_SCHEMA = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['healthy', 'unhealthy'] },
    timestamp: { type: 'string' },
    version: { type: 'string' },
    service: { type: 'string' },
    instance: { type: 'object', properties: { startTime: { type: 'string' }, uptimeSeconds: { type: 'integer' } } },
    store: {
      type: 'object',
      properties: {
        status: { type: 'string' },
        dialect: { type: 'string' },
        writer: { type: 'string' },
        database: { type: 'string' },
        latencyMs: { type: 'integer' },
      },
    },
  },
} as const;

/** Chromium caps preflight caching at 2 h, Firefox at 24 h; ask for a day and let each clamp. */
const PREFLIGHT_MAX_AGE = '86400';
const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

export interface IngestAppOptions {
  logger: Logger;
  store: TelemetryStore;
  metrics: IngestMetrics;
  /** Resolves once the record is committed (group commit). */
  submit(record: CollectRecord): Promise<void>;
  adminToken?: string;
  now(): number;
  limits: IngestLimits;
  /** Which peers may name the client address in X-Forwarded-For (the per-address limits key on it). */
  trustProxy?: TrustProxy;
}

declare module 'fastify' {
  interface FastifyRequest {
    licenseKey?: string;
  }
}

function setCors(reply: FastifyReply): void {
  reply.header('Access-Control-Allow-Origin', '*');
  reply.header('Vary', 'Origin');
}

function reasonFor(err: FolioError, thrownCode: string | undefined): RejectReason {
  if (err.code === 'AUTHENTICATION_ERROR') return err.message.startsWith('Missing') ? 'missing_license_key' : 'invalid_license_key';
  if (err.code === 'FILE_TOO_LARGE') return 'body_too_large';
  if (err.code === 'UNSUPPORTED_MEDIA_TYPE') return 'unsupported_media_type';
  if (err.code === 'RATE_LIMIT_ERROR') return thrownCode === 'new_documents_cap' ? 'new_documents_cap' : 'rate_limited';
  if (err.code === 'VALIDATION_ERROR' && (thrownCode === 'json' || /JSON/.test(err.message))) return 'invalid_json';
  if (err.status >= 500) return 'store_failure';
  return 'invalid_payload';
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

export async function buildIngestApp(opts: IngestAppOptions): Promise<FastifyInstance> {
  const app: FastifyInstance = Fastify({
    loggerInstance: opts.logger as unknown as FastifyBaseLogger,
    // No line per request: at thousands of events per second the log would be the bottleneck; errors are logged.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: (logger) => logger,
    genReqId: requestIdFor,
    requestIdHeader: false,
    // A hop count as the API reads it (src/http/app.ts): the socket's peer is hop 0, Fastify trusts none for a number.
    trustProxy:
      typeof opts.trustProxy === 'number' ? (_address: string, hop: number) => hop < (opts.trustProxy as number) : (opts.trustProxy ?? false),
    bodyLimit: MAX_BODY_BYTES,
    // Bodies are ≤ 64 KB: a request still arriving after 15 s is a slow-loris, not a client.
    requestTimeout: 15_000,
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    ajv: { customOptions: { allErrors: true, removeAdditional: false, coerceTypes: false, useDefaults: true } },
    // The same envelope as the API for what Node's parser refuses (431 oversized headers, 400 malformed).
    clientErrorHandler,
  });
  app.addSchema(errorEnvelopeSchema);
  let closing = false;

  app.removeAllContentTypeParsers();
  // text/plain too: a future sendBeacon path cannot set application/json without a preflight.
  app.addContentTypeParser(['application/json', 'text/plain'], { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (e) {
      (e as { ingestReason?: string }).ingestReason = 'json';
      done(e as Error, undefined);
    }
  });

  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    if (request.url.startsWith('/v1/collect')) setCors(reply);
    if (closing) {
      reply.header('Connection', 'close');
      return done(new FolioError('SERVICE_UNAVAILABLE', 'The server is shutting down', { retryAfter: 5 }));
    }
    done();
  });

  app.setErrorHandler(async (thrown, request, reply) => {
    let err = toFolioError(thrown);
    const code = (thrown as { code?: string }).code;
    if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      err = new FolioError('FILE_TOO_LARGE', `The body exceeds ${MAX_BODY_BYTES / 1024} KB`);
    }
    if (request.routeOptions.url === '/v1/collect' && request.method === 'POST') {
      opts.metrics.rejected(reasonFor(err, (thrown as { ingestReason?: string }).ingestReason));
    }
    if (err.status >= 500 && err.code === 'INTERNAL_ERROR') {
      request.log.error({ reqId: request.id, err: thrown }, 'unhandled error');
    }
    return sendError(request, reply, err);
  });

  const routes: Record<string, string[]> = { '/v1/collect': ['OPTIONS', 'POST'], '/v1/usage': ['GET', 'HEAD'], '/v1/health': ['GET', 'HEAD'] };
  app.setNotFoundHandler(async (request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = routes[path.replace(/\/$/, '')];
    if (allowed && !allowed.includes(request.method)) {
      reply.header('Allow', allowed.join(', '));
      return sendError(
        request,
        reply,
        new FolioError('METHOD_NOT_ALLOWED', `${request.method} is not allowed on this path; use ${allowed.join(', ')}`),
      );
    }
    return sendError(request, reply, new FolioError('NOT_FOUND', 'The requested path does not exist'));
  });

  app.options('/v1/collect', { schema: { hide: true } }, async (_request, reply) => {
    reply
      .code(204)
      .header('Access-Control-Allow-Methods', 'POST, OPTIONS')
      .header('Access-Control-Allow-Headers', 'Content-Type, X-License-Key')
      .header('Access-Control-Max-Age', PREFLIGHT_MAX_AGE)
      .header('Vary', 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers');
    return reply.send();
  });

  app.post(
    '/v1/collect',
    {
      // The key and the request limits are checked before the body is read: a refused request costs no parsing.
      onRequest: async (request) => {
        request.licenseKey = licenseKeyFrom(request.headers['x-license-key']);
        await opts.limits.admitRequest(request.licenseKey, request.ip);
      },
      schema: {
        summary: 'Record document-open events',
        response: {
          200: { type: 'object', properties: { accepted: { type: 'integer' }, ignored: { type: 'integer' } } },
          202: { type: 'object', properties: { accepted: { type: 'integer' } } },
          ...errorResponses(400, 401, 413, 415, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      if (isLegacyBatch(body)) {
        // SuperDoc 0.x–1.x batches: acknowledged so those clients do not error, never billed nor stored.
        opts.metrics.rejected('legacy_payload', Math.max(1, Math.min(body.length, 10_000)));
        return reply.code(200).send({ accepted: 0, ignored: body.length });
      }
      const record = parseCollectBody(body, request.licenseKey!, opts.now());
      const release = await opts.limits.admitDocuments(record, opts.store);
      try {
        await opts.submit(record);
      } catch (e) {
        if (e instanceof RowsRejectedError) {
          // Only this request's rows were refused (the batch was retried without them): retrying cannot help.
          request.log.warn({ reqId: request.id, err: e }, 'telemetry rows refused by the store');
          throw new FolioError('VALIDATION_ERROR', 'The events could not be stored as sent', {
            details: [{ field: 'body', issue: `refused by the telemetry store (${e.reason.split('\n')[0]!.slice(0, 200)})` }],
          });
        }
        request.log.error({ reqId: request.id, err: e }, 'telemetry store write failed');
        const retryAfter = e instanceof FolioError && e.retryAfter ? e.retryAfter : 5;
        throw new FolioError('SERVICE_UNAVAILABLE', 'The events could not be stored; retry later', { retryAfter, cause: e });
      } finally {
        release();
      }
      opts.metrics.accepted(record.events.length);
      return reply.code(202).send({ accepted: record.events.length });
    },
  );

  const adminDigest = opts.adminToken === undefined ? undefined : digest(opts.adminToken);
  app.get<{ Querystring: { licenseKey?: string; month?: string; format?: 'json' | 'csv' } }>(
    '/v1/usage',
    {
      onRequest: async (request) => {
        const m = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
        if (!adminDigest) {
          throw new FolioError('AUTHENTICATION_ERROR', 'The usage report is disabled: no ADMIN_TOKEN is configured');
        }
        // An address over its failures is refused before the comparison, even with the right token: otherwise
        // the throttle would only hide which guesses failed, not stop the guessing.
        const wait = await opts.limits.adminBlocked(request.ip);
        if (wait > 0) {
          throw new FolioError('RATE_LIMIT_ERROR', 'Too many wrong ADMIN_TOKEN attempts from this address; retry later', { retryAfter: wait });
        }
        // Compare digests: equal length, constant time, whatever the presented token's length.
        if (!m || !timingSafeEqual(digest(m[1]!), adminDigest)) {
          await opts.limits.adminFailed(request.ip);
          throw new FolioError('AUTHENTICATION_ERROR', 'Authorization: Bearer <ADMIN_TOKEN> is required');
        }
      },
      schema: {
        summary: 'Unique documents and opens per license key and UTC month',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            licenseKey: { type: 'string', minLength: 1, maxLength: 256 },
            month: { type: 'string', pattern: MONTH.source, description: 'YYYY-MM (UTC); default: the current month' },
            format: { type: 'string', enum: ['json', 'csv'], default: 'json' },
          },
        },
        response: {
          200: {
            description: 'JSON report, or text/csv with ?format=csv (every key of the month when licenseKey is absent)',
            type: 'object',
            properties: {
              licenseKey: { type: 'string' },
              month: { type: 'string' },
              documents: { type: 'integer' },
              opens: { type: 'integer' },
              hostnames: { type: 'array', items: { type: 'string' } },
            },
          },
          ...errorResponses(400, 401, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const month = q.month ?? monthOf(opts.now());
      reply.header('Cache-Control', 'no-store');
      if (q.format === 'csv') {
        const reports = q.licenseKey ? [await opts.store.usage(q.licenseKey, month)] : await opts.store.usageForMonth(month);
        return reply
          .header('Content-Type', 'text/csv; charset=utf-8')
          .header('Content-Disposition', `attachment; filename="folio-usage-${month}.csv"`)
          .send(usageCsv(reports));
      }
      if (!q.licenseKey) {
        throw new FolioError('VALIDATION_ERROR', 'licenseKey is required (or use ?format=csv for every key)', {
          details: [{ field: 'licenseKey', issue: 'required' }],
        });
      }
      return reply.send(await opts.store.usage(q.licenseKey, month));
    },
  );

  // Health for load balancers and probes (no license key): the store's write path, probed at most once per
  // STORE_HEALTH_CACHE_MS however many probes arrive (concurrent ones share the probe in flight).
  let probe: { at: number; result: Promise<StoreHealth> } | undefined;
  const storeHealth = (): Promise<StoreHealth> => {
    const now = Date.now();
    if (!probe || now - probe.at >= STORE_HEALTH_CACHE_MS) probe = { at: now, result: opts.store.health() };
    return probe.result;
  };
  const health = async (_request: FastifyRequest, reply: FastifyReply) => {
    const store = await storeHealth();
    reply.code(store.status === 'healthy' ? 200 : 503).header('Cache-Control', 'no-store');
    return {
      status: store.status,
      timestamp: new Date().toISOString(),
      version: INGEST_VERSION,
      service: 'folio-ingest',
      instance: { startTime: startTime.toISOString(), uptimeSeconds: Math.round(process.uptime()) },
      store,
    };
  };
  const healthSchema = {
    summary: 'Ingest health: the telemetry store can take writes (no key)',
    response: {
      200: INGEST_HEALTH_SCHEMA,
      503: { ...INGEST_HEALTH_SCHEMA, description: 'The store cannot take writes ("unhealthy")' },
    },
  };
  // HEAD first: Fastify's automatic HEAD sibling of a GET route is only skipped when HEAD exists already.
  app.head('/v1/health', { schema: healthSchema }, health);
  app.get('/v1/health', { schema: healthSchema }, health);

  app.addHook('preClose', async () => {
    closing = true;
  });
  return app;
}

export type { FastifyRequest };
