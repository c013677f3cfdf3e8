/**
 * POST /v1/verify (docs/api.md § Verify). Thin: takes the PDF from JSON `{document}` (its base64 decoded by the body
 * parser) or a multipart `file` (FileUpload, one compiled validator), and moves it to the verifier in the
 * engine pool, whose workers build the trust store from the service's signing identity and TRUST_ANCHORS.
 * Every readable PDF answers 200, also when its signatures fail.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { FolioError } from '../errors.js';
import { errorResponses, FileUpload } from '../http/schema.js';
import { readForm } from '../http/multipart-form.js';
import { movableBuffers } from '../http/body-buffer.js';
import { abandonSignal } from '../http/abandon.js';
import type { Services } from '../http/capability.js';
import { resolveDocumentSource } from '../fetch/document-source.js';
import { loadTrustStore } from './index.js';
import { VerifyRequest, VerifyResponse, type VerifyRequestBody } from './schema.js';

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
  return async (root: FastifyInstance) => {
    const app = root.withTypeProvider<TypeBoxTypeProvider>();
    app.route({
      method: 'POST',
      url: '/v1/verify',
      config: { auth: true, documentEndpoint: true, endpoint: 'verify', multipartBody: FileUpload },
      schema: {
        operationId: 'verifyDocument',
        summary: 'Validate the signatures of a PDF and what changed after each',
        description:
          'Send JSON `{document: {base64}|{url}}` or multipart/form-data with one `file`. Answers 200 for every readable PDF, ' +
          'also when signatures fail: `valid` is true only when every signature is intact, covers a whole revision, and ' +
          'nothing changed afterwards beyond further signatures or what a certification (DocMDP) permits. Trust is reported apart.',
        tags: ['verify'],
        consumes: ['application/json', 'multipart/form-data'],
        body: { content: { 'application/json': { schema: VerifyRequest } } },
        response: { 200: VerifyResponse, ...errorResponses(400, 401, 413, 415, 422, 429, 500, 503, 504) },
      },
      handler: async (request, reply) => {
        let bytes: Uint8Array;
        const body = request.body as VerifyRequestBody | undefined;
        if (request.isMultipart()) bytes = (await readForm(request, FileUpload)).form.file.bytes;
        else if (body && typeof body === 'object') bytes = await resolveDocumentSource(body.document, services.fetcher);
        else throw new FolioError('UNSUPPORTED_MEDIA_TYPE', 'Send JSON {"document": {...}} or multipart/form-data with a "file" field');
        // The bytes (the upload, or the base64 the body parser decoded) are moved to the thread, not copied.
        return services.enginePool.run(
          'verify.pdf',
          { bytes },
          { signal: abandonSignal(reply), deadline: request.deadline, transfer: movableBuffers(bytes) },
        );
      },
    });
  };
}
