/**
 * GET|HEAD /v1/health (docs/api.md § Health): no key, no secrets, no paths.
 *
 * Load balancers and probes poll this, often many times a second across a fleet: the answer is a snapshot
 * of the engines' state taken at most HEALTH_SNAPSHOT_MS ago (status, engines and timestamp are of that
 * moment), serialised once by the route's schema and sent as is until it is older. A change of state (a
 * worker dying, Redis going away) shows within that time; a closing server answers 503 before reaching here.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { API_VERSION } from '../app.js';
import { HealthResponse, type HealthResponseBody } from '../schema.js';
import type { Services } from '../capability.js';

const startTime = new Date();
/** Longest age of the snapshot a health answer shows. */
export const HEALTH_SNAPSHOT_MS = 250;

export function healthRoutes(services: Services) {
  return async (root: FastifyInstance) => {
    const app = root.withTypeProvider<TypeBoxTypeProvider>();
    const schema = (operationId: string, summary: string) => ({
      operationId,
      summary,
      tags: ['health'],
      response: { 200: HealthResponse, 503: { ...HealthResponse, description: 'A required engine cannot serve ("unhealthy")' } },
    });
    const snapshot = (): HealthResponseBody => {
      const engines: HealthResponseBody['engines'] = {};
      let status: 'healthy' | 'degraded' | 'unhealthy' = 'healthy';
      for (const engine of services.engines) {
        const s = engine.status();
        engines[engine.name] = s;
        if (s.status === 'unhealthy' && engine.required) status = 'unhealthy';
        else if (s.status !== 'healthy' && status === 'healthy') status = 'degraded';
      }
      return {
        status,
        timestamp: new Date().toISOString(),
        version: API_VERSION,
        service: 'folio-api',
        instance: { startTime: startTime.toISOString(), uptimeSeconds: Math.round(process.uptime()) },
        engines,
      };
    };
    let last: { at: number; code: 200 | 503; json: string } | undefined;
    const answer = (reply: FastifyReply): void => {
      const now = Date.now();
      let current = last;
      if (current === undefined || now - current.at >= HEALTH_SNAPSHOT_MS || now < current.at) {
        const body = snapshot();
        const code = body.status === 'unhealthy' ? 503 : 200;
        // The route's own serializer for that status: the same bytes as returning the object would give.
        last = current = { at: now, code, json: String(reply.code(code).serialize(body)) };
      }
      reply.code(current.code).header('Cache-Control', 'no-store').type('application/json; charset=utf-8').send(current.json);
    };
    // Two routes, not one with ['GET', 'HEAD']: each OpenAPI operation needs its own operationId.
    // HEAD first: Fastify's automatic HEAD sibling of a GET route is only skipped when HEAD exists already.
    app.head('/v1/health', { schema: schema('headHealth', 'Service health (headers only)') }, (_request, reply) => answer(reply));
    app.get('/v1/health', { schema: schema('getHealth', 'Service health') }, (_request, reply) => answer(reply));
  };
}
