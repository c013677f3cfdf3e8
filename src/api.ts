/**
 * Composition root of the API service: the services built from the configuration and the modules
 * (src/services.ts), and the Fastify app with the routes and OpenAPI tag of every module that can serve here
 * (each capability's routes live beside its engine, `src/<capability>/routes.ts`, named by its module.ts).
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config/index.js';
import { buildApiApp, MAX_IN_FLIGHT_PER_KEY } from './http/app.js';
import { LocalInFlightLimiter, RedisInFlightLimiter } from './http/in-flight.js';
import type { HttpMetrics } from './http/metrics.js';
import { healthRoutes } from './http/routes/health.js';
import { playgroundRoutes } from './http/playground.js';
import { movableBuffers } from './http/body-buffer.js';
import type { Module, Services } from './http/capability.js';
import { registerEnginePoolMetrics } from './engines/index.js';
import { createServices } from './services.js';
import { MODULES } from './modules/index.js';

export interface ApiOptions {
  config: Config;
  logger: Logger;
  metrics?: HttpMetrics;
  /** The modules to serve (default: every module, src/modules/index.ts). */
  modules?: readonly Module[];
  /** Skip starting the LibreOffice pool (tests of capabilities that never convert). */
  withoutOffice?: boolean;
  /** Engine threads warm V8 up on built-in documents before they take jobs (src/engines/warm-up.ts): the served API. */
  warmUpEngines?: boolean;
}

export interface RunningApi {
  app: FastifyInstance;
  services: Services;
  /** The modules serving here (their provisioning said available), in list order. */
  modules: readonly Module[];
  close(): Promise<void>;
}

export async function buildApi(opts: ApiOptions): Promise<RunningApi> {
  const { services, available } = await createServices({
    config: opts.config,
    logger: opts.logger,
    modules: opts.modules ?? MODULES,
    without: opts.withoutOffice ? ['office'] : [],
    warmUpEngines: opts.warmUpEngines,
  });
  if (opts.metrics) registerEnginePoolMetrics(opts.metrics.registry, services.enginePool);
  const limiter = services.coordination
    ? new RedisInFlightLimiter(services.coordination, MAX_IN_FLIGHT_PER_KEY)
    : new LocalInFlightLimiter(MAX_IN_FLIGHT_PER_KEY);
  // Only modules that can serve get routes and a tag, so /openapi.json lists only what works.
  const routes = await Promise.all(available.flatMap((m) => (m.routes ? [m.routes().then((plugin) => plugin(services))] : [])));
  const app = await buildApiApp({
    // The body buffer is the reader's own (src/http/body-buffer.ts) and not read again: moved, not copied.
    // The route's base64 documents are decoded there and moved back (src/http/binary-fields.ts).
    parseLargeJson: (body, base64Paths) =>
      services.bodyPool.run(
        'http.parseJson',
        { body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength), base64Paths },
        { transfer: movableBuffers(body) },
      ),
    logger: opts.logger,
    authenticator: services.auth,
    limiter,
    metrics: opts.metrics,
    trustProxy: opts.config.trustProxy,
    requestTimeoutMs: opts.config.requestTimeoutMs,
    inFlightBytes: opts.config.inFlightBytes,
    tags: available.flatMap((m) => (m.tag ? [m.tag] : [])),
    routes: [healthRoutes(services), ...routes, playgroundRoutes()],
  });
  return {
    app,
    services,
    modules: available,
    async close() {
      await app.close();
      await limiter.close();
      for (const close of [...services.closers].reverse()) {
        await close().catch((e) => opts.logger.warn({ err: e }, 'error while closing a service'));
      }
    },
  };
}
