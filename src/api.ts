/**
 * Composition root of the API service: builds the services from the configuration, and the Fastify app with
 * the routes of every capability whose engine is available (each capability's routes live beside its
 * engine, `src/<capability>/routes.ts`).
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config/index.js';
import { buildApiApp } from './http/app.js';
import { LocalInFlightLimiter, RedisInFlightLimiter } from './http/in-flight.js';
import type { HttpMetrics } from './http/metrics.js';
import { healthRoutes } from './http/routes/health.js';
import { playgroundRoutes } from './http/playground.js';
import type { Capability } from './http/capability.js';
import { authCapability } from './auth/routes.js';
import { convertCapability } from './convert/routes.js';
import { annotateCapability } from './annotate/routes.js';
import { signCapability } from './sign/routes.js';
import { verifyCapability } from './verify/routes.js';
import { mergeCapability } from './merge/routes.js';
import { loadSigningIdentity } from './sign/index.js';
import { SafeFetcher } from './fetch/safe-fetch.js';
import { createAuthService } from './auth/service.js';
import { createOfficePool } from './office/index.js';
import { createEnginePool, registerEnginePoolMetrics } from './engines/index.js';
import { attachDecodedDocument } from './fetch/document-source.js';
import type { Services } from './services.js';
import { MAX_IN_FLIGHT_PER_KEY } from './http/app.js';
import { Coordination } from './coordination/redis.js';

/** How long start-up waits for Redis before serving with in-process limits. */
const REDIS_START_WAIT_MS = 1500;

/** Every capability with an HTTP face, in the order its routes are registered. */
export const CAPABILITIES: readonly Capability[] = [
  authCapability,
  convertCapability,
  signCapability,
  annotateCapability,
  verifyCapability,
  mergeCapability,
];

export interface ApiOptions {
  config: Config;
  logger: Logger;
  metrics?: HttpMetrics;
  /** Skip starting the LibreOffice pool (tests of capabilities that never convert). */
  withoutOffice?: boolean;
  /** Engine threads warm V8 up on built-in documents before they take jobs (src/engines/warm-up.ts): the served API. */
  warmUpEngines?: boolean;
}

export interface RunningApi {
  app: FastifyInstance;
  services: Services;
  close(): Promise<void>;
}

export async function createServices(opts: ApiOptions): Promise<Services> {
  const { config, logger } = opts;
  // REDIS_URL: one connection pair per instance for the shared limits and revocation messages. A Redis that
  // is down at start is not fatal: the limits run in process until it answers (health says "degraded").
  const coordination = config.redisUrl ? new Coordination(config.redisUrl, logger, { keyPrefix: config.redisKeyPrefix }) : undefined;
  if (coordination) await coordination.ready(REDIS_START_WAIT_MS);
  let auth;
  try {
    auth = await createAuthService(config, logger, undefined, { coordination });
  } catch (e) {
    await coordination?.close();
    throw e;
  }
  const signing = await loadSigningIdentity(config, logger);
  const enginePool = createEnginePool(config, logger, signing, { warmUp: opts.warmUpEngines });
  // Its own thread, so a body never waits behind long engine jobs; parsing a 33 MB body takes about 1 s.
  const bodyPool = createEnginePool(config, logger, signing, { workers: 1, timeoutMs: 15_000, memoryMb: 256, preloadEngines: false });
  const services: Services = {
    config,
    logger,
    fetcher: new SafeFetcher({ allowlist: config.urlFetchAllowlist }),
    auth,
    enginePool,
    bodyPool,
    signing,
    coordination,
    engines: [],
    closers: [],
  };
  if (coordination) {
    // Closed last (closers run in reverse): the limiter and the auth service use it until then.
    services.closers.push(() => coordination.close());
    services.engines.push({ name: 'coordination', required: false, status: () => coordination.status() });
  }
  services.closers.push(
    () => services.fetcher.close(),
    () => services.auth.close(),
    () => enginePool.close(),
    () => bodyPool.close(),
  );
  services.engines.push({
    name: 'enginePool',
    required: true,
    status: () => {
      const { status, workers, busy, queued } = enginePool.status();
      return { status, workers, busy, queued };
    },
  });
  if (!opts.withoutOffice) {
    // Warm start: the workers boot LibreOffice now, so the first conversion is as fast as the next.
    const office = createOfficePool(config, logger);
    try {
      await office.start();
    } catch (e) {
      // Keep serving the other capabilities; health reports office unhealthy and the pool keeps retrying.
      logger.error({ err: e }, 'the LibreOffice pool could not start');
    }
    services.office = office;
    services.engines.push({
      name: 'office',
      required: true,
      status: () => {
        const { status, workers, busy, queued } = office.status();
        return { status, workers, busy, queued };
      },
    });
    services.closers.push(() => office.close());
  }
  return services;
}

export async function buildApi(opts: ApiOptions): Promise<RunningApi> {
  const services = await createServices(opts);
  if (opts.metrics) registerEnginePoolMetrics(opts.metrics.registry, services.enginePool);
  const limiter = services.coordination
    ? new RedisInFlightLimiter(services.coordination, MAX_IN_FLIGHT_PER_KEY)
    : new LocalInFlightLimiter(MAX_IN_FLIGHT_PER_KEY);
  const app = await buildApiApp({
    parseLargeJson: async (body) => {
      // The body buffer is the reader's own (src/http/body-buffer.ts) and not read again: moved, not copied.
      const whole = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength && body.buffer instanceof ArrayBuffer;
      const parsed = await services.bodyPool.run(
        'http.parseJson',
        { body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength) },
        whole ? { transfer: [body.buffer as ArrayBuffer] } : {},
      );
      const document = (parsed.value as { document?: unknown } | null)?.document;
      if (parsed.document && document && typeof document === 'object') attachDecodedDocument(document, parsed.document);
      return parsed.value;
    },
    logger: opts.logger,
    authenticator: services.auth,
    limiter,
    metrics: opts.metrics,
    trustProxy: opts.config.trustProxy,
    requestTimeoutMs: opts.config.requestTimeoutMs,
    inFlightBytes: opts.config.inFlightBytes,
    // Only capabilities whose engine can serve get routes, so /openapi.json lists only what works.
    routes: [healthRoutes(services), ...CAPABILITIES.filter((c) => c.available(services)).map((c) => c.routes(services)), playgroundRoutes()],
  });
  return {
    app,
    services,
    async close() {
      await app.close();
      await limiter.close();
      for (const close of [...services.closers].reverse()) {
        await close().catch((e) => opts.logger.warn({ err: e }, 'error while closing a service'));
      }
    },
  };
}
