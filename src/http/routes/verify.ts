/**
 * POST /v1/verify (CONTRACT §6). Thin: takes the PDF from JSON `{document}` or a multipart `file`, and hands
 * it to the verifier in src/verify/ with the trust store built once from the service's signing identity and
 * TRUST_ANCHORS. Every readable PDF answers 200, also when its signatures fail.
 */
import type { FastifyInstance } from 'fastify';
import { errorResponses } from '../envelope.js';
import { readSingleFile } from '../multipart-file.js';
import { documentSourceSchema, resolveDocumentSource, type DocumentSource } from '../../fetch/document-source.js';
import type { Services } from '../../services.js';
import { loadTrustStore } from '../../verify/index.js';
import { abandonSignal } from '../abandon.js';
import { FolioError } from '../../errors.js';

const signerSchema = {
  type: ['object', 'null'],
  properties: {
    name: { type: ['string', 'null'] },
    email: { type: ['string', 'null'] },
    subject: { type: 'string' },
    issuer: { type: 'string' },
    serialNumber: { type: 'string' },
    notBefore: { type: 'string', format: 'date-time' },
    notAfter: { type: 'string', format: 'date-time' },
    fingerprint: { type: 'string', description: 'SHA-256 of the certificate, colon-separated hex' },
  },
} as const;

const detailSchema = {
  type: 'object',
  properties: {
    object: { type: 'integer' },
    revision: { type: 'integer', description: '1-based revision that made the change' },
    kind: { type: 'string', enum: ['added', 'changed', 'deleted', 're-pointed', 'emptied', 'structure'] },
    level: { type: 'string', enum: ['NONE', 'SIGNATURES_ONLY', 'FORM_FILL', 'ANNOTATIONS', 'OTHER'] },
    issue: { type: 'string' },
    attack: {
      type: 'string',
      enum: ['EVIL_ANNOTATION', 'SIGNATURE_APPEARANCE_WITHOUT_SIGNATURE'],
      description: 'EVIL_ANNOTATION: a visible annotation added after signing; SIGNATURE_APPEARANCE_WITHOUT_SIGNATURE: a signature field drawing an appearance with no signature behind it (the sneaky-signature attack)',
    },
    field: { type: 'string' },
  },
} as const;

const signatureSchema = {
  type: 'object',
  properties: {
    fieldName: { type: ['string', 'null'], description: 'null for a signature dictionary no field points at (orphaned)' },
    subFilter: { type: ['string', 'null'] },
    digestAlgorithm: { type: ['string', 'null'] },
    signedAt: { type: ['string', 'null'], format: 'date-time' },
    timestamp: {
      type: 'object',
      properties: { time: { type: 'string' }, valid: { type: 'boolean' }, trusted: { type: 'boolean' }, tsaSubject: { type: ['string', 'null'] } },
    },
    signer: signerSchema,
    byteRange: { type: 'array', items: { type: 'number' } },
    coverage: { type: 'string', enum: ['ENTIRE_FILE', 'ENTIRE_REVISION', 'PARTIAL', 'UNCLEAR'] },
    integrity: { type: 'object', properties: { digestMatches: { type: 'boolean' }, signatureValid: { type: 'boolean' } } },
    certificate: {
      type: 'object',
      properties: { chainValid: { type: 'boolean' }, trusted: { type: 'boolean' }, validAtSigningTime: { type: 'boolean' } },
    },
    modificationsAfter: {
      type: 'object',
      properties: {
        level: { type: 'string', enum: ['NONE', 'SIGNATURES_ONLY', 'FORM_FILL', 'ANNOTATIONS', 'OTHER'] },
        details: { type: 'array', items: detailSchema },
      },
    },
    docMdp: {
      type: 'object',
      properties: {
        permission: { type: 'integer', enum: [1, 2, 3] },
        respected: { type: 'boolean' },
        lockedFields: { anyOf: [{ type: 'array', items: { type: 'string' } }, { type: 'string', enum: ['ALL'] }] },
      },
    },
    indication: { type: 'string', enum: ['TOTAL_PASSED', 'INDETERMINATE', 'TOTAL_FAILED'] },
    subIndication: { type: 'string' },
    issuedByThisService: { type: 'boolean' },
    revision: { type: 'integer', description: '1-based revision the signature covers' },
    certifying: { type: 'boolean' },
    orphaned: { type: 'boolean' },
    valid: { type: 'boolean' },
    problems: { type: 'array', items: { type: 'string' } },
    warnings: { type: 'array', items: { type: 'string' } },
  },
} as const;

