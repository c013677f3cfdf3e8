/**
 * Schema building blocks shared by every capability's `schema.ts`: TypeBox (through
 * @fastify/type-provider-typebox, whose `Static` the handlers are typed with), the error envelope and the
 * `document: {base64}|{url}` source, base64 documents in JSON (`Base64Document`) and the files of multipart
 * forms (`BinaryField`). One schema per body, query, form and answer gives the validation (Ajv, compiled once
 * per route), the OpenAPI document (@fastify/swagger) and the handler types; the client's types are
 * generated from that document (packages/client/src/api-types.ts, checked by test/foundation/openapi.test.ts).
 */
import { Type, type Static, type TSchema, type TUnsafe } from '@fastify/type-provider-typebox';
import { STATUS_CODES } from 'node:http';

export { Type, type Static, type TSchema };

/** A string enum as one `{type: 'string', enum}` (one Ajv error, not one per literal as a union gives). */
export function StringEnum<const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** `T | null` written as JSON Schema's type list where T is a primitive. */
export function Nullable<T extends TSchema>(schema: T, options: Record<string, unknown> = {}): TUnsafe<Static<T> | null> {
  const s = schema as unknown as { type?: string; enum?: unknown[] };
  // An enum must list null too: JSON Schema checks `enum` as well as `type`, so null would fail otherwise.
  const nullEnum = Array.isArray(s.enum) ? { enum: [...s.enum, null] } : {};
  if (typeof s.type === 'string') return Type.Unsafe<Static<T> | null>({ ...schema, type: [s.type, 'null'], ...nullEnum, ...options });
  return Type.Unsafe<Static<T> | null>({ anyOf: [schema, { type: 'null' }], ...options });
}

/** `"true"|"false"` in a query string or form field. */
export const BooleanString = (description: string) => StringEnum(['true', 'false'] as const, { description });

export const ErrorDetail = Type.Object({ field: Type.String(), issue: Type.String() });

/** The contract's error envelope (docs/api.md § Common rules); registered once as the `ErrorEnvelope` component. */
export const ErrorEnvelope = Type.Object(
  {
    code: Type.String({ description: 'One of the contract error codes', examples: ['VALIDATION_ERROR'] }),
    error: Type.String({ description: 'HTTP reason phrase', examples: ['Bad Request'] }),
    message: Type.String({ description: 'For a person', examples: ['Request body is invalid'] }),
    requestId: Type.String({ examples: ['3f1c2b9e-8d7a-4c1e-9b0f-2a6d5e4c3b21'] }),
    details: Type.Optional(Type.Array(ErrorDetail)),
  },
  { $id: 'ErrorEnvelope', description: 'Every error on every path' },
);
export type ErrorEnvelopeBody = Static<typeof ErrorEnvelope>;

/** OpenAPI `responses` entries for the given error statuses, all pointing at the envelope schema. */
export function errorResponses(...statuses: number[]): Record<number, { description: string; $ref: string }> {
  const out: Record<number, { description: string; $ref: string }> = {};
  for (const s of statuses) out[s] = { description: STATUS_CODES[s] ?? 'Error', $ref: 'ErrorEnvelope#' };
  return out;
}

/**
 * A document as base64 (raw or a data: URI) inside a JSON body. Marked with JSON Schema's
 * `contentEncoding: base64`: the body parser decodes every string so marked in the body of the route it is
 * parsing (src/http/binary-fields.ts), on the body thread for large bodies, and the handler takes the bytes
 * (`base64Bytes`), never decoding on the event loop.
 */
export function Base64Document(options: Record<string, unknown> = {}): TUnsafe<string> {
  return Type.Unsafe<string>({ type: 'string', minLength: 1, contentEncoding: 'base64', ...options });
}

/** `document: { base64 } | { url }` (docs/api.md § Common rules): exactly one. */
export const DocumentSource = Type.Unsafe<{ base64: string; url?: never } | { url: string; base64?: never }>({
  type: 'object',
  description: 'Exactly one of base64 (raw or data: URI) and url (http/https, fetched under SSRF rules)',
  additionalProperties: false,
  properties: {
    base64: Base64Document({ examples: ['JVBERi0xLjcKJeLjz9MK…'] }),
    url: { type: 'string', minLength: 1, maxLength: 4096, examples: ['https://example.org/contract.pdf'] },
  },
  oneOf: [{ required: ['base64'] }, { required: ['url'] }],
});
export type DocumentSourceBody = Static<typeof DocumentSource>;

