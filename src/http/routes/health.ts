/** GET|HEAD /v1/health (CONTRACT §1): no key, no secrets, no paths. */
import type { FastifyInstance } from 'fastify';
import { API_VERSION } from '../app.js';
import type { Services } from '../../services.js';

const startTime = new Date();

export function healthRoutes(services: Services) {
  return async (app: FastifyInstance) => {
    app.addSchema(healthSchema);
    app.route({
      method: ['GET', 'HEAD'],
      url: '/v1/health',
      schema: {
        summary: 'Service health',
        tags: ['health'],
        response: {
          200: { $ref: 'Health#' },
          503: { $ref: 'Health#' },
        },
      },
      handler: async (_request, reply) => {
        const engines: Record<string, unknown> = {};
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
      },
    });
  };
}

export const healthSchema = {
  $id: 'Health',
  type: 'object',
  required: ['status', 'timestamp', 'version', 'service', 'instance', 'engines'],
  properties: {
    status: { type: 'string', enum: ['healthy', 'degraded', 'unhealthy'] },
    timestamp: { type: 'string', format: 'date-time' },
    version: { type: 'string' },
    service: { type: 'string' },
    instance: {
      type: 'object',
      properties: { startTime: { type: 'string' }, uptimeSeconds: { type: 'integer' } },
    },
    engines: { type: 'object', additionalProperties: { type: 'object', additionalProperties: true } },
  },
} as const;
