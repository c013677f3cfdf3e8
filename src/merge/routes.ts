/**
 * POST /v1/merge (issue 17). Thin: reads the inputs (multipart `files`, repeated, or JSON `documents`),
 * keeps their sum within the 25 MB limit, converts DOCX inputs through the office engine and hands the PDFs
 * to the merge engine in the engine pool. One request, so one in-flight slot of the key.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { FolioError, isFolioError } from '../errors.js';
import { errorResponses, Type } from '../http/schema.js';
import { abandonSignal } from '../http/abandon.js';
import { announcedLength } from '../http/body-buffer.js';
import { readFilePart } from '../http/multipart-file.js';
import type { Capability } from '../http/capability.js';
import type { Services } from '../services.js';
import { decodeBase64Input, MAX_DOCUMENT_BYTES } from '../fetch/document-source.js';
import { isZip } from '../formats/sniff.js';
import { inputError, inputLabel, type MergeInput } from './engine.js';
import { MAX_FILE_NAME_LENGTH, MAX_MERGE_INPUTS, MergeForm, MergeRequest, MIN_MERGE_INPUTS, type MergeRequestBody } from './schema.js';

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
  pdfa?: string;
}

const MB = 1024 * 1024;
const tooLarge = () =>
  new FolioError('FILE_TOO_LARGE', `The inputs of a merge add up to more than ${MAX_DOCUMENT_BYTES / MB} MB`, {
    details: [{ field: 'files', issue: `the sum of the inputs is limited to ${MAX_DOCUMENT_BYTES / MB} MB` }],
  });

function booleanField(fields: Record<string, string>, name: string): boolean | undefined {
  const v = fields[name];
  if (v === undefined) return undefined;
  if (v === 'true' || v === 'false') return v === 'true';
  throw new FolioError('VALIDATION_ERROR', `${name} must be "true" or "false"`, { details: [{ field: name, issue: 'must be "true" or "false"' }] });
}

const MULTIPART_FIELDS = new Set(['outline', 'pageLabels', 'pdfa']);

/** Characters as the JSON schema's maxLength counts them (code points). */
const nameLength = (name: string) => [...name].length;

/**
 * One rule for a file name the client gives, multipart or JSON: at most MAX_FILE_NAME_LENGTH characters,
 * else 400 as the JSON schema answers (the name becomes an outline title and part of error messages).
 */
function checkFileName(name: string, field: string): void {
  if (nameLength(name) > MAX_FILE_NAME_LENGTH) {
    throw new FolioError('VALIDATION_ERROR', `The file name of ${field} is longer than ${MAX_FILE_NAME_LENGTH} characters`, {
      details: [{ field, issue: `must NOT have more than ${MAX_FILE_NAME_LENGTH} characters` }],
    });
  }
}

