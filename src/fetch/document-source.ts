/**
 * `document: { base64 } | { url }` (CONTRACT §0), shared by annotate, sign and verify: exactly one, base64
 * raw or as a data: URI, decoded bytes at most 25 MB.
 */
import { FolioError } from '../errors.js';
import type { SafeFetcher } from './safe-fetch.js';

export const MAX_DOCUMENT_BYTES = 25 * 1024 * 1024;

export interface DocumentSource {
  base64?: string;
  url?: string;
}

/** JSON Schema for a document source, used by the routes that accept one (and so by the OpenAPI document). */
export const documentSourceSchema = {
  type: 'object',
  description: 'Exactly one of base64 (raw or data: URI) and url (http/https, fetched under SSRF rules)',
  additionalProperties: false,
  properties: {
    base64: { type: 'string', minLength: 1 },
    url: { type: 'string', minLength: 1, maxLength: 4096 },
  },
  oneOf: [{ required: ['base64'] }, { required: ['url'] }],
} as const;

const DATA_URI = /^data:([^;,]*)(;[^,]*)?,/;

/** Decodes base64 or a data URI; `field` names the JSON path in errors. */
export function decodeBase64Input(value: string, field: string, maxBytes = MAX_DOCUMENT_BYTES): { bytes: Uint8Array; mime?: string } {
  let payload = value;
  let mime: string | undefined;
  const m = DATA_URI.exec(value);
  if (m) {
    if (!/;base64/i.test(m[2] ?? '')) {
      throw new FolioError('VALIDATION_ERROR', `${field} must be base64-encoded`, { details: [{ field, issue: 'data URI is not base64' }] });
    }
    mime = m[1] || undefined;
    payload = value.slice(m[0].length);
  }
  payload = payload.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/\-_]*={0,2}$/.test(payload) || payload.length === 0) {
    throw new FolioError('VALIDATION_ERROR', `${field} is not valid base64`, { details: [{ field, issue: 'invalid base64' }] });
  }
  if (Math.floor((payload.length * 3) / 4) - 2 > maxBytes) {
    throw new FolioError('FILE_TOO_LARGE', `${field} decodes to more than ${Math.round(maxBytes / 1024 / 1024)} MB`);
  }
  const bytes = Buffer.from(payload, payload.includes('-') || payload.includes('_') ? 'base64url' : 'base64');
  if (bytes.length > maxBytes) throw new FolioError('FILE_TOO_LARGE', `${field} is larger than ${Math.round(maxBytes / 1024 / 1024)} MB`);
  return { bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length), mime };
}

/**
 * Marks a `document.base64` that was already decoded off the request thread (large JSON bodies, see
 * src/engines `http.parseJson`); the bytes are attached to the source object. Not base64, so a source that
 * somehow lost its bytes fails loudly instead of decoding to something else.
 */
export const PREDECODED_DOCUMENT = '(decoded off the request thread)';
const predecoded = new WeakMap<object, Uint8Array>();

/** Attaches the bytes decoded from `source.base64` by the body parser. */
export function attachDecodedDocument(source: object, bytes: Uint8Array): void {
  predecoded.set(source, bytes);
}

export async function resolveDocumentSource(source: DocumentSource | undefined, fetcher: SafeFetcher, field = 'document'): Promise<Uint8Array> {
  if (!source || typeof source !== 'object') {
    throw new FolioError('VALIDATION_ERROR', `${field} is required`, { details: [{ field, issue: 'required' }] });
  }
  const hasB64 = typeof source.base64 === 'string';
  const hasUrl = typeof source.url === 'string';
  if (hasB64 === hasUrl) {
    throw new FolioError('VALIDATION_ERROR', `${field} must have exactly one of base64 and url`, {
      details: [{ field, issue: 'exactly one of base64, url' }],
    });
  }
  if (hasB64) return predecoded.get(source) ?? decodeBase64Input(source.base64!, `${field}.base64`).bytes;
  return (await fetcher.fetch(source.url!, `${field}.url`)).bytes;
}
