/**
 * POST /v1/merge (issue 17). Thin: takes the inputs from the multipart form (`files` repeated, MergeForm: one
 * compiled validator over the files and fields, the 25 MB sum enforced while reading) or the JSON body
 * (`documents`, MergeRequest; every `documents[].base64` decoded by the body parser, off the event loop for
 * a large body), checks the options once (src/merge/schema.ts), converts DOCX inputs through the office
 * engine and moves the PDFs to the merge engine in the engine pool, which opens each once. One request, so
 * one in-flight slot of the key.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { FolioError, isFolioError } from '../errors.js';
import { errorResponses, Type } from '../http/schema.js';
import { abandonSignal } from '../http/abandon.js';
import { movableBuffers } from '../http/body-buffer.js';
import { readForm } from '../http/multipart-form.js';
import type { Services } from '../http/capability.js';
import { base64Bytes, MAX_DOCUMENT_BYTES } from '../fetch/document-source.js';
import { isZip } from '../formats/sniff.js';
import { inputError, inputLabel, type MergeInput } from './engine.js';
import { checkMergeOptions, MAX_FILE_NAME_LENGTH, MergeForm, MergeRequest, mergeTooLarge, type MergeRequestBody } from './schema.js';

interface RawInput {
  bytes: Uint8Array;
  fileName: string;
  title?: string;
  labelPrefix?: string;
}

interface Settled {
  inputs: RawInput[];
  outline: boolean;
  pageLabels: boolean;
}

async function readMultipart(request: FastifyRequest): Promise<Settled> {
  const { form } = await readForm(request, MergeForm, { tooLarge: mergeTooLarge });
  checkMergeOptions(form);
  return {
    inputs: form.files.map((f) => ({ bytes: f.bytes, fileName: f.fileName })),
    outline: form.outline !== 'false',
    pageLabels: form.pageLabels !== 'false',
  };
}

/** The file name a URL ends with (`https://x/a/b%20c.pdf` → `b c.pdf`), or '' when it has none. */
function lastPathSegment(url: string): string {
  try {
    const segment = new URL(url).pathname.split('/').pop() ?? '';
    try {
      return decodeURIComponent(segment);
    } catch {
      return segment;
    }
  } catch {
    return '';
  }
}

async function readJson(body: MergeRequestBody, services: Services): Promise<Settled> {
  checkMergeOptions(body.options);
  const inputs: RawInput[] = [];
  let total = 0;
  for (const [i, d] of body.documents.entries()) {
    const field = `documents.${i}`;
    const bytes = d.base64 !== undefined ? base64Bytes(d, 'base64', `${field}.base64`) : (await services.fetcher.fetch(d.url!, `${field}.url`)).bytes;
    total += bytes.length;
    if (total > MAX_DOCUMENT_BYTES) throw mergeTooLarge();
    // A name the client gave is held to the schema's limit; one Folio takes from the URL is cut to it.
    const fileName = d.fileName ?? (d.url !== undefined ? [...lastPathSegment(d.url)].slice(0, MAX_FILE_NAME_LENGTH).join('') : '');
    inputs.push({ bytes, fileName, title: d.title, labelPrefix: d.labelPrefix });
  }
  return { inputs, outline: body.options?.outline ?? true, pageLabels: body.options?.pageLabels ?? true };
}

