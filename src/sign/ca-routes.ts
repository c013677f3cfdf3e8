/**
 * The public face of Folio's generated CA (no API key: relying parties, validators and viewers fetch these
 * from the URLs in the signing certificate): its certificate, its CRL, and its OCSP responder (RFC 6960,
 * POST and the GET form of Appendix A.1). Registered only when the identity is the generated one.
 * Each answer is one ECDSA signature over a few hundred bytes; requests are capped at 16 KB.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '../http/schema.js';
import { errorResponses } from '../http/schema.js';
import { FolioError } from '../errors.js';
import type { SigningIdentity } from './identity-types.js';
import { answerOcspRequest, buildCrl, MAX_OCSP_REQUEST_BYTES, type CertificateAuthority } from './ca.js';
import { CA_PATHS } from './identity.js';

/** A CRL is re-signed at most this often (it is valid for a week). */
const CRL_REFRESH_MS = 60 * 60_000;
const binary = (description: string) => Type.String({ format: 'binary', description });

export function caRoutes(app: FastifyInstance, signing: SigningIdentity & { ca: CertificateAuthority }): void {
  const ca = signing.ca;
  const issued = [signing.chainDer[0]!];
  let crl: { der: Buffer; at: number } | undefined;
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();

  app.addContentTypeParser('application/ocsp-request', { parseAs: 'buffer', bodyLimit: MAX_OCSP_REQUEST_BYTES }, (_req, body, done) =>
    done(null, body),
  );

  typed.route({
    method: 'GET',
    url: CA_PATHS.certificate,
    config: { endpoint: 'sign-ca' },
    schema: {
      operationId: 'getSigningCaCertificate',
      summary: "The certificate of Folio's own signing CA (DER)",
      description: 'The root that issued the generated signing certificate; named as CA Issuers in its Authority Information Access.',
      tags: ['sign'],
      response: {
        200: { description: 'DER certificate', content: { 'application/pkix-cert': { schema: binary('DER X.509 certificate') } } },
        ...errorResponses(500),
      },
    },
    handler: async (_request, reply) =>
      reply
        .header('content-type', 'application/pkix-cert')
        .header('cache-control', 'public, max-age=86400')
        .send(Buffer.from(ca.certificateDer) as never),
  });

  typed.route({
    method: 'GET',
    url: CA_PATHS.crl,
    config: { endpoint: 'sign-ca' },
    schema: {
      operationId: 'getSigningCaCrl',
      summary: "The certificate revocation list of Folio's own signing CA (DER)",
      description: 'Signed by the CA, valid for 7 days, re-issued hourly. Named in the signing certificate’s CRL Distribution Points.',
      tags: ['sign'],
      response: {
        200: { description: 'DER CRL', content: { 'application/pkix-crl': { schema: binary('DER CertificateList') } } },
        ...errorResponses(500),
      },
    },
    handler: async (_request, reply) => {
      if (!crl || Date.now() - crl.at > CRL_REFRESH_MS) crl = { der: Buffer.from(buildCrl(ca)), at: Date.now() };
      return reply
        .header('content-type', 'application/pkix-crl')
        .header('cache-control', 'public, max-age=3600')
        .send(crl.der as never);
    },
  });

  const ocspAnswer = (der: Uint8Array) => Buffer.from(answerOcspRequest(ca, issued, der));
  const ocspResponse = {
    200: {
      description: 'An OCSP response (also for a malformed request or another issuer: the OCSP status says so, RFC 6960 §2.3)',
      content: { 'application/ocsp-response': { schema: binary('DER OCSPResponse') } },
    },
  };

  typed.route({
    method: 'POST',
    url: CA_PATHS.ocsp,
    config: { endpoint: 'sign-ca' },
    bodyLimit: MAX_OCSP_REQUEST_BYTES,
    // The DER body is checked by the OCSP parser; the schema below is for the OpenAPI document only.
    validatorCompiler: () => () => true,
    schema: {
      operationId: 'postSigningCaOcsp',
      summary: "OCSP responder of Folio's own signing CA (RFC 6960)",
      description:
        'Named in the signing certificate’s Authority Information Access. `good` for the certificates this CA issued, `unknown` for other serials.',
      tags: ['sign'],
      body: { content: { 'application/ocsp-request': { schema: binary('DER OCSPRequest') } } } as never,
      response: { ...ocspResponse, ...errorResponses(413, 415, 500) },
    },
    handler: async (request, reply) =>
      reply
        .header('content-type', 'application/ocsp-response')
        .header('cache-control', 'no-store')
        .send(ocspAnswer(request.body as Buffer) as never),
  });

  typed.route({
    method: 'GET',
    url: `${CA_PATHS.ocsp}/:request`,
    config: { endpoint: 'sign-ca' },
    schema: {
      operationId: 'getSigningCaOcsp',
      summary: "OCSP responder of Folio's own signing CA, GET form (RFC 6960 Appendix A.1)",
      tags: ['sign'],
      params: Type.Object({ request: Type.String({ maxLength: 24_000, description: 'URL-encoded base64 of the DER OCSPRequest' }) }),
      response: { ...ocspResponse, ...errorResponses(400, 500) },
    },
    handler: async (request, reply) => {
      const text = request.params.request;
      if (!/^[A-Za-z0-9+/=_-]+$/.test(text)) {
        throw new FolioError('VALIDATION_ERROR', 'The OCSP request must be base64', { details: [{ field: 'request', issue: 'not base64' }] });
      }
      return reply
        .header('content-type', 'application/ocsp-response')
        .header('cache-control', 'public, max-age=300')
        .send(ocspAnswer(Buffer.from(text, 'base64')) as never);
    },
  });
}
