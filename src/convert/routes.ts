/**
 * POST /v1/convert (CONTRACT §3). Thin: reads the single multipart `file`, settles the options (query
 * string or form fields, one schema), and hands the bytes to the engine pool (md/html→docx) and, for PDF,
 * to the office engine.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { FolioError, type ErrorDetail } from '../errors.js';
import { DOCX_MIME, errorResponses, Type } from '../http/schema.js';
import { readSingleFile } from '../http/multipart-file.js';
import { abandonSignal } from '../http/abandon.js';
import type { Capability } from '../http/capability.js';
import type { Services } from '../services.js';
import { convertDocument, inferSourceFormat, type TargetFormat } from './index.js';
import { CONVERT_OPTION_NAMES, ConvertForm, ConvertOptions, type ConvertOptionsQuery } from './schema.js';

/** A file name's stem made safe for a quoted Content-Disposition filename (ASCII, no quotes or separators). */
export function safeStem(filename: string): string {
  // Browsers send `"`, CR and LF in multipart file names as %22, %0D, %0A (HTML form encoding).
  const decoded = filename.replace(/%(22|0d|0a)/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
  const base = decoded.split(/[\\/]/).pop() ?? '';
  const dot = base.lastIndexOf('.');
  const stem = dot > 0 ? base.slice(0, dot) : base;
  const cleaned = stem
    .normalize('NFKD')
    .replace(/[^\x20-\x7e]/g, '')
    .replace(/["\\;%*?<>|:]/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 120);
  return cleaned || 'document';
}

/**
 * The options as sent: the query string (already validated, defaults not yet applied) merged with the form
 * fields of the same names, checked against the same schema. A name given both ways with different values
 * is a 400 naming it.
 */
export function settleOptions(rawQuery: string, query: ConvertOptionsQuery, form: Record<string, string>): ConvertOptionsQuery {
  const sentInQuery = new URLSearchParams(rawQuery);
  const out: Record<string, string> = {};
  const details: ErrorDetail[] = [];
  for (const name of CONVERT_OPTION_NAMES) {
    const q = sentInQuery.has(name) ? query[name] : undefined;
    const f = Object.hasOwn(form, name) ? form[name] : undefined;
    if (f !== undefined) {
      const allowed = (ConvertOptions.properties[name] as unknown as { enum: readonly string[] }).enum;
      if (!allowed.includes(f)) {
        details.push({ field: name, issue: `must be equal to one of the allowed values (${allowed.join(', ')})` });
        continue;
      }
      if (q !== undefined && q !== f) {
        details.push({ field: name, issue: `the query string says "${q}" and the form field "${f}"` });
        continue;
      }
    }
    const value = f ?? q;
    if (value !== undefined) out[name] = value;
  }
  if (details.length > 0) {
    throw new FolioError('VALIDATION_ERROR', `Invalid conversion options: ${details.map((d) => d.field).join(', ')}`, { details });
  }
  return out as ConvertOptionsQuery;
}

function convertRoutes(services: Services) {
  return async (root: FastifyInstance) => {
    const app = root.withTypeProvider<TypeBoxTypeProvider>();
    app.route({
      method: 'POST',
      url: '/v1/convert',
      config: { auth: true, documentEndpoint: true, endpoint: 'convert', multipartBody: ConvertForm },
      schema: {
        operationId: 'convertDocument',
        summary: 'Convert a document (docx→pdf, md→docx, html→docx, md→pdf, html→pdf)',
        description:
          'Send the document as multipart/form-data, field `file` (exactly one). The options are query parameters or form fields of the same names. ' +
          '`from` is inferred from the file name and content when absent.',
        tags: ['convert'],
        consumes: ['multipart/form-data'],
        querystring: ConvertOptions,
        response: {
          200: {
            description: 'The converted file (`Content-Disposition: attachment; filename="<input stem>.<ext>"`)',
            content: {
              'application/pdf': { schema: Type.String({ format: 'binary' }) },
              [DOCX_MIME]: { schema: Type.String({ format: 'binary' }) },
            },
          },
          ...errorResponses(400, 401, 413, 415, 422, 429, 500, 503, 504),
        },
      },
      handler: async (request, reply) => {
        const upload = await readSingleFile(request);
        const q = settleOptions(request.url.split('?')[1] ?? '', request.query, upload.fields);
        const to: TargetFormat = q.to ?? 'pdf';
        const from = q.from ?? inferSourceFormat(upload.filename, upload.bytes);
        if (!from) {
          throw new FolioError('VALIDATION_ERROR', 'Could not tell the source format from the file name or content; pass ?from=docx|md|html', {
            details: [{ field: 'from', issue: 'not inferable' }],
          });
        }
        const pdfOptions = {
          trackedChanges: q.trackedChanges ?? 'markup',
          pdfa: q.pdfa,
          tagged: q.tagged === undefined ? undefined : q.tagged === 'true',
        } as const;
        let out: Uint8Array;
        if (from === 'docx') {
          // DOCX in: nothing to parse here; the office engine validates it in its own supervised process.
          out = await convertDocument(upload.bytes, from, to, { office: services.office, pdf: pdfOptions });
        } else {
          if (to === 'pdf' && !services.office) {
            throw new FolioError('SERVICE_UNAVAILABLE', 'PDF conversion is not available on this instance', { retryAfter: 30 });
          }
          const docx = await services.enginePool.run(
            'convert.toDocx',
            { from, bytes: upload.bytes, pageSize: q.pageSize ?? 'A4' },
            { signal: abandonSignal(reply) },
          );
          // Composed by Folio from Markdown/HTML: not re-validated as an upload (DocxToPdfOptions.origin).
          out = to === 'pdf' ? await services.office!.docxToPdf(docx, { ...pdfOptions, origin: 'folio' }) : docx;
        }
        reply
          .code(200)
          .header('Content-Type', to === 'pdf' ? 'application/pdf' : DOCX_MIME)
          .header('Content-Disposition', `attachment; filename="${safeStem(upload.filename)}.${to}"`)
          .header('Cache-Control', 'no-store');
        // The 200 answer is binary (content schemas), which the type provider does not model.
        return reply.send(Buffer.from(out.buffer, out.byteOffset, out.byteLength) as never);
      },
    });
  };
}

/** Markdown/HTML → DOCX runs in the engine pool (always there); PDF output also needs the office engine. */
export const convertCapability: Capability = { name: 'convert', available: () => true, routes: convertRoutes };
