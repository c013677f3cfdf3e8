/** GET|HEAD /v1/health (CONTRACT §1): no key, no secrets, no paths. */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { API_VERSION } from '../app.js';
import { HealthResponse, type HealthResponseBody } from '../schema.js';
import type { Services } from '../../services.js';

const startTime = new Date();

export function healthRoutes(services: Services) {
  return async (root: FastifyInstance) => {
    const app = root.withTypeProvider<TypeBoxTypeProvider>();
    const schema = (operationId: string, summary: string) => ({
      operationId,
      summary,
      tags: ['health'],
      response: { 200: HealthResponse, 503: { ...HealthResponse, description: 'A required engine cannot serve ("unhealthy")' } },
    });
    const answer = (reply: FastifyReply): HealthResponseBody => {
      const engines: HealthResponseBody['engines'] = {};
      let status: 'healthy' | 'degraded' | 'unhealthy' = 'healthy';
      for (const engine of services.engines) {
        const s = engine.status();
        engines[engine.name] = s;
        if (s.status === 'unhealthy' && engine.required) status = 'unhealthy';
        else if (s.status !== 'healthy' && status === 'healthy') status = 'degraded';
      }
      reply.code(status === 'unhealthy' ? 503 : 200).header('Cache-Control', 'no-store');
      return {
        status,
        timestamp: new Date().toISOString(),
        version: API_VERSION,
        service: 'folio-api',
        instance: { startTime: startTime.toISOString(), uptimeSeconds: Math.round(process.uptime()) },
        engines,
      };
    };
    // Two routes, not one with ['GET', 'HEAD']: each OpenAPI operation needs its own operationId.
    // HEAD first: Fastify's automatic HEAD sibling of a GET route is only skipped when HEAD exists already.
    app.head('/v1/health', { schema: schema('headHealth', 'Service health (headers only)') }, async (_request, reply) => answer(reply));
    app.get('/v1/health', { schema: schema('getHealth', 'Service health') }, async (_request, reply) => answer(reply));
  };
}
