/**
 * Base64 documents inside JSON bodies, decoded where the body is parsed. A route's body schema marks every
 * base64 document with `contentEncoding: base64` (`Base64Document`, schema.ts): `document.base64` of annotate,
 * sign and verify, `documents[].base64` of merge. `base64Paths` finds the marked fields of a schema (once per
 * schema); the body parser (app.ts) decodes each of them right after JSON.parse, on the body thread for
 * large bodies (`parseJsonDecoding`, src/engines `http.parseJson`, the buffers moved back, not copied) and
 * on the event loop for small ones; the handler takes the bytes with `base64Bytes` (src/fetch/document-source.ts).
 *
 * A decoded string is replaced by a short marker, so the schema validation that follows does not walk
 * megabytes of base64 (Ajv's minLength counts characters one by one: ~75 ms per 16 MB on the event loop) and
 * no string that size crosses back from the body thread. A string that does not decode is replaced too and
 * its error kept: the handler throws it as it would have thrown it decoding, after the schema's own errors.
 */
import { FolioError, type ErrorCode, type ErrorDetail } from '../errors.js';
import { decodeBase64Input, rememberDecoded } from '../fetch/document-source.js';
import { parseJsonBody } from './json-body.js';
import { movableBuffers } from './body-buffer.js';

/** A field marked base64 in a body schema: property names from the body down, ITEMS for each array element. */
export type Base64Path = readonly string[];
export const ITEMS = '[]';

/**
 * What stands in a body for a base64 document the parser has decoded (or could not decode). Not base64
 * (brackets, spaces), so code that reads the string instead of asking `base64Bytes` fails loudly.
 */
export const DECODED_BASE64 = '(decoded by the body parser)';

/** One marked field of a parsed body: where it is and its bytes, or why it could not be decoded. */
export interface DecodedField {
  at: Array<string | number>;
  bytes?: Uint8Array;
  error?: { code: ErrorCode; message: string; details?: ErrorDetail[] };
}

const pathsBySchema = new WeakMap<object, Base64Path[]>();

/** The fields a JSON body schema marks `contentEncoding: base64` (computed once per schema object). */
export function base64Paths(schema: unknown): Base64Path[] {
  if (!schema || typeof schema !== 'object') return [];
  let paths = pathsBySchema.get(schema);
  if (!paths) {
    const found = new Map<string, Base64Path>();
    collect(schema as Record<string, unknown>, [], found, 0);
    paths = [...found.values()];
    pathsBySchema.set(schema, paths);
  }
  return paths;
}

/**
 * The JSON body schema of a route's schema: `body` itself, or its `application/json` entry when the route
 * takes several content types (merge, verify).
 */
export function jsonBodySchema(routeSchema: unknown): unknown {
  const body = (routeSchema as { body?: { content?: Record<string, { schema?: unknown }> } } | undefined)?.body;
  if (!body || typeof body !== 'object') return undefined;
  return body.content ? body.content['application/json']?.schema : body;
}

function collect(schema: Record<string, unknown>, at: string[], found: Map<string, Base64Path>, depth: number): void {
  if (depth > 32) return;
  if (schema.contentEncoding === 'base64' && at.length > 0) found.set(at.join('\u0000'), at);
  const properties = schema.properties;
  if (properties && typeof properties === 'object') {
    for (const [key, sub] of Object.entries(properties as Record<string, unknown>)) {
      if (sub && typeof sub === 'object') collect(sub as Record<string, unknown>, [...at, key], found, depth + 1);
    }
  }
  const items = schema.items;
  if (items && typeof items === 'object' && !Array.isArray(items)) collect(items as Record<string, unknown>, [...at, ITEMS], found, depth + 1);
  for (const k of ['anyOf', 'oneOf', 'allOf'] as const) {
    const alternatives = schema[k];
    if (Array.isArray(alternatives)) {
      for (const sub of alternatives) if (sub && typeof sub === 'object') collect(sub as Record<string, unknown>, at, found, depth + 1);
    }
  }
}

/**
 * Decodes every non-empty string at the given paths of a parsed body, in place (each replaced by
 * DECODED_BASE64), and lists the bytes or the error of each. An empty string is left for the schema's
 * minLength to name.
 */
export function decodeBase64Fields(value: unknown, paths: readonly Base64Path[]): DecodedField[] {
  const out: DecodedField[] = [];
  if (value === null || typeof value !== 'object') return out;
  for (const path of paths) if (path.length > 0) visit(value as Record<string | number, unknown>, path, 0, [], out);
  return out;
}

function visit(holder: Record<string | number, unknown>, path: Base64Path, i: number, at: Array<string | number>, out: DecodedField[]): void {
  const step = path[i]!;
  const keys: Array<string | number> =
    step === ITEMS ? (Array.isArray(holder) ? [...holder.keys()] : []) : !Array.isArray(holder) && Object.hasOwn(holder, step) ? [step] : [];
  const last = i === path.length - 1;
  for (const key of keys) {
    const child = holder[key];
    if (!last) {
      if (child !== null && typeof child === 'object') visit(child as Record<string | number, unknown>, path, i + 1, [...at, key], out);
      continue;
    }
    if (typeof child !== 'string' || child.length === 0) continue;
    const where = [...at, key];
    try {
      out.push({ at: where, bytes: decodeBase64Input(child, where.join('.')).bytes });
    } catch (e) {
      if (!(e instanceof FolioError)) throw e;
      out.push({ at: where, error: { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) } });
    }
    holder[key] = DECODED_BASE64;
  }
}

/** The body thread's job (`http.parseJson`): the bounded JSON parse, then the route's base64 fields decoded. */
export function parseJsonDecoding(body: Uint8Array, paths: readonly Base64Path[]): { value: unknown; decoded: DecodedField[] } {
  const value = parseJsonBody(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
  return { value, decoded: decodeBase64Fields(value, paths) };
}

/** The buffers of decoded fields that can be moved back from the body thread (each whole, listed once). */
export const decodedBuffers = (decoded: readonly DecodedField[]): ArrayBuffer[] => movableBuffers(...decoded.map((d) => d.bytes));

/** Ties the decoded fields to the parsed body they came from (the objects holding them), for `base64Bytes`. */
export function attachDecodedFields(value: unknown, decoded: readonly DecodedField[]): void {
  for (const d of decoded) {
    let holder: unknown = value;
    for (const key of d.at.slice(0, -1))
      holder = holder !== null && typeof holder === 'object' ? (holder as Record<string | number, unknown>)[key] : undefined;
    const key = d.at[d.at.length - 1]!;
    if (holder === null || typeof holder !== 'object' || (holder as Record<string | number, unknown>)[key] !== DECODED_BASE64) continue;
    const { bytes, error } = d;
    rememberDecoded(holder, key, bytes ?? new FolioError(error!.code, error!.message, error!.details ? { details: error!.details } : {}));
  }
}
