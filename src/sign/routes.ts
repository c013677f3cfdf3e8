/**
 * POST /v1/sign and GET /v1/verify/key (docs/api.md § Sign). Thin: one check of the request (the schema, then
 * request-check.ts for what a schema cannot say), the level resolved and the document sniffed once, a DOCX
 * converted by the office engine, then one signing job on the engine pool that takes all of it as checked.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { FolioError, type ErrorDetail } from '../errors.js';
import { errorResponses } from '../http/schema.js';
import { toFolioError } from '../http/envelope.js';
import { abandonSignal } from '../http/abandon.js';
import type { Services } from '../http/capability.js';
import { resolveDocumentSource } from '../fetch/document-source.js';
import { describeSigningKey, resolveLevel } from './index.js';
import { caRoutes } from './ca-routes.js';
import { signInputKind } from './input-kind.js';
import { checkSignRequest, patternIssue } from './request-check.js';
import { PublicKeyResponse, SignRequest, SignResponse } from './schema.js';

/** The schema's verdict on a body it refused, one detail per field; a pattern's detail says what the field must be. */
function schemaVerdict(error: NonNullable<FastifyRequest['validationError']>): { message: string; details: ErrorDetail[] } {
  const refused = toFolioError(error);
  const validation = (error as { validation?: Array<{ keyword?: string }> }).validation ?? [];
  const details = (refused.details ?? []).map((d, i) => {
    const issue = validation[i]?.keyword === 'pattern' ? patternIssue(d.field) : undefined;
    return issue ? { field: d.field, issue } : d;
  });
  return { message: refused.message, details };
}

/**
 * The buffers of `parts` that the route owns whole (decoded, fetched or converted for this request, not a
 * view into Node's shared pool): moved to the engine thread, not copied. The route does not read them again.
 */
function movable(...parts: Array<Uint8Array | undefined>): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  for (const p of parts) {
    if (p && p.buffer instanceof ArrayBuffer && p.byteOffset === 0 && p.byteLength === p.buffer.byteLength) buffers.add(p.buffer);
  }
  return [...buffers];
}

export function signRoutes(services: Services) {
  return async (root: FastifyInstance) => {
    const app = root.withTypeProvider<TypeBoxTypeProvider>();
    app.route({
      method: 'POST',
      url: '/v1/sign',
      config: { auth: true, documentEndpoint: true, endpoint: 'sign' },
      schema: {
        operationId: 'signDocument',
        summary: 'Sign a PDF or DOCX: audit-trail pages, embedded audit-trail.json and a PAdES signature',
        description:
          'The PDF is kept byte for byte and extended by one incremental update (earlier signatures stay valid); a DOCX is converted to PDF first. ' +
          'The signature is PAdES (ETSI.CAdES.detached, SHA-256, ESS signing-certificate-v2) at the requested `level`: B-B, B-T (RFC 3161 signature timestamp), ' +
          'B-LT (plus a /DSS with chain, OCSP and CRL data, in a further incremental update) or B-LTA (plus a document timestamp); ' +
          'by default B-T when the server has a TSA_URL, else B-B.',
        tags: ['sign'],
        body: SignRequest,
        response: { 200: SignResponse, ...errorResponses(400, 401, 413, 415, 422, 429, 500, 503, 504) },
      },
      // The schema's errors reach the handler, so that one answer lists them with request-check.ts's.
      attachValidation: true,
      handler: async (request, reply) => {
        const body = request.body;
        const checked = checkSignRequest(body, request.validationError ? schemaVerdict(request.validationError) : undefined);
        if (!services.signing) throw new FolioError('INTERNAL_ERROR', 'No signing identity is configured');
        // A level this server cannot give is refused before the document is fetched or converted.
        const level = resolveLevel(body.level, {
          tsaUrl: services.config.tsaUrl,
          identity: services.signing,
          urlFetchAllowlist: services.config.urlFetchAllowlist,
        });
        const document = await resolveDocumentSource(body.document, services.fetcher);
        const kind = signInputKind(document);
        const signal = abandonSignal(reply);
        let pdfOfDocx: Uint8Array | undefined;
        if (kind === 'docx') {
          if (!services.office) throw new FolioError('SERVICE_UNAVAILABLE', 'DOCX conversion is not available on this server', { retryAfter: 30 });
          // A DOCX becomes a PDF in the office engine's supervised processes before the signing job.
          pdfOfDocx = await services.office.docxToPdf(document, {}, { signal, deadline: request.deadline });
        }
        const result = await services.enginePool.run(
          'sign.seal',
          {
            document,
            ...(pdfOfDocx ? { pdfOfDocx } : {}),
            signer: checked.signer,
            auditTrail: checked.auditTrail,
            ...(body.eventId !== undefined ? { eventId: body.eventId } : {}),
            ...(body.metadata !== undefined ? { metadata: body.metadata } : {}),
            auditPages: body.certificate?.enabled ?? true,
            level,
          },
          { signal, deadline: request.deadline, transfer: movable(document, pdfOfDocx) },
        );
        if (result.timestampSkipped !== undefined) {
          request.log.warn({ reason: result.timestampSkipped }, 'TSA failed; signed without a timestamp (TSA_OPTIONAL)');
        }
        return {
          document: {
            base64: Buffer.from(result.pdf.buffer, result.pdf.byteOffset, result.pdf.byteLength).toString('base64'),
            contentType: 'application/pdf' as const,
          },
        };
      },
    });

    // The identity is fixed for the life of the process (a new key needs a restart): described and serialised
    // once by the route's own schema (the same bytes as returning the object), not per request. Serialising
    // the PEM certificate (escaping its newlines) and parsing it cost more than the rest of the request.
    let keyJson: string | undefined;
    app.route({
      method: 'GET',
      url: '/v1/verify/key',
      config: { auth: true, endpoint: 'verify-key' },
      schema: {
        operationId: 'getSigningKey',
        summary: "The service's signing certificate and public key",
        tags: ['sign'],
        response: { 200: PublicKeyResponse, ...errorResponses(401, 429, 500) },
      },
      handler: (_request, reply: FastifyReply) => {
        keyJson ??= String(reply.serialize(describeSigningKey(services.signing!)));
        reply.type('application/json; charset=utf-8').send(keyJson);
      },
    });

    const signing = services.signing;
    if (signing?.ca) caRoutes(root, { ...signing, ca: signing.ca });
  };
}
