/**
 * The API's Fastify instance: request ids, logging, body parsing and limits, the auth hook, the per-key
 * in-flight limit, the error envelope for every failure, OpenAPI, and graceful closing. Capabilities add
 * their routes as plugins (src/<capability>/routes.ts, registered by src/api.ts) and know nothing of each other.
 */
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifySchema,
  type RouteOptions,
  type FastifyInstance,
  type FastifyRequest,
  type FastifyReply,
  type FastifyContextConfig,
} from 'fastify';
import type { Readable } from 'node:stream';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { fastifyMultipart, type FastifyMultipartOptions } from '@fastify/multipart';
import type { Logger } from 'pino';
import { FolioError } from '../errors.js';
import { clientErrorHandler, errorEnvelopeSchema, sendError, toFolioError } from './envelope.js';
import { parseJsonBody } from './json-body.js';
import { attachDecodedFields, base64Paths, decodeBase64Fields, jsonBodySchema, type Base64Path, type DecodedField } from './binary-fields.js';
import type { InFlightLimiter } from './in-flight.js';
import type { HttpMetrics } from './metrics.js';
import type { KeyAuthenticator } from './types.js';
import { requestIdFor } from './request-id.js';
import { requestLineWriter } from '../logger.js';
import { Deadline } from '../budget/index.js';
import { exemptFromExchangeTimeout } from './server-limits.js';
import { InFlightBudget, admissionHook, countArrivedBytes } from './admission.js';
import { announcedLength, readIntoBuffer } from './body-buffer.js';

export const API_VERSION = '0.9.0';
/** Largest document (docs/api.md § Common rules). */
export const MAX_DOCUMENT_BYTES = 25 * 1024 * 1024;
/** A JSON body carries the document in base64 (4/3 larger) plus fields: room for that, no more. */
export const MAX_JSON_BODY_BYTES = Math.ceil((MAX_DOCUMENT_BYTES * 4) / 3) + 2 * 1024 * 1024;
export const MAX_IN_FLIGHT_PER_KEY = 10;
const HEALTH_ROUTE = '/v1/health';
const DEFAULT_REQUEST_TIMEOUT_MS = 120_000;

export interface ApiAppOptions {
  logger: Logger;
  authenticator: KeyAuthenticator;
  limiter: InFlightLimiter;
  metrics?: HttpMetrics;
  /** Base URL in the OpenAPI document's `servers` (default `/`: the instance serving the document). */
  publicUrl?: string;
  /**
   * Parses a JSON body of OFF_THREAD_JSON_BYTES or more away from the event loop (the body thread), and
   * decodes the base64 documents its route's schema marks (`base64Paths`, binary-fields.ts: run
   * `parseJsonDecoding` there); without it every body is parsed here.
   */
  parseLargeJson?: (body: Buffer, base64Paths: readonly Base64Path[]) => Promise<{ value: unknown; decoded: DecodedField[] }>;
  /**
   * Which peers may name the client in `X-Forwarded-For` (config TRUST_PROXY, Fastify's `trustProxy`):
   * `request.ip`, which keys the per-client windows, is the forwarded address only behind a trusted proxy.
   */
  trustProxy?: boolean | number | string[];
  /** Wall time of one whole document request (REQUEST_TIMEOUT_MS): `request.deadline` on document endpoints. */
  requestTimeoutMs?: number;
  /** The service-wide budget of request bytes in flight (INFLIGHT_BYTES_MB, admission.ts); none when absent. */
  inFlightBytes?: number;
  /** Route plugins; each registers its own paths. */
  routes: Array<(app: FastifyInstance) => Promise<void>>;
  /** The OpenAPI tags of the capabilities serving here (their modules', src/modules/index.ts), after `health`. */
  tags?: ReadonlyArray<{ name: string; description: string }>;
}

/** The largest JSON body of a request outside the in-flight byte budget (no route but document endpoints takes more). */
const UNBUDGETED_JSON_BYTES = 1024 * 1024;

/** JSON bodies from this size on are parsed off the event loop when the app is given a parser for them. */
export const OFF_THREAD_JSON_BYTES = 256 * 1024;