/** A document handed back inside a JSON answer. */
export const ReturnedDocument = Type.Object({
  base64: Type.String({ description: 'The file, base64' }),
  contentType: Type.String({ examples: ['application/pdf'] }),
});

/** A file of a multipart form, as the handler receives it (src/http/multipart-form.ts). */
export interface FormFile {
  /** As the client named it (`filename` of the part; '' when absent). */
  fileName: string;
  contentType: string;
  bytes: Uint8Array;
}

/** The largest file of a form unless its field says otherwise (docs/api.md § Common rules: 25 MB per document). */
export const MAX_FORM_FILE_BYTES = 25 * 1024 * 1024;

export interface BinaryFieldOptions {
  description?: string;
  /** Longest file name (characters, as JSON Schema counts them); longer: 400 at `<field>.fileName`. */
  fileNameMaxLength?: number;
}

/**
 * A file field of a multipart form: `type: string, format: binary` in the OpenAPI document (what generators
 * turn into a file input), a `FormFile` in the handler. The form reader (src/http/multipart-form.ts) reads
 * the files of the fields so marked and validates the whole form, files included, with one compiled
 * validator; a file in any other field is refused while the stream is read.
 */
export function BinaryField(options: BinaryFieldOptions = {}): TUnsafe<FormFile> {
  const { fileNameMaxLength, ...rest } = options;
  return Type.Unsafe<FormFile>({
    type: 'string',
    format: 'binary',
    ...rest,
    ...(fileNameMaxLength !== undefined ? { 'x-fileNameMaxLength': fileNameMaxLength } : {}),
  });
}

export interface BinaryFilesOptions extends BinaryFieldOptions {
  minItems?: number;
  maxItems: number;
  /** The most the files of this field may add up to; past it, `tooLarge` of the form reader (413). */
  maxTotalBytes?: number;
}

/** A file field repeated (merge's `files`): the files in the order sent. */
export function BinaryFiles(options: BinaryFilesOptions) {
  const { minItems, maxItems, maxTotalBytes, description, fileNameMaxLength } = options;
  return Type.Array(BinaryField(fileNameMaxLength !== undefined ? { fileNameMaxLength } : {}), {
    ...(minItems !== undefined ? { minItems } : {}),
    maxItems,
    ...(description !== undefined ? { description } : {}),
    ...(maxTotalBytes !== undefined ? { 'x-maxTotalBytes': maxTotalBytes } : {}),
  });
}

/** The multipart upload of one document (convert, verify). */
export const FileUpload = Type.Object({ file: BinaryField({ description: 'The document (exactly one)' }) }, { additionalProperties: false });

export const DOCX_MIME = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

/** GET|HEAD /v1/health (docs/api.md § Health). */
export const HealthResponse = Type.Object(
  {
    status: StringEnum(['healthy', 'degraded', 'unhealthy'] as const),
    timestamp: Type.String({ format: 'date-time' }),
    version: Type.String({ examples: ['0.9.0'] }),
    service: Type.String({ examples: ['folio-api'] }),
    instance: Type.Object({ startTime: Type.String(), uptimeSeconds: Type.Integer() }),
    engines: Type.Record(
      Type.String(),
      Type.Object(
        {
          status: StringEnum(['healthy', 'degraded', 'unhealthy'] as const),
          workers: Type.Optional(Type.Integer()),
          busy: Type.Optional(Type.Integer()),
          queued: Type.Optional(Type.Integer()),
        },
        { additionalProperties: true },
      ),
    ),
  },
  {
    examples: [
      {
        status: 'healthy',
        timestamp: '2026-11-24T04:00:00.000Z',
        version: '0.9.0',
        service: 'folio-api',
        instance: { startTime: '2026-11-24T03:00:00.000Z', uptimeSeconds: 3600 },
        engines: { enginePool: { status: 'healthy', workers: 2, busy: 0, queued: 0 } },
      },
    ],
  },
);
export type HealthResponseBody = Static<typeof HealthResponse>;
