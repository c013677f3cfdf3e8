/**
 * POST /v1/annotate and POST /v1/annotate/fields (docs/api.md § Annotate). Thin: the schema settles the request shape
 * (unknown properties → 400), the document source is resolved (its base64 decoded by the body parser, or
 * fetched under the fetch rules) and moved to the annotate engine in the engine pool; `?to=pdf` hands the
 * filled DOCX to the office engine.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { FolioError } from '../errors.js';
import { DOCX_MIME, errorResponses } from '../http/schema.js';
import { abandonSignal } from '../http/abandon.js';
import { movableBuffers } from '../http/body-buffer.js';
import type { Services } from '../http/capability.js';
import { resolveDocumentSource } from '../fetch/document-source.js';
import type { AnnotateField } from './index.js';
import { AnnotateQuery, AnnotateRequest, AnnotateResponse, FieldsRequest, FieldsResponse } from './schema.js';

export function annotateRoutes(services: Services) {
  return async (root: FastifyInstance) => {
    const app = root.withTypeProvider<TypeBoxTypeProvider>();
    app.route({
      method: 'POST',
      url: '/v1/annotate',
      config: { auth: true, documentEndpoint: true, endpoint: 'annotate' },
      schema: {
        operationId: 'annotateDocument',
        summary: 'Fill a DOCX template (content controls and {{placeholders}})',
        description:
          'Fills Word content controls and {{name}} placeholders in the body, headers, footers, footnotes and endnotes with text, images, signatures, tables, checkboxes, dates, HTML and links. Answers the document and a report of what was and was not filled.',
        tags: ['annotate'],
        querystring: AnnotateQuery,
        body: AnnotateRequest,
        response: { 200: AnnotateResponse, ...errorResponses(400, 401, 413, 415, 422, 429, 500, 503, 504) },
      },
      handler: async (request, reply) => {
        const q = request.query;
        const to = q.to ?? 'docx';
        if (to === 'pdf' && !services.office) {
          throw new FolioError('SERVICE_UNAVAILABLE', 'PDF output is not available on this instance', { retryAfter: 30 });
        }
        const template = await resolveDocumentSource(request.body.document, services.fetcher);
        const result = await services.enginePool.run(
          'annotate.fill',
          {
            template,
            fields: request.body.fields as AnnotateField[],
            strict: q.strict === 'true',
            // A PDF has no content controls; flattening first also spares LibreOffice's handling of block
            // controls (it prints a hyperlink inside one as its field code).
            flatten: q.flatten === 'true' || to === 'pdf',
          },
          // The template (decoded by the body parser, or fetched) is moved to the thread, not copied.
          { signal: abandonSignal(reply), deadline: request.deadline, transfer: movableBuffers(template) },
        );
        // The filled DOCX is Folio's own package (the template was bounded where it came in): the office
        // engine skips the outside-input checks (DocxToPdfOptions.origin).
        const run = { signal: abandonSignal(reply), deadline: request.deadline };
        const out = to === 'pdf' ? await services.office!.docxToPdf(result.docx, { origin: 'folio' }, run) : result.docx;
        reply.header('Cache-Control', 'no-store');
        return {
          document: {
            base64: Buffer.from(out.buffer, out.byteOffset, out.byteLength).toString('base64'),
            contentType: to === 'pdf' ? 'application/pdf' : DOCX_MIME,
          },
          report: result.report,
        };
      },
    });

    app.route({
      method: 'POST',
      url: '/v1/annotate/fields',
      config: { auth: true, documentEndpoint: true, endpoint: 'annotate' },
      schema: {
        operationId: 'listTemplateFields',
        summary: "List a DOCX template's fields",
        description: 'Content controls (one entry each) and {{placeholders}} (once per part) with where they are.',
        tags: ['annotate'],
        body: FieldsRequest,
        response: { 200: FieldsResponse, ...errorResponses(400, 401, 413, 415, 422, 429, 500, 503, 504) },
      },
      handler: async (request, reply) => {
        const template = await resolveDocumentSource(request.body.document, services.fetcher);
        reply.header('Cache-Control', 'no-store');
        return {
          fields: await services.enginePool.run(
            'annotate.fields',
            { template },
            { signal: abandonSignal(reply), deadline: request.deadline, transfer: movableBuffers(template) },
          ),
        };
      },
    });
  };
}
