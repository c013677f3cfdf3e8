/** Auth routes (docs/api.md § Getting a key): register and verify need no key; key management does. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { FolioError } from '../errors.js';
import { errorResponses, Type } from '../http/schema.js';
import { exemptFromExchangeTimeout } from '../http/server-limits.js';
import type { Services } from '../http/capability.js';
import { KeyParams, KeysResponse, RegisterQuery, RegisterResponse, VerifyEmailQuery, VerifyEmailResponse } from './schema.js';

export function authRoutes(services: Services) {
  const { auth } = services;
  return async (root: FastifyInstance) => {
    const app = root.withTypeProvider<TypeBoxTypeProvider>();
    app.get(
      '/v1/auth/register',
      {
        // HEAD would run the handler (and send a code): 405 with `Allow: GET` instead.
        exposeHeadRoute: false,
        schema: {
          operationId: 'register',
          summary: 'Send a 6-digit verification code to an e-mail address',
          tags: ['auth'],
          querystring: RegisterQuery,
          response: { 200: RegisterResponse, ...errorResponses(400, 429, 500, 503) },
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

    app.get(
      '/v1/auth/verify',
      {
        // HEAD would run the handler (and use the code up for a key nobody sees): 405 with `Allow: GET` instead.
        exposeHeadRoute: false,
        schema: {
          operationId: 'verifyEmail',
          summary: 'Exchange the e-mailed code for an API key (shown only once)',
          tags: ['auth'],
          querystring: VerifyEmailQuery,
          response: { 200: VerifyEmailResponse, ...errorResponses(400, 429, 500, 503) },
        },
      },
      async (request, reply) => {
        // The key is shown only in this answer: a 503 from the exchange timeout while the key is still
        // being issued would lose it (and the code with it).
        exemptFromExchangeTimeout(request.raw);
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
          operationId: 'listKeys',
          summary: "List the keys issued to the calling key's e-mail address",
          tags: ['auth'],
          response: { 200: KeysResponse, ...errorResponses(401, 429, 500, 503) },
        },
      },
      async (request, reply) => {
        reply.header('Cache-Control', 'no-store');
        return { keys: await auth.listKeys(request.apiKey!) };
      },
    );

    app.delete(
      '/v1/auth/keys/:keyId',
      {
        config: { auth: true },
        schema: {
          operationId: 'revokeKey',
          summary: 'Revoke a key (the calling key itself is allowed)',
          tags: ['auth'],
          params: KeyParams,
          response: { 204: Type.Null({ description: 'Revoked' }), ...errorResponses(401, 404, 429, 500, 503) },
        },
      },
      async (request, reply) => {
        if (!(await auth.revokeKey(request.apiKey!, request.params.keyId))) {
          throw new FolioError('NOT_FOUND', 'No such key for this account');
        }
        return reply.code(204).send(null);
      },
    );
  };
}