export async function buildApiApp(opts: ApiAppOptions): Promise<FastifyInstance> {
  const app: FastifyInstance = Fastify({
    loggerInstance: opts.logger as unknown as FastifyBaseLogger,
    // Our own line per request below: never the query string (it may hold a code).
    logController: new LogController({ disableRequestLogging: true }),
    // No per-request child logger: the request id is written explicitly in the lines that need it.
    childLoggerFactory: (logger) => logger,
    genReqId: requestIdFor,
    trustProxy: trustProxyOption(opts.trustProxy),
    requestIdHeader: false,
    bodyLimit: MAX_JSON_BODY_BYTES,
    routerOptions: { maxParamLength: 200 },
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    ajv: { customOptions: { allErrors: true, removeAdditional: false, coerceTypes: false, useDefaults: true } },
    // Malformed requests rejected by Node's parser (e.g. a 10 MB query string) still get the envelope.
    clientErrorHandler,
  });

  let closing = false;
  const inFlightBudget = opts.inFlightBytes !== undefined ? new InFlightBudget(opts.inFlightBytes) : undefined;
  // The per-request line holds only fixed fields (id, method, route pattern, status, ms): no redaction pass,
  // and for the service's own logger the line is assembled directly (src/logger.ts).
  const requestLine = requestLineWriter(opts.logger);
  app.addSchema(errorEnvelopeSchema);

  app.removeAllContentTypeParsers();
  // A 33 MB base64 body costs about a second of decoding, scanning, parsing and base64 work on Node 20:
  // above OFF_THREAD_JSON_BYTES that runs on a worker thread so health checks and small requests never wait.
  // Every base64 document of the body is decoded there too, and comes back as bytes (moved, not copied).
  const parseLargeJson = opts.parseLargeJson;
  // The body is read into one buffer of its announced size (body-buffer.ts), counted against its in-flight
  // reservation as it arrives when it has no Content-Length (admission.ts).
  app.addContentTypeParser('application/json', async (req: FastifyRequest, payload: NodeJS.ReadableStream) => {
    // Only a request holding a share of the byte budget (a document endpoint) may send a document-sized
    // body; any other (Fastify parses bodies of unknown paths too, before their 404) reads at most 1 MB.
    const unbudgeted = inFlightBudget !== undefined && req.inFlightBytes === undefined;
    const body = await readIntoBuffer(payload as Readable, {
      length: announcedLength(req.headers['content-length']),
      limit: unbudgeted ? UNBUDGETED_JSON_BYTES : MAX_JSON_BODY_BYTES,
      discardUpTo: MAX_JSON_BODY_BYTES,
      onBytes: (n) => countArrivedBytes(req, n),
      tooLargeMessage: unbudgeted
        ? 'The request body exceeds 1 MB; only document endpoints take documents'
        : 'The request body exceeds the size limit (25 MB per document)',
    });
    // The route's base64 documents (Base64Document in its body schema) are decoded where the body is parsed.
    const paths = base64Paths(jsonBodySchema(req.routeOptions.schema));
    if (parseLargeJson && body.length >= OFF_THREAD_JSON_BYTES) {
      const { value, decoded } = await parseLargeJson(body, paths);
      attachDecodedFields(value, decoded);
      return value;
    }
    const value = parseJsonBody(body.toString('utf8'));
    if (paths.length > 0) attachDecodedFields(value, decodeBase64Fields(value, paths));
    return value;
  });
  registerMultipartStreams(app, {
    limits: { fileSize: MAX_DOCUMENT_BYTES, files: 1, fields: 20, fieldSize: 64 * 1024, parts: 25 },
    throwFileSizeLimit: true,
  });

  // Every route registered from here on (Swagger UI's and the capabilities') gets its hooks from this
  // onRoute hook, built for that route: the key check only on routes with `config.auth`, the closing line
  // with the route pattern as a constant (no per-request `request.routeOptions`, which builds an object).
  // Paths and methods known to the router, for 405 versus 404.
  const routePatterns: Array<{ re: RegExp; methods: Set<string> }> = [];
  app.addHook('onRoute', (route) => {
    const url = route.url;
    const re = new RegExp(
      '^' +
        url
          .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
          .replace(/:[A-Za-z0-9_]+/g, '[^/]+')
          .replace(/\\\*/g, '.*') +
        '/?$',
    );
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const config = route.config;
    if (config?.documentEndpoint) {
      // The request's one time budget starts on arrival: reading the body and queueing spend it too.
      const requestTimeoutMs = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
      route.onRequest = [
        (request: FastifyRequest, _reply: FastifyReply, done: () => void) => {
          request.deadline = Deadline.after(requestTimeoutMs);
          // That budget replaces the server's whole-exchange timeout (server-limits.ts).
          exemptFromExchangeTimeout(request.raw);
          done();
        },
        ...hookList(route.onRequest),
      ];
    }
    if (config?.auth) route.onRequest = [...hookList(route.onRequest), authHook(config)];
    // After the key and its slot, before the body: the request's share of the service-wide byte budget.
    if (config?.documentEndpoint && inFlightBudget)
      route.onRequest = [...hookList(route.onRequest), admissionHook(inFlightBudget, MAX_JSON_BODY_BYTES)];
    // Only document endpoints hold a slot to give back when the client leaves: an onRequestAbort hook makes
    // Fastify add a 'close' listener to every request of the routes it covers, so it covers only those.
    if (config?.documentEndpoint) {
      route.onRequestAbort = [...hookList(route.onRequestAbort), (request) => releaseSlot(request)];
    }
    const quietWhenOk = url === HEALTH_ROUTE;
    if (config?.documentEndpoint) {
      // A document answer may be megabytes: its time, line and slot wait for the answer to be out.
      route.onSend = [...hookList(route.onSend), closeWhileDraining];
      route.onResponse = [
        ...hookList(route.onResponse),
        (request, reply, done) => {
          finished(request, reply, url, false);
          done();
        },
      ];
    } else {
      // Every other answer is small JSON (or a static asset of the docs/playground) handed to Node in one
      // write: it is measured and logged when it is sent, in the one hook every response runs anyway. No
      // onResponse hook means Fastify adds no 'finish'/'error' listeners to the response and runs no hook
      // after it, a measurable share of a cheap request.
      route.onSend = [
        ...hookList(route.onSend),
        (request, reply, payload, done) => {
          if (closing) reply.header('Connection', 'close');
          finished(request, reply, url, quietWhenOk);
          done(null, payload);
        },
      ];
    }
    let entry = routePatterns.find((p) => p.re.source === re.source);
    if (!entry) routePatterns.push((entry = { re, methods: new Set() }));
    for (const m of methods) entry.methods.add(m.toUpperCase());
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Folio API',
        version: API_VERSION,
        description:
          'Convert, fill, sign and verify documents. Every error answers the ErrorEnvelope schema. ' +
          'Every /v1 operation except health, register and verify needs `Authorization: Bearer folio_sk_…`.',
        license: { name: 'AGPL-3.0-only', identifier: 'AGPL-3.0-only' },
      },
      servers: [{ url: opts.publicUrl ?? '/', description: 'The Folio instance serving this document (by default http://localhost:8080)' }],
      tags: [{ name: 'health', description: 'Liveness and engine status' }, ...(opts.tags ?? [])],
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'folio_sk_… API key' } },
      },
    },
    refResolver: { buildLocalReference: (json, _base, _frag, i) => (json.$id as string) ?? `def-${i}` },
    transform: openApiOperation,
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });

  /**
   * Gives the request's slot back, once: the first of the answer finishing (onResponse), the response
   * closing (reply.raw 'close': sent, or the connection dropped at any stage, also while the engine still
   * works) and Fastify's onRequestAbort wins; the flag is cleared synchronously, so the others do nothing.
   */
  const releaseSlot = (request: FastifyRequest): Promise<void> => {
    if (!request.holdsDocumentSlot || !request.apiKey) return Promise.resolve();
    request.holdsDocumentSlot = false;
    opts.metrics?.inFlight.dec({ endpoint: request.routeOptions.config?.endpoint ?? request.routeOptions.url ?? '' });
    return opts.limiter.release(request.apiKey.keyId).catch((err: unknown) => {
      // A shared limiter that fails (Redis down) must not become an unhandled rejection; its counter expires.
      request.log.error({ reqId: request.id, err }, 'could not release an in-flight slot');
    });
  };

  const admit = async (request: FastifyRequest, reply: FastifyReply, rawKey: string, config: FastifyContextConfig) => {
    request.apiKey ??= await authenticate(opts.authenticator, rawKey);
    if (config.documentEndpoint) {
      if (!(await opts.limiter.tryAcquire(request.apiKey.keyId))) {
        throw new FolioError('RATE_LIMIT_ERROR', `At most ${MAX_IN_FLIGHT_PER_KEY} requests may be in flight per API key; retry when one finishes`, {
          retryAfter: 1,
        });
      }
      request.holdsDocumentSlot = true;
      opts.metrics?.inFlight.inc({ endpoint: config.endpoint ?? request.routeOptions.url ?? '' });
      // Node's ServerResponse emits 'close' once, when the answer is sent or the connection is gone, whichever
      // comes first. 'finish' (and so onResponse) never comes for a client that left: without this its slot
      // would be held for ever. request.raw's 'close' is no such signal: it fires when the body has been read.
      if (reply.raw.closed) {
        // The client left while authentication or the limiter were awaited: the event has passed already.
        await releaseSlot(request);
        throw new FolioError('VALIDATION_ERROR', 'The client closed the connection');
      }
      reply.raw.once('close', () => void releaseSlot(request));
    }
  };

  // Every request, routed or not: its id, its start time, and the refusal while closing. Callback style: the
  // common path allocates no promise.
  app.addHook('onRequest', (request, reply, done) => {
    request.startedAt = process.hrtime.bigint();
    reply.header('X-Request-Id', request.id);
    if (closing) {
      reply.header('Connection', 'close');
      return done(new FolioError('SERVICE_UNAVAILABLE', 'The server is shutting down', { retryAfter: 5 }));
    }
    done();
  });

  /** The key check of a route with `config.auth` (added to those routes only, after the hook above). */
  function authHook(config: FastifyContextConfig) {
    const documentEndpoint = config.documentEndpoint === true;
    return (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void => {
      const rawKey = bearerKey(request.headers.authorization);
      if (typeof rawKey !== 'string') return done(rawKey);
      // A key the in-process cache knows is answered synchronously (no promise, no store, no Redis); only
      // document endpoints then still wait, for their in-flight slot.
      const cached = opts.authenticator.authenticateCached?.(rawKey);
      if (cached === null) return done(invalidKey());
      if (cached !== undefined) {
        request.apiKey = cached;
        if (!documentEndpoint) return done();
      }
      admit(request, reply, rawKey, config).then(() => done(), done);
    };
  }

  // A response finished while draining closes its connection: otherwise a kept-alive socket would hold
  // server.close() for the whole keep-alive timeout (72 s) after the last in-flight request ended.
  // (Each route's own onSend, see onRoute above; the not-found handler does the same itself.)
  function closeWhileDraining(_request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, payload: unknown) => void): void {
    if (closing) reply.header('Connection', 'close');
    done(null, payload);
  }
  /**
   * An answer is out (document endpoints: their onResponse; the not-found handler: 'finish') or being sent
   * (every other route: its onSend): the slot back, metrics, one log line. Load balancers and probes poll health every few seconds each: a 200 health answer
   * is logged at debug (it would be most of an idle server's log, and metrics count it); others at info.
   */
  const finished = (request: FastifyRequest, reply: FastifyReply, route: string, quietWhenOk: boolean): void => {
    if (request.holdsDocumentSlot) void releaseSlot(request);
    const seconds = request.startedAt ? Number(process.hrtime.bigint() - request.startedAt) / 1e9 : 0;
    const status = reply.statusCode;
    opts.metrics?.observe(request.method, route, status, seconds);
    requestLine(quietWhenOk && status === 200, request.id, request.method, route, status, Math.round(seconds * 1000));
  };

  app.setErrorHandler(async (thrown, request, reply) => {
    const err = toFolioError(thrown);
    if (err.status >= 500 && err.code === 'INTERNAL_ERROR') {
      request.log.error({ reqId: request.id, err: thrown }, 'unhandled error');
    }
    return sendError(request, reply, err);
  });

  app.setNotFoundHandler(async (request, reply) => {
    // No route, so no route-level hooks: the same work here.
    if (closing) reply.header('Connection', 'close');
    reply.raw.once('finish', () => finished(request, reply, 'unmatched', false));
    const path = request.url.split('?')[0] ?? '/';
    const match = routePatterns.find((p) => p.re.test(path));
    if (match && !match.methods.has(request.method)) {
      const allowed = [...match.methods].sort();
      reply.header('Allow', allowed.join(', '));
      return sendError(
        request,
        reply,
        new FolioError('METHOD_NOT_ALLOWED', `${request.method} is not allowed on this path; use ${allowed.join(', ')}`),
      );
    }
    return sendError(request, reply, new FolioError('NOT_FOUND', 'The requested path does not exist'));
  });

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  for (const plugin of opts.routes) await app.register(plugin);

  app.addHook('preClose', async () => {
    closing = true;
  });
  return app;
}

