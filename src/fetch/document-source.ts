/**
 * `document: { base64 } | { url }` (docs/api.md § Common rules), shared by annotate, sign and verify: exactly one, base64
 * raw or as a data: URI, decoded bytes at most 25 MB. The JSON schema of the source is `DocumentSource` in
 * src/http/schema.ts; its base64, like every base64 document of a body, is decoded by the body parser
 * (src/http/binary-fields.ts), which leaves the bytes here for the handler (`base64Bytes`).
 */
import { FolioError } from '../errors.js';
import type { SafeFetcher } from './safe-fetch.js';

export const MAX_DOCUMENT_BYTES = 25 * 1024 * 1024;

export interface DocumentSource {
  base64?: string;
  url?: string;
}

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

const decodedByHolder = new WeakMap<object, Map<string | number, Uint8Array | FolioError>>();

/**
 * Records what the body parser made of `holder[key]`, a base64 document field of a request body: its bytes,
 * or the error decoding it gave (src/http/binary-fields.ts). Kept per body object, for `base64Bytes`.
 */
export function rememberDecoded(holder: object, key: string | number, decoded: Uint8Array | FolioError): void {
  let fields = decodedByHolder.get(holder);
  if (!fields) decodedByHolder.set(holder, (fields = new Map()));
  fields.set(key, decoded);
}

/**
 * The bytes of `holder[key]`, a base64 document field: as the body parser decoded them, or decoded now when
 * it did not (a body built in code); `field` names it in errors.
 */
export function base64Bytes(holder: object, key: string | number, field: string): Uint8Array {
  const got = decodedByHolder.get(holder)?.get(key);
  if (got instanceof FolioError) throw got;
  if (got) return got;
  const text = (holder as Record<string | number, unknown>)[key];
  if (typeof text !== 'string') throw new FolioError('VALIDATION_ERROR', `${field} is required`, { details: [{ field, issue: 'required' }] });
  return decodeBase64Input(text, field).bytes;
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
  // Decoded by the body parser already (src/http/binary-fields.ts), or now for a source built in code.
  if (hasB64) return base64Bytes(source, 'base64', `${field}.base64`);
  return (await fetcher.fetch(source.url!, `${field}.url`)).bytes;
}