/** A header value carries only visible ASCII: anything else in a file name is replaced. */
const headerSafe = (s: string) => s.replace(/[^\x20-\x7e]/g, '?').replace(/"/g, "'");

export function mergeRoutes(services: Services) {
  return async (root: FastifyInstance) => {
    const app = root.withTypeProvider<TypeBoxTypeProvider>();
    app.route({
      method: 'POST',
      url: '/v1/merge',
      config: { auth: true, documentEndpoint: true, endpoint: 'merge', multipartBody: MergeForm },
      schema: {
        operationId: 'mergeDocuments',
        summary: 'Merge 2–50 PDF and DOCX files into one PDF, in order, with an outline and page labels',
        description:
          'Send multipart/form-data with the field `files` repeated (2–50, in order; options as form fields), or JSON ' +
          '`{documents: [{base64|url, fileName?, title?, labelPrefix?}], options}`. DOCX inputs are converted to PDF first. ' +
          'The 25 MB limit applies to the sum of the inputs. A signed input is merged as content: its signature does not survive, ' +
          'and the answer says so in `Warning` and `X-Folio-Warnings`. Encrypted or damaged inputs answer 422 naming the input ' +
          '(`details[].field` = `documents.<index>`, the issue starting with its file name). `pdfa` is refused (400): the merged file is not PDF/A.',
        tags: ['merge'],
        consumes: ['application/json', 'multipart/form-data'],
        body: { content: { 'application/json': { schema: MergeRequest } } },
        response: {
          200: {
            description:
              'The merged PDF (`Content-Disposition: attachment; filename="merged.pdf"`, `X-Folio-Pages`; `Warning` and `X-Folio-Warnings` when an input lost its signature)',
            content: { 'application/pdf': { schema: Type.String({ format: 'binary' }) } },
          },
          ...errorResponses(400, 401, 413, 415, 422, 429, 500, 503, 504),
        },
      },
      handler: async (request, reply) => {
        const body = request.body as MergeRequestBody | undefined;
        let settled: Settled;
        if (request.isMultipart()) settled = await readMultipart(request);
        else if (body && typeof body === 'object') settled = await readJson(body, services);
        else throw new FolioError('UNSUPPORTED_MEDIA_TYPE', 'Send JSON {"documents": [...]} or multipart/form-data with repeated "files" fields');

        // DOCX inputs become PDFs in the office engine's supervised processes, one after the other; a client
        // that left stops the remaining conversions. Every conversion and the merge draw from the request's
        // one deadline (REQUEST_TIMEOUT_MS): 50 slow DOCX files answer 504 when it is spent, not after 50
        // conversion budgets, and the remaining work is not started.
        const signal = abandonSignal(reply);
        const deadline = request.deadline;
        const inputs: MergeInput[] = [];
        for (const [index, raw] of settled.inputs.entries()) {
          if (signal.aborted) throw new FolioError('VALIDATION_ERROR', 'The client closed the connection');
          let pdf = raw.bytes;
          const fromDocx = isZip(raw.bytes);
          if (fromDocx) {
            deadline?.check(`the conversion of ${inputLabel(index, raw.fileName)}`);
            if (!services.office)
              throw new FolioError('SERVICE_UNAVAILABLE', 'DOCX conversion is not available on this instance', { retryAfter: 30 });
            try {
              pdf = await services.office.docxToPdf(raw.bytes, {}, { signal, deadline });
            } catch (e) {
              if (isFolioError(e) && (e.code === 'UNPROCESSABLE_DOCUMENT' || e.code === 'INVALID_FILE_FORMAT')) {
                throw inputError(index, raw.fileName, `the DOCX could not be converted (${e.message})`, e.code);
              }
              throw e;
            }
          }
          inputs.push({ pdf, fileName: raw.fileName, title: raw.title, labelPrefix: raw.labelPrefix, fromDocx });
        }
        // The PDFs are moved to the engine thread, not copied: the route does not read them again.
        const result = await services.enginePool.run(
          'merge.pdfs',
          { inputs, options: { outline: settled.outline, pageLabels: settled.pageLabels, outputMaxBytes: services.config.outputMaxBytes } },
          { signal, deadline, transfer: movableBuffers(...inputs.map((i) => i.pdf)) },
        );
        reply
          .code(200)
          .header('Content-Type', 'application/pdf')
          .header('Content-Disposition', 'attachment; filename="merged.pdf"')
          .header('Cache-Control', 'no-store')
          .header('X-Folio-Pages', String(result.pageCount));
        if (result.warnings.length > 0) {
          const safe = result.warnings.map(headerSafe);
          reply.header('Warning', safe.map((w) => `299 folio "${w}"`).join(', '));
          reply.header('X-Folio-Warnings', safe.join('; '));
        }
        return reply.send(Buffer.from(result.pdf.buffer, result.pdf.byteOffset, result.pdf.byteLength) as never);
      },
    });
  };
}
