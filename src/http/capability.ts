/**
 * The module contract: what one capability declares about itself (src/<capability>/module.ts), so the API
 * app, the engine threads, the OpenAPI document, /v1/health and the configuration are all assembled from
 * the list in src/modules/index.ts — a new capability is its folder and one line there. The shape follows
 * Gotenberg's modules: a descriptor (id, settings), provisioning (what it needs and creates), its engine
 * tasks, its routes and its health.
 *
 * This file sits below the capabilities (they import it; it imports none of them), so the services a
 * module creates join `Services` by declaration merging from the module's own folder, as Fastify's
 * decorators do: `declare module '../http/capability.js' { interface Services { signing?: SigningIdentity } }`.
 */
import type { FastifyInstance } from 'fastify';
import type { TObject } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import type { SafeFetcher } from '../fetch/safe-fetch.js';
import type { OfficeEngine } from '../office/types.js';
import type { EnginePool } from '../engines/index.js';
import type { EngineWorkerData, TaskName } from '../engines/tasks.js';
import type { Coordination } from '../coordination/redis.js';

export interface EngineHealth {
  name: string;
  /** A required engine that cannot serve makes /v1/health answer 503 "unhealthy". */
  required: boolean;
  status(): { status: 'healthy' | 'degraded' | 'unhealthy'; [k: string]: unknown };
}

/**
 * The API's services, built once at start-up (src/services.ts) and handed to each route plugin: the shared
 * ones below, and what each module's provisioning adds (its own declaration merging).
 */
export interface Services {
  config: Config;
  logger: Logger;
  fetcher: SafeFetcher;
  /** The LibreOffice pool (src/modules/office.ts); absent when not started. */
  office?: OfficeEngine;
  /** Worker threads running every CPU-bound engine call (the modules' engine tasks). */
  enginePool: EnginePool;
  /** One thread that parses large JSON bodies (and decodes their documents) off the event loop. */
  bodyPool: EnginePool;
  /** REDIS_URL: the shared Redis connections (limits, revocations) and their state; absent without Redis. */
  coordination?: Coordination;
  /** Engines reported by /v1/health (and `coordination`, not required: while Redis is down, "degraded"). */
  engines: EngineHealth[];
  /** Called on shutdown, in reverse order of registration. */
  closers: Array<() => Promise<void>>;
}

/** What provisioning is given: the configuration and the services made so far (the shared ones, then earlier modules'). */
export interface ProvisionContext {
  config: Config;
  logger: Logger;
  services: Partial<Services>;
}

/** What a module's provisioning made. */
export interface Provision {
  /** False: the module cannot serve here (sign without a signing identity): no routes, no operations, no tag. */
  available?: boolean;
  /** What it creates for routes and other modules (the signing identity, the auth store, the office pool). */
  services?: Partial<Services>;
  /** Entries of /v1/health. */
  health?: EngineHealth[];
  /** Releases what it made, on shutdown (in reverse order of the modules). */
  close?: () => Promise<void>;
  /** Work started by provisioning that start-up waits for after every module and the pools (the office pool's boot). */
  ready?: Promise<void>;
}

/** A plugin registering a capability's routes (src/<capability>/routes.ts). */
export type RoutesPlugin = (app: FastifyInstance) => Promise<void>;

export interface Module {
  /** Unique; also its key in `ModuleSettings` (src/config/index.ts). */
  id: string;
  /** Its environment variables (src/config/settings.ts `Setting`), joined into the one configuration schema. */
  settings?: TObject;
  /** Its OpenAPI tag; the operations its routes register carry it. */
  tag?: { name: string; description: string };
  /** Builds what it needs from the configuration and the shared services; absent: always available, nothing made. */
  provision?(ctx: ProvisionContext): Promise<Provision>;
  /**
   * Its engine tasks: the file with their handlers (`new URL('./tasks.js', import.meta.url).href`, exporting
   * `handlers`: src/engines/tasks.ts `TaskFile`) and the task names it serves. An engine thread imports the
   * file when the first job of one of them arrives, before announcing that job (or at the thread's start
   * with `preload`), so module loading never counts against a job's time.
   */
  tasks?: { file: string; names: readonly TaskName[]; preload?: boolean };
  /** Plain data its tasks need on an engine thread (rebuilt there once): joined into the threads' workerData. */
  workerData?(ctx: ProvisionContext): Partial<EngineWorkerData>;
  /** Its routes, imported when the app is built (only for an available module). */
  routes?(): Promise<(services: Services) => RoutesPlugin>;
}
