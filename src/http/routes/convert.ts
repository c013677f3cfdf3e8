/**
 * POST /v1/convert?from=&to= (CONTRACT §3). Thin: reads the single multipart `file`, settles the
 * (from, to) pair, and hands the bytes to the converters in src/convert/ and, for PDF, to the office engine.
 */
import type { FastifyInstance } from 'fastify';
import { FolioError } from '../../errors.js';
import { errorResponses } from '../envelope.js';
import { readSingleFile } from '../multipart-file.js';
import type { Services } from '../../services.js';
import { convertDocument, inferSourceFormat, type SourceFormat, type TargetFormat } from '../../convert/index.js';
import { abandonSignal } from '../abandon.js';

const DOCX_MIME = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

interface ConvertQuery {
  from?: SourceFormat;
  to?: TargetFormat;
  trackedChanges?: 'markup' | 'accept' | 'reject';
  pdfa?: '1b' | '2b' | '3b';
  tagged?: 'true' | 'false';
  pageSize?: 'A4' | 'Letter';
}

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

export function convertRoutes(services: Services) {
  return async (app: FastifyInstance) => {
    app.route<{ Querystring: ConvertQuery }>({
      method: 'POST',
      url: '/v1/convert',
      config: { auth: true, documentEndpoint: true, endpoint: 'convert' },
      schema: {
        summary: 'Convert a document (docx→pdf, md→docx, html→docx, md→pdf, html→pdf)',
        description:
          'Send the document as multipart/form-data, field `file` (exactly one). `from` is inferred from the file name and content when absent.',
        tags: ['convert'],
        consumes: ['multipart/form-data'],
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            from: { type: 'string', enum: ['docx', 'md', 'html'], description: 'Source format; inferred when absent' },
            to: { type: 'string', enum: ['pdf', 'docx'], default: 'pdf' },
            trackedChanges: { type: 'string', enum: ['markup', 'accept', 'reject'], default: 'markup' },
            pdfa: { type: 'string', enum: ['1b', '2b', '3b'] },
            tagged: { type: 'string', enum: ['true', 'false'] },
            pageSize: { type: 'string', enum: ['A4', 'Letter'], default: 'A4', description: 'Page size of a generated DOCX' },
          },
        },
        response: {
          200: {
            description: 'The converted file',
            content: {
              'application/pdf': { schema: { type: 'string', format: 'binary' } },
              [DOCX_MIME]: { schema: { type: 'string', format: 'binary' } },
            },
          },
          ...errorResponses(400, 401, 413, 415, 422, 429, 500, 503, 504),
        },
      },
      handler: async (request, reply) => {
        const q = request.query;
        const upload = await readSingleFile(request);
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
          out = to === 'pdf' ? await services.office!.docxToPdf(docx, pdfOptions) : docx;
        }
        reply
          .code(200)
          .header('Content-Type', to === 'pdf' ? 'application/pdf' : DOCX_MIME)
          .header('Content-Disposition', `attachment; filename="${safeStem(upload.filename)}.${to}"`)
          .header('Cache-Control', 'no-store');
        return reply.send(Buffer.from(out.buffer, out.byteOffset, out.byteLength));
      },
    });
  };
}
