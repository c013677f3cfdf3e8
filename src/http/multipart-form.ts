/**
 * Reads a multipart/form-data request against its form schema and validates it as a JSON body is
 * validated: the schema (src/<capability>/schema.ts) declares the file fields (`BinaryField`, `BinaryFiles`
 * in schema.ts: `format: binary`, repeated or not, their file-name and total-size limits) and the text
 * fields; the stream is read into those fields, then the whole form, files included, is checked by one
 * validator compiled once per route from the same schema with the app's Ajv (the same messages and
 * `details` as a JSON body's). What the stream itself must enforce stays here: a file only in a file field,
 * the number of files (busboy's limit), 25 MB per file (@fastify/multipart's fileSize, while streaming) and
 * a field's total (`x-maxTotalBytes`).
 *
 * Each file is streamed into one buffer of at most what is left of the request's Content-Length
 * (body-buffer.ts), not collected as a chunk list and concatenated (`part.toBuffer()`: twice the file at its
 * end); a chunked body's bytes count against its in-flight reservation as they arrive (admission.ts). The
 * buffer is the part's alone, so a route can move it to an engine thread (`movableBuffers`).
 */
import type { FastifyRequest } from 'fastify';
import type { MultipartFile } from '@fastify/multipart';
import { FolioError, isFolioError } from '../errors.js';
import { countArrivedBytes } from './admission.js';
import { announcedLength, readIntoBuffer } from './body-buffer.js';
import { toFolioError } from './envelope.js';
import { MAX_FORM_FILE_BYTES, type FormFile, type Static, type TSchema } from './schema.js';

const MB = 1024 * 1024;
/** Text fields a form may carry (as the app's multipart limits: 20 fields). */
const MAX_TEXT_FIELDS = 20;
/** Room for the multipart framing of the parts beyond the files themselves. */
const FRAMING_BYTES = MB;

interface FileField {
  repeated: boolean;
  maxItems: number;
  maxTotalBytes?: number;
}

/** What the reader needs to know of a form schema, derived once per schema. */
interface FormSpec {
  files: Map<string, FileField>;
  maxFiles: number;
  /** The sum of the fields' total limits, when every file field has one: a body beyond it (+ framing) is refused unread. */
  maxFileBytes?: number;
  /** The schema the validator checks: each file as `{fileName, contentType, bytes}`, vendor keys left out. */
  validation: Record<string, unknown>;
}

type Json = Record<string, unknown>;
const specs = new WeakMap<object, FormSpec>();

/** Keys a schema may carry for the reader (x-…) that Ajv's strict mode would refuse as unknown keywords. */
const withoutVendorKeys = (s: Json): Json => Object.fromEntries(Object.entries(s).filter(([k]) => !k.startsWith('x-')));

/** A file in the validated form: its name held to the field's limit; the bytes are checked while streamed. */
function fileSchema(binary: Json): Json {
  const max = binary['x-fileNameMaxLength'];
  return {
    type: 'object',
    required: ['fileName', 'contentType', 'bytes'],
    properties: { fileName: { type: 'string', ...(typeof max === 'number' ? { maxLength: max } : {}) }, contentType: { type: 'string' } },
  };
}

const isBinary = (s: unknown): boolean => !!s && typeof s === 'object' && (s as Json).type === 'string' && (s as Json).format === 'binary';

/** The reader's view of a form schema (cached per schema object). */
export function formSpec(schema: TSchema): FormSpec {
  let spec = specs.get(schema);
  if (spec) return spec;
  // A plain JSON copy: no TypeBox symbols, and the original (which the OpenAPI document shows) untouched.
  const plain = JSON.parse(JSON.stringify(schema)) as Json;
  const files = new Map<string, FileField>();
  const properties: Json = {};
  let maxFileBytes: number | undefined = 0;
  for (const [name, sub] of Object.entries((plain.properties ?? {}) as Record<string, Json>)) {
    if (isBinary(sub)) {
      files.set(name, { repeated: false, maxItems: 1 });
      properties[name] = fileSchema(sub);
      maxFileBytes = undefined;
    } else if (sub.type === 'array' && isBinary(sub.items)) {
      const total = typeof sub['x-maxTotalBytes'] === 'number' ? sub['x-maxTotalBytes'] : undefined;
      files.set(name, {
        repeated: true,
        maxItems: typeof sub.maxItems === 'number' ? sub.maxItems : 1,
        ...(total !== undefined ? { maxTotalBytes: total } : {}),
      });
      properties[name] = { ...withoutVendorKeys(sub), items: fileSchema(sub.items as Json) };
      maxFileBytes = total === undefined || maxFileBytes === undefined ? undefined : maxFileBytes + total;
    } else {
      properties[name] = withoutVendorKeys(sub);
    }
  }
  spec = {
    files,
    maxFiles: [...files.values()].reduce((n, f) => n + f.maxItems, 0),
    ...(maxFileBytes ? { maxFileBytes } : {}),
    validation: { ...withoutVendorKeys(plain), properties },
  };
  specs.set(schema, spec);
  return spec;
}

export interface FormOptions {
  /** The 413 for files past a field's `x-maxTotalBytes` (merge: the sum of its inputs). */
  tooLarge?: () => FolioError;
}

export interface ReadForm<S extends TSchema> {
  /** The form, validated (defaults applied as for a JSON body). */
  form: Static<S>;
  /** The names of the fields the client sent (defaults aside). */
  sent: ReadonlySet<string>;
}

