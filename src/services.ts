/**
 * The API's services, built once at start-up from the configuration and the modules (src/modules/index.ts):
 * the shared ones (Redis coordination, the URL fetcher, the engine and body pools), then each module's
 * provisioning in list order (the office pool, the auth store, the signing identity…), which adds what it
 * creates to `Services` and its entries to /v1/health. A module whose provisioning says it cannot serve is
 * left out of `available`: src/api.ts registers no route, operation or tag for it.
 */
import type { Logger } from 'pino';
import type { Config } from './config/index.js';
import { SafeFetcher } from './fetch/safe-fetch.js';
import { createEnginePool } from './engines/index.js';
import { Coordination } from './coordination/redis.js';
import type { EngineHealth, Module, ProvisionContext, Services } from './http/capability.js';
import { engineWorkerData } from './modules/engine.js';

export type { EngineHealth, Services } from './http/capability.js';
export type { SigningIdentity } from './sign/identity-types.js';

/** How long start-up waits for Redis before serving with in-process limits. */
const REDIS_START_WAIT_MS = 1500;

export interface ServicesOptions {
  config: Config;
  logger: Logger;
  /** The modules to provision (default: every module, src/modules/index.ts). */
  modules: readonly Module[];
  /** Modules not to provision, by id (tests of capabilities that never convert leave out `office`). */
  without?: readonly string[];
  /** Engine threads warm V8 up on built-in documents before they take jobs (the served API). */
  warmUpEngines?: boolean;
}

export interface BuiltServices {
  services: Services;
  /** The modules that can serve here, in list order. */
  available: Module[];
}

export async function createServices(opts: ServicesOptions): Promise<BuiltServices> {
  const { config, logger } = opts;
  const closers: Array<() => Promise<void>> = [];
  const health: EngineHealth[] = [];
  const closeAll = async () => {
    for (const close of [...closers].reverse()) await close().catch((e: unknown) => logger.warn({ err: e }, 'error while closing a service'));
  };
  // REDIS_URL: one connection pair per instance for the shared limits and revocation messages. A Redis that
  // is down at start is not fatal: the limits run in process until it answers (health says "degraded").
  const coordination = config.redisUrl ? new Coordination(config.redisUrl, logger, { keyPrefix: config.redisKeyPrefix }) : undefined;
  if (coordination) {
    // Closed last (closers run in reverse): the limiter and the auth service use it until then.
    closers.push(() => coordination.close());
    health.push({ name: 'coordination', required: false, status: () => coordination.status() });
    await coordination.ready(REDIS_START_WAIT_MS);
  }
  const fetcher = new SafeFetcher({ allowlist: config.urlFetchAllowlist });
  closers.push(() => fetcher.close());

  const made: Partial<Services> = { config, logger, fetcher, coordination };
  const ctx: ProvisionContext = { config, logger, services: made };
  const available: Module[] = [];
  const moduleHealth: EngineHealth[] = [];
  const ready: Array<Promise<void>> = [];
  try {
    for (const m of opts.modules) {
      if (opts.without?.includes(m.id)) continue;
      const p = (await m.provision?.(ctx)) ?? {};
      Object.assign(made, p.services);
      moduleHealth.push(...(p.health ?? []));
      if (p.close) closers.push(p.close);
      if (p.ready) ready.push(p.ready);
      if (p.available !== false) available.push(m);
    }
  } catch (e) {
    // A dependency that cannot be used (DATABASE_URL unreachable): what was made so far is closed.
    await closeAll();
    throw e;
  }

  const data = engineWorkerData(ctx, opts.modules);
  const enginePool = createEnginePool(config, logger, data, { warmUp: opts.warmUpEngines });
  // Its own thread, so a body never waits behind long engine jobs; parsing a 33 MB body takes about 1 s.
  const bodyPool = createEnginePool(config, logger, data, { workers: 1, timeoutMs: 15_000, memoryMb: 256, preloadEngines: false });
  closers.push(
    () => enginePool.close(),
    () => bodyPool.close(),
  );
  health.push(
    {
      name: 'enginePool',
      required: true,
      status: () => {
        const { status, workers, busy, queued } = enginePool.status();
        return { status, workers, busy, queued };
      },
    },
    ...moduleHealth,
  );
  await Promise.all(ready);

  // One object from start to end: what a module kept from its ProvisionContext is the services routes see.
  const services = Object.assign(made, { enginePool, bodyPool, engines: health, closers }) as Services;
  if (!services.auth) {
    await closeAll();
    throw new Error('no module provides Services.auth: the API cannot check keys (list the auth module)');
  }
  return { services, available };
}
