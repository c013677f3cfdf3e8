/**
 * A capability's HTTP face: its routes (kept beside its engine, `src/<capability>/routes.ts`) and whether
 * its engine can serve on this instance. `src/api.ts` registers only the available ones, so the OpenAPI
 * document lists only what works.
 */
import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.js';

export interface Capability {
  name: string;
  /** False when the engine is missing (e.g. no signing identity): no route, no OpenAPI operation. */
  available(services: Services): boolean;
  routes(services: Services): (app: FastifyInstance) => Promise<void>;
}