async function readMultipart(request: FastifyRequest): Promise<Settled> {
  // The request is refused before reading when even its declared length is beyond the limit with room for
  // the multipart framing of 50 parts.
  const declared = Number(request.headers['content-length'] ?? 0);
  if (declared > MAX_DOCUMENT_BYTES + MB) throw tooLarge();
  const announced = announcedLength(request.headers['content-length']);
  const inputs: RawInput[] = [];
  const fields: Record<string, string> = {};
  let total = 0;
  try {
    // Per route: up to 50 files here (the app's default is one), each within the 25 MB file limit.
    for await (const part of request.parts({ limits: { files: MAX_MERGE_INPUTS, parts: MAX_MERGE_INPUTS + 10 } })) {
      if (part.type === 'file') {
        if (part.fieldname !== 'files') {
          part.file.resume();
          throw new FolioError('VALIDATION_ERROR', `Unexpected file field "${part.fieldname}"`, {
            details: [{ field: part.fieldname, issue: 'only "files" is accepted' }],
          });
        }
        const fileName = part.filename ?? '';
        // Checked before the file is read: the answer does not wait for its bytes.
        checkFileName(fileName, `files.${inputs.length}.fileName`);
        // One buffer per file, at most the body still unread (readFilePart, body-buffer.ts), not a chunk list
        // plus its copy; a chunked body's bytes count against the in-flight budget as they arrive.
        // (The files before it were part of the Content-Length: what is left bounds this one.)
        const buf = await readFilePart(request, part, announced === undefined ? undefined : Math.max(0, announced - total));
        total += buf.length;
        if (total > MAX_DOCUMENT_BYTES) throw tooLarge();
        inputs.push({ bytes: new Uint8Array(buf.buffer, buf.byteOffset, buf.length), fileName });
      } else {
        if (!MULTIPART_FIELDS.has(part.fieldname)) {
          throw new FolioError('VALIDATION_ERROR', `Unknown form field "${part.fieldname}"`, {
            details: [{ field: part.fieldname, issue: 'unknown field' }],
          });
        }
        fields[part.fieldname] = String(part.value);
      }
    }
  } catch (e) {
    if ((e as { code?: string }).code === 'FST_FILES_LIMIT') {
      throw new FolioError('VALIDATION_ERROR', `At most ${MAX_MERGE_INPUTS} files can be merged at once`, {
        details: [{ field: 'files', issue: `more than ${MAX_MERGE_INPUTS} files` }],
      });
    }
    // One file past 25 MB (readFilePart's 413, or @fastify/multipart's) is a merge past its sum limit.
    if ((e as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE' || (isFolioError(e) && e.code === 'FILE_TOO_LARGE')) throw tooLarge();
    throw e;
  }
  return { inputs, outline: booleanField(fields, 'outline') ?? true, pageLabels: booleanField(fields, 'pageLabels') ?? true, pdfa: fields.pdfa };
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
  const inputs: RawInput[] = [];
  let total = 0;
  for (const [i, d] of body.documents.entries()) {
    const field = `documents.${i}`;
    const bytes =
      d.base64 !== undefined ? decodeBase64Input(d.base64, `${field}.base64`).bytes : (await services.fetcher.fetch(d.url!, `${field}.url`)).bytes;
    total += bytes.length;
    if (total > MAX_DOCUMENT_BYTES) throw tooLarge();
    // A name the client gave is held to the schema's limit; one Folio takes from the URL is cut to it.
    const fileName = d.fileName ?? (d.url !== undefined ? [...lastPathSegment(d.url)].slice(0, MAX_FILE_NAME_LENGTH).join('') : '');
    inputs.push({ bytes, fileName, title: d.title, labelPrefix: d.labelPrefix });
  }
  return { inputs, outline: body.options?.outline ?? true, pageLabels: body.options?.pageLabels ?? true, pdfa: body.options?.pdfa };
}

/** A header value carries only visible ASCII: anything else in a file name is replaced. */
const headerSafe = (s: string) => s.replace(/[^\x20-\x7e]/g, '?').replace(/"/g, "'");

function mergeRoutes(services: Services) {
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

        if (settled.inputs.length < MIN_MERGE_INPUTS || settled.inputs.length > MAX_MERGE_INPUTS) {
          throw new FolioError(
            'VALIDATION_ERROR',
            `A merge takes ${MIN_MERGE_INPUTS} to ${MAX_MERGE_INPUTS} files; ${settled.inputs.length} were sent`,
            {
              details: [{ field: 'files', issue: `must be ${MIN_MERGE_INPUTS} to ${MAX_MERGE_INPUTS} files` }],
            },
          );
        }
        if (settled.pdfa !== undefined) {
          throw new FolioError('UNSUPPORTED_CONVERSION', 'A merged PDF cannot be PDF/A: convert each DOCX with POST /v1/convert?pdfa=… instead', {
            details: [{ field: 'pdfa', issue: 'not supported by merge' }],
          });
        }

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
        const result = await services.enginePool.run(
          'merge.pdfs',
          { inputs, options: { outline: settled.outline, pageLabels: settled.pageLabels, outputMaxBytes: services.config.outputMaxBytes } },
          { signal, deadline },
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

/** Needs only the engine pool (always there); DOCX inputs also need the office engine (503 without it). */
export const mergeCapability: Capability = { name: 'merge', available: () => true, routes: mergeRoutes };
