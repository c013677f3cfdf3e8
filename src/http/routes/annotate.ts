/**
 * POST /v1/annotate and POST /v1/annotate/fields (CONTRACT §4). Thin: the JSON schema settles the request
 * shape (unknown properties → 400), the document source is resolved under the fetch rules, and the annotate
 * engine does the rest; `?to=pdf` hands the filled DOCX to the office engine.
 */
import type { FastifyInstance } from 'fastify';
import { FolioError } from '../../errors.js';
import { errorResponses } from '../envelope.js';
import type { Services } from '../../services.js';
import { documentSourceSchema, resolveDocumentSource, type DocumentSource } from '../../fetch/document-source.js';
import { FIELD_TYPES, type AnnotateField } from '../../annotate/index.js';
import { abandonSignal } from '../abandon.js';

const DOCX_MIME = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

const sizeSchema = { anyOf: [{ type: 'number', exclusiveMinimum: 0, maximum: 20000 }, { type: 'string', pattern: '^\\s*\\d+(\\.\\d+)?\\s*(px)?\\s*$', maxLength: 20 }] };

const fieldSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['type', 'value'],
  description: 'Exactly one of id and group.',
  properties: {
    id: { type: 'string', minLength: 1, maxLength: 512, description: "Matches the control's w:id, then its w:tag (or JSON fieldId), then its w:alias; and {{id}} placeholders" },
    group: { type: 'string', minLength: 1, maxLength: 512, description: "Matches every control whose JSON w:tag has this group" },
    type: { type: 'string', enum: [...FIELD_TYPES] },
    value: {
      description:
        'text/html: string; image/signature: data URI, base64 or http(s) URL (signature: or a name, typed); table: string[][]; checkbox: boolean; date: ISO 8601 date; link: {url, text}',
    },
    options: {
      type: 'object',
      additionalProperties: false,
      properties: {
        keepTextNodeStyles: { type: 'boolean', default: true },
        dimensions: { type: 'object', additionalProperties: false, properties: { width: sizeSchema, height: sizeSchema } },
        copyRowStyle: { type: 'boolean' },
        tableIndex: { type: 'integer', minimum: 0, maximum: 1000 },
        flatten: { type: 'boolean' },
        format: { type: 'string', maxLength: 100 },
        locale: { type: 'string', maxLength: 35 },
        alt: { type: 'string', maxLength: 1000 },
        arcElement: { type: 'object' },
        topLabel: { type: 'object' },
        bottomLabel: { type: 'object' },
      },
    },
  },
  oneOf: [{ required: ['id'] }, { required: ['group'] }],
} as const;

interface AnnotateBody {
  document: DocumentSource;
  fields: AnnotateField[];
}

interface AnnotateQuery {
  to?: 'docx' | 'pdf';
  strict?: 'true' | 'false';
  flatten?: 'true' | 'false';
}

export function annotateRoutes(services: Services) {
  return async (app: FastifyInstance) => {
    app.route<{ Body: AnnotateBody; Querystring: AnnotateQuery }>({
      method: 'POST',
      url: '/v1/annotate',
      config: { auth: true, documentEndpoint: true, endpoint: 'annotate' },
      schema: {
        summary: 'Fill a DOCX template (content controls and {{placeholders}})',
        description:
          'Fills Word content controls and {{name}} placeholders in the body, headers, footers, footnotes and endnotes with text, images, signatures, tables, checkboxes, dates, HTML and links. Answers the document and a report of what was and was not filled.',
        tags: ['annotate'],
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            to: { type: 'string', enum: ['docx', 'pdf'], default: 'docx' },
            strict: { type: 'string', enum: ['true', 'false'], description: 'A request field that matches nothing is a 422' },
            flatten: { type: 'string', enum: ['true', 'false'], description: 'Replace every content control by its content' },
          },
        },
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['document', 'fields'],
          properties: {
            document: documentSourceSchema,
            fields: { type: 'array', maxItems: 5000, items: fieldSchema },
          },
        },
        response: {
          200: {
            description: 'The filled document and the report',
            type: 'object',
            properties: {
              document: { type: 'object', properties: { base64: { type: 'string' }, contentType: { type: 'string' } } },
              report: {
                type: 'object',
                properties: {
                  filled: {
                    type: 'array',
                    items: { type: 'object', properties: { id: { type: 'string' }, type: { type: 'string' }, occurrences: { type: 'integer' } } },
                  },
                  unmatched: { type: 'array', items: { type: 'string' } },
                  unfilled: { type: 'array', items: { type: 'string' } },
                  warnings: { type: 'array', items: { type: 'string' } },
                },
              },
            },
          },
          ...errorResponses(400, 401, 413, 415, 422, 429, 500, 503, 504),
        },
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
            fields: request.body.fields,
            strict: q.strict === 'true',
            // A PDF has no content controls; flattening first also spares LibreOffice's handling of block
            // controls (it prints a hyperlink inside one as its field code).
            flatten: q.flatten === 'true' || to === 'pdf',
          },
          { signal: abandonSignal(reply) },
        );
        const out = to === 'pdf' ? await services.office!.docxToPdf(result.docx) : result.docx;
        reply.header('Cache-Control', 'no-store');
        return {
          document: { base64: Buffer.from(out.buffer, out.byteOffset, out.byteLength).toString('base64'), contentType: to === 'pdf' ? 'application/pdf' : DOCX_MIME },
          report: result.report,
        };
      },
    });

    app.route<{ Body: { document: DocumentSource } }>({
      method: 'POST',
      url: '/v1/annotate/fields',
      config: { auth: true, documentEndpoint: true, endpoint: 'annotate' },
      schema: {
        summary: "List a DOCX template's fields",
        description: 'Content controls (one entry each) and {{placeholders}} (once per part) with where they are.',
        tags: ['annotate'],
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['document'],
          properties: { document: documentSourceSchema },
        },
        response: {
          200: {
            description: 'The fields',
            type: 'object',
            properties: {
              fields: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    id: { type: ['string', 'null'] },
                    tag: { type: ['string', 'null'] },
                    alias: { type: ['string', 'null'] },
                    group: { type: ['string', 'null'] },
                    type: { type: 'string' },
                    location: { type: 'string', enum: ['body', 'header', 'footer', 'footnote', 'endnote'] },
                    kind: { type: 'string', enum: ['control', 'placeholder'] },
                    control: { type: 'string' },
                    level: { type: 'string' },
                    part: { type: 'string' },
                    occurrences: { type: 'integer' },
                  },
                },
              },
            },
          },
          ...errorResponses(400, 401, 413, 415, 422, 429, 500, 503, 504),
        },
      },
      handler: async (request, reply) => {
        const template = await resolveDocumentSource(request.body.document, services.fetcher);
        reply.header('Cache-Control', 'no-store');
        return { fields: await services.enginePool.run('annotate.fields', { template }, { signal: abandonSignal(reply) }) };
      },
    });
  };
}
