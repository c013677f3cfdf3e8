/**
 * POST /v1/sign and GET /v1/verify/key (CONTRACT §5). Thin: validates the request shape, resolves the
 * document and hands it to the signing engine in src/sign/.
 */
import type { FastifyInstance } from 'fastify';
import { FolioError } from '../../errors.js';
import { errorResponses } from '../envelope.js';
import type { Services } from '../../services.js';
import { describeIdentity } from '../../sign/index.js';

const publicKeySchema = {
  type: 'object',
  required: ['algorithm', 'certificate', 'publicKey', 'fingerprint', 'validFrom', 'validTo', 'issuer', 'subject'],
  properties: {
    algorithm: { type: 'string', description: 'Signature algorithm of the signing key' },
    certificate: { type: 'string', description: 'Signing certificate (PEM)' },
    publicKey: { type: 'string', description: 'Public key (PEM, SubjectPublicKeyInfo)' },
    fingerprint: { type: 'string', description: 'SHA-256 of the certificate, colon-separated hex' },
    validFrom: { type: 'string', format: 'date-time' },
    validTo: { type: 'string', format: 'date-time' },
    issuer: { type: 'string' },
    subject: { type: 'string' },
  },
} as const;

export function signRoutes(services: Services) {
  return async (app: FastifyInstance) => {
    app.route({
      method: 'GET',
      url: '/v1/verify/key',
      config: { auth: true, endpoint: 'verify-key' },
      schema: {
        summary: "The service's signing certificate and public key",
        tags: ['sign'],
        response: { 200: publicKeySchema, ...errorResponses(401, 429, 500) },
      },
      handler: async () => {
        if (!services.signing) throw new FolioError('INTERNAL_ERROR', 'No signing identity is configured');
        return describeIdentity(services.signing);
      },
    });
  };
}