/**
 * What every operation of the OpenAPI document gets from its route options, in one place: the bearer
 * security requirement exactly when `config.auth` is set (`[]` on the public ones, so a linter sees it was
 * meant), and the multipart body of routes that read their own parts (`config.multipartBody`) next to any
 * JSON body they validate.
 */
function openApiOperation({ schema, url, route }: { schema: FastifySchema; url: string; route: RouteOptions }) {
  if (!schema) return { schema, url };
  const out: Record<string, unknown> = { ...schema, security: route.config?.auth ? [{ bearerAuth: [] }] : [] };
  const multipartBody = route.config?.multipartBody;
  if (multipartBody) {
    const body = schema.body as { content?: Record<string, unknown> } | undefined;
    const content = body?.content ?? (body ? { 'application/json': { schema: body } } : {});
    out.body = { content: { ...content, 'multipart/form-data': { schema: multipartBody } } };
  }
  return { schema: out as FastifySchema, url };
}

/**
 * Fastify's `trustProxy` for TRUST_PROXY. A hop count becomes proxy-addr's hop function (the socket's peer
 * is hop 0, the last `X-Forwarded-For` entry hop 1, …): Fastify 5.12 itself trusts nothing for a number,
 * because a hop count cannot tell a proxy from a client connecting directly. So a count is only right where
 * nothing but the proxies can reach the API (docs/operations.md); addresses or CIDRs are right everywhere.
 */