const verifyResponseSchema = {
  type: 'object',
  required: ['valid', 'indication', 'reason', 'signatureCount', 'signatures', 'document'],
  properties: {
    valid: { type: 'boolean' },
    indication: { type: 'string', enum: ['TOTAL_PASSED', 'INDETERMINATE', 'TOTAL_FAILED', 'NO_SIGNATURE_FOUND'] },
    reason: { type: 'string' },
    signatureCount: { type: 'integer' },
    signer: {
      type: 'object',
      properties: { name: { type: ['string', 'null'] }, email: { type: ['string', 'null'] }, signedAt: { type: ['string', 'null'] } },
    },
    signatures: { type: 'array', items: signatureSchema },
    unsignedSignatureFields: {
      type: 'array',
      items: { type: 'object', properties: { fieldName: { type: 'string' }, hasAppearance: { type: 'boolean' } } },
    },
    document: {
      type: 'object',
      properties: { sha256: { type: 'string' }, revisions: { type: 'integer' }, size: { type: 'integer' } },
    },
    auditTrail: {
      type: 'object',
      additionalProperties: true,
      description: "Folio's embedded audit-trail.json, plus hashMatches and coveredBySignature",
      properties: { hashMatches: { type: 'boolean' }, coveredBySignature: { type: 'boolean' } },
    },
  },
} as const;

export function verifyRoutes(services: Services) {
  // Read once at start-up: a TRUST_ANCHORS file that cannot be read stops the server with a clear error
  // instead of failing every request (the engine workers rebuild the same store from the same sources).
  try {
    loadTrustStore({
      rootCertificatePem: services.signing?.rootCertificatePem,
      certificatePem: services.signing?.certificatePem,
      trustAnchorsPath: services.config.trustAnchors,
    });
  } catch (e) {
    throw new Error(`TRUST_ANCHORS (${services.config.trustAnchors}) could not be read as PEM certificates: ${(e as Error).message}`);
  }
  return async (app: FastifyInstance) => {
    app.route<{ Body: { document?: DocumentSource } }>({
      method: 'POST',
      url: '/v1/verify',
      config: { auth: true, documentEndpoint: true, endpoint: 'verify' },
      schema: {
        summary: 'Validate the signatures of a PDF and what changed after each',
        description:
          'Send JSON `{document: {base64}|{url}}` or multipart/form-data with one `file`. Answers 200 for every readable PDF, ' +
          'also when signatures fail: `valid` is true only when every signature is intact, covers a whole revision, and ' +
          'nothing changed afterwards beyond further signatures or what a certification (DocMDP) permits. Trust is reported apart.',
        tags: ['verify'],
        consumes: ['application/json', 'multipart/form-data'],
        body: {
          content: {
            'application/json': {
              schema: {
                type: 'object',
                additionalProperties: false,
                required: ['document'],
                properties: { document: documentSourceSchema },
              },
            },
          },
        },
        response: { 200: verifyResponseSchema, ...errorResponses(400, 401, 413, 415, 422, 429, 500, 503, 504) },
      },
      handler: async (request, reply) => {
        let bytes: Uint8Array;
        if (request.isMultipart()) bytes = (await readSingleFile(request)).bytes;
        else if (request.body && typeof request.body === 'object') bytes = await resolveDocumentSource(request.body.document, services.fetcher);
        else throw new FolioError('UNSUPPORTED_MEDIA_TYPE', 'Send JSON {"document": {...}} or multipart/form-data with a "file" field');
        return services.enginePool.run('verify.pdf', { bytes }, { signal: abandonSignal(reply) });
      },
    });
  };
}