/** Reads and validates the multipart form of `request` against `schema`. */
export async function readForm<S extends TSchema>(request: FastifyRequest, schema: S, opts: FormOptions = {}): Promise<ReadForm<S>> {
  const spec = formSpec(schema);
  const fileNames = [...spec.files.keys()];
  if (!request.isMultipart()) {
    throw new FolioError('UNSUPPORTED_MEDIA_TYPE', `Send multipart/form-data with ${fileNames.map((n) => `"${n}"`).join(', ')}`);
  }
  const tooLarge = opts.tooLarge ?? (() => new FolioError('FILE_TOO_LARGE', 'The request body exceeds the size limit (25 MB per document)'));
  // Refused before reading when even the declared length is beyond what the files may add up to.
  const announced = announcedLength(request.headers['content-length']);
  if (spec.maxFileBytes !== undefined && announced !== undefined && announced > spec.maxFileBytes + FRAMING_BYTES) throw tooLarge();

  const value: Record<string, unknown> = {};
  const sent = new Set<string>();
  const totals = new Map<string, number>();
  let read = 0;
  const limits = { files: spec.maxFiles, parts: spec.maxFiles + MAX_TEXT_FIELDS + 4 };
  let current: FileField | undefined;
  try {
    for await (const part of request.parts({ limits })) {
      const field = spec.files.get(part.fieldname);
      if (part.type === 'file') {
        if (!field) {
          part.file.resume();
          throw new FolioError('VALIDATION_ERROR', `Unexpected file field "${part.fieldname}"`, {
            details: [
              { field: part.fieldname, issue: `only ${fileNames.map((n) => `"${n}"`).join(', ')} ${fileNames.length === 1 ? 'is' : 'are'} accepted` },
            ],
          });
        }
        current = field;
        // The files before this one were part of the Content-Length: what is left of it bounds this one.
        const buf = await readFilePart(request, part, announced === undefined ? undefined : Math.max(0, announced - read));
        current = undefined;
        read += buf.length;
        const total = (totals.get(part.fieldname) ?? 0) + buf.length;
        totals.set(part.fieldname, total);
        if (field.maxTotalBytes !== undefined && total > field.maxTotalBytes) throw tooLarge();
        const file: FormFile = {
          fileName: part.filename ?? '',
          contentType: part.mimetype,
          bytes: new Uint8Array(buf.buffer, buf.byteOffset, buf.length),
        };
        if (field.repeated) ((value[part.fieldname] ??= []) as FormFile[]).push(file);
        else value[part.fieldname] = file;
      } else {
        if (field) {
          throw new FolioError('VALIDATION_ERROR', `The form field "${part.fieldname}" must be a file`, {
            details: [{ field: part.fieldname, issue: 'must be a file' }],
          });
        }
        const text = String(part.value);
        // A text field sent twice is a list, which the schema refuses unless it asks for one.
        const prev = value[part.fieldname];
        value[part.fieldname] = prev === undefined ? text : Array.isArray(prev) ? [...(prev as unknown[]), text] : [prev, text];
      }
      sent.add(part.fieldname);
    }
  } catch (e) {
    throw streamError(e, spec, current, tooLarge);
  }
  const validate = request.compileValidationSchema(spec.validation, 'body');
  if (!validate(value)) throw toFolioError({ validation: validate.errors ?? [], validationContext: 'body' });
  return { form: value as Static<S>, sent };
}

/** busboy's and the reader's refusals, in the form's terms. */
function streamError(e: unknown, spec: FormSpec, current: FileField | undefined, tooLarge: () => FolioError): unknown {
  const code = (e as { code?: string }).code;
  if (code === 'FST_FILES_LIMIT') {
    // One file more than the form takes: a malformed request, not a large one.
    const [name, field] = [...spec.files.entries()].find(([, f]) => f.repeated) ?? [...spec.files.entries()][0] ?? ['file', undefined];
    if (field?.repeated) {
      return new FolioError('VALIDATION_ERROR', `At most ${field.maxItems} files can be sent in "${name}"`, {
        details: [{ field: name, issue: `must NOT have more than ${field.maxItems} items` }],
      });
    }
    return new FolioError('VALIDATION_ERROR', `Exactly one "${name}" is expected`, { details: [{ field: name, issue: 'more than one file' }] });
  }
  // One file past 25 MB in a field with a total limit is past that total too.
  if (current?.maxTotalBytes !== undefined && (code === 'FST_REQ_FILE_TOO_LARGE' || (isFolioError(e) && e.code === 'FILE_TOO_LARGE')))
    return tooLarge();
  return e;
}

/**
 * One file part into one buffer: preallocated at the request's Content-Length (the part is shorter by the
 * multipart framing and the other fields), or collected and joined once for a chunked body. The fileSize
 * limit stays @fastify/multipart's (its stream errors with FST_REQ_FILE_TOO_LARGE past it).
 */
export async function readFilePart(
  request: FastifyRequest,
  part: MultipartFile,
  /** Bytes of the body still unread, when parts came before this one (merge's files); Content-Length by default. */
  remaining?: number,
): Promise<Buffer> {
  const announced = remaining ?? announcedLength(request.headers['content-length']);
  const tooLargeMessage = 'The request body exceeds the size limit (25 MB per document)';
  const buf = await readIntoBuffer(part.file, {
    limit: MAX_FORM_FILE_BYTES,
    ...(announced !== undefined ? { capacity: announced } : {}),
    onBytes: (n) => countArrivedBytes(request, n),
    tooLargeMessage,
  });
  // busboy stops a part at the fileSize limit and marks it truncated (what toBuffer() turns into its 413).
  if (part.file.truncated) throw new FolioError('FILE_TOO_LARGE', tooLargeMessage);
  return buf;
}
