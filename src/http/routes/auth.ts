/** Auth routes (CONTRACT §2): register and verify need no key; key management does. */
import type { FastifyInstance } from 'fastify';
import { FolioError } from '../../errors.js';
import { errorResponses } from '../envelope.js';
import type { Services } from '../../services.js';

const emailQuery = { type: 'string', minLength: 3, maxLength: 254, description: 'E-mail address' } as const;

export function authRoutes(services: Services) {
  const { auth } = services;
  return async (app: FastifyInstance) => {
    app.get<{ Querystring: { email: string } }>(
      '/v1/auth/register',
      {
        schema: {
          summary: 'Send a 6-digit verification code to an e-mail address',
          tags: ['auth'],
          querystring: { type: 'object', required: ['email'], properties: { email: emailQuery } },
          response: {
            200: {
              type: 'object',
              properties: {
                message: { type: 'string' },
                email: { type: 'string' },
                expiresInSeconds: { type: 'integer' },
              },
            },
            ...errorResponses(400, 404, 405, 429, 500),
          },
        },
      },
      async (request) => {
        const { expiresInSeconds } = await auth.register(request.query.email, request.ip);
        return {
          message: 'Check your email for verification code.',
          email: request.query.email.trim().toLowerCase(),
          expiresInSeconds,
        };
      },
    );

    app.get<{ Querystring: { email: string; code: string } }>(
      '/v1/auth/verify',
      {
        schema: {
          summary: 'Exchange the e-mailed code for an API key (shown only once)',
          tags: ['auth'],
          querystring: {
            type: 'object',
            required: ['email', 'code'],
            properties: { email: emailQuery, code: { type: 'string', pattern: '^[0-9]{6}$', description: '6 digits' } },
          },
          response: {
            200: {
              type: 'object',
              properties: {
                apiKey: { type: 'string' },
                keyId: { type: 'string' },
                email: { type: 'string' },
                createdAt: { type: 'string', format: 'date-time' },
                message: { type: 'string' },
              },
            },
            ...errorResponses(400, 429, 500),
          },
        },
      },
      async (request, reply) => {
        reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache');
        const issued = await auth.verify(request.query.email, request.query.code, request.ip);
        return { ...issued, message: 'Store this API key now: it is shown only once.' };
      },
    );

    app.get(
      '/v1/auth/keys',
      {
        config: { auth: true },
        schema: {
          summary: "List the keys issued to the calling key's e-mail address",
          tags: ['auth'],
          security: [{ bearerAuth: [] }],
          response: {
            200: {
              type: 'object',
              properties: {
                keys: {
                  type: 'array',
                  items: {
                    type: 'object',
                    properties: {
                      keyId: { type: 'string' },
                      createdAt: { type: 'string' },
                      lastUsedAt: { type: ['string', 'null'] },
                      revokedAt: { type: ['string', 'null'] },
                      current: { type: 'boolean' },
                    },
                  },
                },
              },
            },
            ...errorResponses(401, 500),
          },
        },
      },
      async (request, reply) => {
        reply.header('Cache-Control', 'no-store');
        return { keys: await auth.listKeys(request.apiKey!) };
      },
    );

    app.delete<{ Params: { keyId: string } }>(
      '/v1/auth/keys/:keyId',
      {
        config: { auth: true },
        schema: {
          summary: 'Revoke a key (the calling key itself is allowed)',
          tags: ['auth'],
          security: [{ bearerAuth: [] }],
          params: { type: 'object', required: ['keyId'], properties: { keyId: { type: 'string', maxLength: 64 } } },
          response: { 204: { description: 'Revoked', type: 'null' }, ...errorResponses(401, 404, 500) },
        },
      },
      async (request, reply) => {
        if (!(await auth.revokeKey(request.apiKey!, request.params.keyId))) {
          throw new FolioError('NOT_FOUND', 'No such key for this account');
        }
        return reply.code(204).send();
      },
    );
  };
}