function trustProxyOption(trust: ApiAppOptions['trustProxy']): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof trust !== 'number') return trust ?? false;
  return (_address, hop) => hop < trust;
}

/** A route option's hooks as an array (Fastify accepts one function or an array). */
function hookList<T>(own: T | T[] | undefined): T[] {
  return own === undefined ? [] : Array.isArray(own) ? own : [own];
}

/**
 * @fastify/multipart's stream mode (`request.parts()`, `request.file()`, `request.isMultipart()`, the
 * multipart/form-data parser) without the two hooks it adds to every route of the app for its disk mode: an
 * async `onRequest` that puts a 'close' listener on every response and an async `onResponse` that runs
 * `cleanRequestFiles`, both there to delete files saved by `request.saveRequestFiles()`. Folio never saves
 * request files (documents stay in memory, bounded by the limits), so on every request, health included,
 * they were two promises and a listener doing nothing. The plugin is applied to the root instance directly
 * (as fastify-plugin would) through a view of it that leaves those two hooks out; if a route ever needs
 * `saveRequestFiles`, register the plugin normally instead.
 */
function registerMultipartStreams(app: FastifyInstance, options: FastifyMultipartOptions): void {
  const withoutDiskCleanup = new Proxy(app, {
    get(target, prop) {
      if (prop === 'addHook') {
        return (name: string, fn: unknown) =>
          name === 'onRequest' || name === 'onResponse' ? withoutDiskCleanup : (target.addHook as (n: string, f: unknown) => unknown)(name, fn);
      }
      return Reflect.get(target, prop, target) as unknown;
    },
  });
  (fastifyMultipart as unknown as (i: FastifyInstance, o: FastifyMultipartOptions, done: (err?: Error) => void) => void)(
    withoutDiskCleanup,
    options,
    (err) => {
      if (err) throw err;
    },
  );
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The key of an `Authorization: Bearer <key>` header, or the error to answer. */
function bearerKey(header: string | undefined): string | FolioError {
  if (typeof header !== 'string' || header.length === 0) {
    return new FolioError('AUTHENTICATION_ERROR', 'Missing Authorization: Bearer <API key> header');
  }
  const m = BEARER.exec(header);
  if (!m) return new FolioError('AUTHENTICATION_ERROR', 'The Authorization header must be "Bearer <API key>"');
  return m[1]!;
}

const invalidKey = () => new FolioError('AUTHENTICATION_ERROR', 'The API key is invalid or has been revoked');

async function authenticate(authenticator: KeyAuthenticator, rawKey: string) {
  const key = await authenticator.authenticate(rawKey);
  if (!key) throw invalidKey();
  return key;
}

export type { FastifyInstance, FastifyReply, FastifyRequest };
