/**
 * POST /v1/convert (docs/api.md § Convert). Thin: reads and validates the multipart form (`file` and the options,
 * ConvertForm), settles the options with the query string's and checks them once (src/convert/schema.ts),
 * and moves the bytes to the engine pool (md/html→docx, docx→md|html) or hands them to the office engine (PDF).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { FolioError } from '../errors.js';
import { DOCX_MIME, errorResponses, Type } from '../http/schema.js';
import { readForm } from '../http/multipart-form.js';
import { movableBuffers } from '../http/body-buffer.js';
import { abandonSignal } from '../http/abandon.js';
import type { Services } from '../http/capability.js';
import { convertDocument, inferSourceFormat, type SourceFormat, type TargetFormat } from './index.js';
import { isPdf } from '../formats/sniff.js';
import { writeZip } from '../docx/zip-writer.js';
import { parsePreviewOptions, renderAdmission, renderPdfPages, type PreviewFormat } from '../preview/index.js';
import type { Deadline } from '../budget/index.js';
import { officeWithRun } from '../office/index.js';
import { checkConvertOptions, ConvertForm, ConvertOptions, settleConvertOptions, type ConvertOptionsQuery } from './schema.js';

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
  return async (root: FastifyInstance) => {
    const app = root.withTypeProvider<TypeBoxTypeProvider>();
    app.route({
      method: 'POST',
      url: '/v1/convert',
      config: { auth: true, documentEndpoint: true, endpoint: 'convert', multipartBody: ConvertForm },
      schema: {
        operationId: 'convertDocument',
        summary:
          'Convert a document (docx→pdf, docx→md, docx→html, md→docx, html→docx, md→pdf, html→pdf) or render page previews (docx|pdf→png|jpeg)',
        description:
          'Send the document as multipart/form-data, field `file` (exactly one). The options are query parameters or form fields of the same names. ' +
          '`from` is inferred from the file name and content when absent. ' +
          '`to=md|html` (from a DOCX): Markdown (CommonMark + GFM) or one self-contained HTML file, images as data URIs unless `images=drop`. ' +
          'Whatever a conversion could not keep as it was (md/html: what the target cannot carry; md/html→docx|pdf: tables wider than 63 columns split; ' +
          '`comments=margin`: comments left out) is listed in `Warning` and `X-Folio-Warnings`. ' +
          'The whole request has one time budget (`REQUEST_TIMEOUT_MS`: 504 when spent) and one output budget (`OUTPUT_MAX_MB`: 422 when passed). ' +
          '`to=png|jpeg`: previews of the `pages` of a DOCX or PDF at `width` px — one image for one page, else a ZIP of `page-<n>.png|jpg`.',
        tags: ['convert'],
        consumes: ['multipart/form-data'],
        querystring: ConvertOptions,
        response: {
          200: {
            description: 'The converted file (`Content-Disposition: attachment; filename="<input stem>.<ext>"`)',
            content: {
              'application/pdf': { schema: Type.String({ format: 'binary' }) },
              [DOCX_MIME]: { schema: Type.String({ format: 'binary' }) },
              'image/png': { schema: Type.String({ format: 'binary', description: 'One page preview (`to=png`, one page)' }) },
              'image/jpeg': { schema: Type.String({ format: 'binary', description: 'One page preview (`to=jpeg`, one page)' }) },
              'application/zip': { schema: Type.String({ format: 'binary', description: 'Several page previews: `page-<n>.png|jpg`' }) },
              'text/markdown': { schema: Type.String({ description: 'DOCX→md: CommonMark + GFM, UTF-8 (`text/markdown; charset=utf-8`)' }) },
              'text/html': { schema: Type.String({ description: 'DOCX→html: one HTML5 document, UTF-8 (`text/html; charset=utf-8`)' }) },
            },
          },
          ...errorResponses(400, 401, 413, 415, 422, 429, 500, 503, 504),
        },
      },
      handler: async (request, reply) => {
        const { form, sent } = await readForm(request, ConvertForm);
        const q = settleConvertOptions(request.url.split('?')[1] ?? '', request.query, form, sent);
        checkConvertOptions(q);
        const upload = form.file;
        if (q.to === 'png' || q.to === 'jpeg') return previews(services, q, q.to, upload.fileName, upload.bytes, reply, request.deadline);
        const to: TargetFormat = q.to ?? 'pdf';
        // (`from=pdf` outside previews was refused by checkConvertOptions.)
        const from = q.from === 'pdf' ? undefined : (q.from ?? inferSourceFormat(upload.fileName, upload.bytes));
        if (!from) {
          throw new FolioError('VALIDATION_ERROR', 'Could not tell the source format from the file name or content; pass ?from=docx|md|html', {
            details: [{ field: 'from', issue: 'not inferable' }],
          });
        }
        if (to === 'md' || to === 'html') return docxToText(services, from, to, q, upload.fileName, upload.bytes, reply);
        const pdfOptions = {
          trackedChanges: q.trackedChanges ?? 'markup',
          pdfa: q.pdfa,
          tagged: q.tagged === undefined ? undefined : q.tagged === 'true',
          comments: q.comments ?? 'none',
        } as const;
        let out: Uint8Array;
        // What the conversion could not keep as it was (wide tables split, comments left out): X-Folio-Warnings.
        const warnings: string[] = [];
        if (from === 'docx') {
          // DOCX in: nothing to parse here; the office engine validates it in its own supervised process.
          const office = officeWithRun(services.office, { signal: abandonSignal(reply), deadline: request.deadline, warnings });
          out = await convertDocument(upload.bytes, from, to, { office, pdf: pdfOptions });
        } else {
          if (to === 'pdf' && !services.office) {
            throw new FolioError('SERVICE_UNAVAILABLE', 'PDF conversion is not available on this instance', { retryAfter: 30 });
          }
          // Moved, not copied: the route does not read the upload again.
          const made = await services.enginePool.run(
            'convert.toDocx',
            { from, bytes: upload.bytes, pageSize: q.pageSize ?? 'A4' },
            { signal: abandonSignal(reply), deadline: request.deadline, transfer: movableBuffers(upload.bytes) },
          );
          warnings.push(...made.warnings);
          const docx = made.docx;
          // Composed by Folio from Markdown/HTML: not re-validated as an upload (DocxToPdfOptions.origin).
          const run = { signal: abandonSignal(reply), deadline: request.deadline, warnings };
          out = to === 'pdf' ? await services.office!.docxToPdf(docx, { ...pdfOptions, origin: 'folio' }, run) : docx;
        }
        reply
          .code(200)
          .header('Content-Type', to === 'pdf' ? 'application/pdf' : DOCX_MIME)
          .header('Content-Disposition', `attachment; filename="${safeStem(upload.fileName)}.${to}"`)
          .header('Cache-Control', 'no-store');
        warningHeaders(reply, warnings);
        // The 200 answer is binary (content schemas), which the type provider does not model.
        return reply.send(Buffer.from(out.buffer, out.byteOffset, out.byteLength) as never);
      },
    });
  };
}

/** Non-ASCII and quotes cannot go into a header value as they are. */
const headerSafe = (s: string) => s.replace(/[^\x20-\x7e]/g, '?').replace(/"/g, "'");

/** The conversion's warnings (none: no headers) as `Warning: 299 folio "…"` and `X-Folio-Warnings: a; b`. */
function warningHeaders(reply: FastifyReply, warnings: readonly string[]): void {
  if (warnings.length === 0) return;
  const safe = [...new Set(warnings)].map(headerSafe);
  reply.header('Warning', safe.map((w) => `299 folio "${w}"`).join(', '));
  reply.header('X-Folio-Warnings', safe.join('; '));
}

/** DOCX → Markdown or HTML on the engine pool; the warnings go into `Warning` and `X-Folio-Warnings`. */
async function docxToText(
  services: Services,
  from: SourceFormat,
  to: 'md' | 'html',
  q: ConvertOptionsQuery,
  filename: string,
  bytes: Uint8Array,
  reply: FastifyReply,
): Promise<FastifyReply> {
  if (from !== 'docx') {
    throw new FolioError('UNSUPPORTED_CONVERSION', `Conversion from ${from} to ${to} is not supported`, {
      details: [{ field: 'to', issue: 'md and html are made from a DOCX' }],
    });
  }
  // The output is counted against OUTPUT_MAX_MB while it is written, and comes back as bytes (never a string
  // here, which a large answer could not even be).
  // The upload is moved to the thread, not copied (not read here again); the text comes back moved too.
  const result = await services.enginePool.run(
    'convert.fromDocx',
    { to, bytes, images: q.images ?? 'inline', outputMaxBytes: services.config.outputMaxBytes },
    { signal: abandonSignal(reply), deadline: reply.request.deadline, transfer: movableBuffers(bytes) },
  );
  reply
    .code(200)
    .header('Content-Type', to === 'md' ? 'text/markdown; charset=utf-8' : 'text/html; charset=utf-8')
    .header('Content-Disposition', `attachment; filename="${safeStem(filename)}.${to}"`)
    .header('Cache-Control', 'no-store')
    // The HTML is a document of its own: nothing in it may run if a browser opens the answer directly.
    .header('Content-Security-Policy', "default-src 'none'; img-src data:; style-src 'unsafe-inline'; sandbox")
    .header('X-Content-Type-Options', 'nosniff');
  warningHeaders(reply, result.warnings);
  return reply.send(Buffer.from(result.bytes.buffer, result.bytes.byteOffset, result.bytes.byteLength) as never);
}

/**
 * Page previews: a PDF as it is, a DOCX through the office engine first (an upload: every office check
 * applies), then poppler (src/preview). One page → the image; several → a ZIP of page-<n>.<ext>. The
 * conversion, the page-size reading (engine pool) and every page run draw from the request's one deadline;
 * renders take their turns from the office pool's admission; the images count against OUTPUT_MAX_MB.
 */
async function previews(
  services: Services,
  q: ConvertOptionsQuery,
  format: PreviewFormat,
  filename: string,
  bytes: Uint8Array,
  reply: FastifyReply,
  deadline: Deadline | undefined,
): Promise<FastifyReply> {
  const req = parsePreviewOptions(q.width, q.pages);
  let from: SourceFormat | 'pdf' | undefined = q.from ?? (isPdf(bytes) ? 'pdf' : inferSourceFormat(filename, bytes));
  if (from === 'pdf' && !isPdf(bytes)) from = undefined;
  if (from === 'md' || from === 'html') {
    throw new FolioError('UNSUPPORTED_CONVERSION', `Previews are made of a DOCX or a PDF, not ${from}`, {
      details: [{ field: 'from', issue: 'previews: docx or pdf' }],
    });
  }
  if (!from) {
    throw new FolioError('VALIDATION_ERROR', 'Could not tell the source format from the file name or content; pass ?from=docx|pdf', {
      details: [{ field: 'from', issue: 'not inferable' }],
    });
  }
  const signal = abandonSignal(reply);
  let pdf = bytes;
  if (from === 'docx') {
    pdf = await convertDocument(bytes, 'docx', 'pdf', { office: officeWithRun(services.office, { signal, deadline }), pdf: { origin: 'upload' } });
  }
  const pages = await renderPdfPages(pdf, format, req, {
    signal,
    deadline,
    outputMaxBytes: services.config.outputMaxBytes,
    maxPixels: services.config.previewMaxPixels,
    memoryBytes: services.config.previewMemoryBytes,
    admission: renderAdmission(services.office, services.config.officeWorkers),
    measure: (bytes, pages) => services.enginePool.run('preview.pageSizes', { pdf: bytes, pages }, { signal, deadline }),
  });
  const ext = format === 'png' ? 'png' : 'jpg';
  const stem = safeStem(filename);
  let out: Uint8Array;
  if (pages.length === 1) {
    out = pages[0]!.bytes;
    reply
      .header('Content-Type', format === 'png' ? 'image/png' : 'image/jpeg')
      .header('Content-Disposition', `attachment; filename="${stem}.${ext}"`);
  } else {
    // Images are compressed already: stored.
    out = writeZip(pages.map((p) => ({ name: `page-${p.page}.${ext}`, data: p.bytes, store: true })));
    reply.header('Content-Type', 'application/zip').header('Content-Disposition', `attachment; filename="${stem}.zip"`);
  }
  reply.code(200).header('Cache-Control', 'no-store').header('X-Page-Count', String(pages.length));
  return reply.send(Buffer.from(out.buffer, out.byteOffset, out.byteLength) as never);
}
