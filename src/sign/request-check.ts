/**
 * The one check of a POST /v1/sign body beyond its schema (schema.ts holds every pattern: name, e-mail, IPs,
 * the date-time syntax): what a schema cannot express — a calendar date that exists, an event's data at most
 * 16 KB as JSON — and the parse of every timestamp, once, into the Date the engine receives. The schema's
 * errors and these come back in one answer, one detail per offending field (the route validates with
 * `attachValidation`, so the schema's errors reach this function instead of ending the request first).
 * No HTTP here: the route turns the schema's errors into details. A request that does not come over HTTP (the
 * CLI's local mode) goes through the same schema here (`checkSignFields`), so no copy of a pattern lives anywhere.
 */
import { Value } from 'typebox/value';
import { FolioError, type ErrorDetail } from '../errors.js';
import type { SignEvent } from './engine.js';
import { DATE_TIME_PATTERN, SignRequest, type SignRequestBody } from './schema.js';
import { Type } from 'typebox';

const MAX_EVENT_DATA_BYTES = 16 * 1024;
const DATE_TIME = new RegExp(DATE_TIME_PATTERN);

/** What a field's pattern means, for its detail (Ajv's own would quote the regular expression). */
export function patternIssue(field: string): string | undefined {
  if (field === 'signer.name') return 'must be 2 to 255 characters';
  if (field === 'signer.email') return 'must be an e-mail address';
  if (field === 'signer.ip' || field === 'metadata.ip') return 'must be an IPv4 or IPv6 address';
  if (/^auditTrail\.\d+\.timestamp$/.test(field)) return 'must be an ISO 8601 date-time';
  return undefined;
}

/** An ISO 8601 date-time (DATE_TIME_PATTERN) → its moment, or undefined when the calendar or the clock has no such time. */
export function parseIsoTimestamp(value: string): Date | undefined {
  const m = DATE_TIME.exec(value);
  if (!m) return undefined;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', rawZone = 'Z'] = m;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return undefined;
  const zone = rawZone.toUpperCase();
  const z = zone === 'Z' ? 'Z' : zone.length === 3 ? `${zone}:00` : zone.includes(':') ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`;
  const ms = frac ? `.${frac.padEnd(3, '0').slice(0, 3)}` : '';
  const date = new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}${ms}${z}`);
  if (Number.isNaN(date.getTime())) return undefined;
  // Refuse calendar dates that JavaScript would roll over (2026-02-30 → March 2).
  const calendar = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  if (calendar.getUTCDate() !== Number(d) || calendar.getUTCMonth() + 1 !== Number(mo)) return undefined;
  return date;
}

/** The signer and audit trail as the engine takes them: name trimmed, timestamps parsed. */
export interface CheckedSignRequest {
  signer: SignRequestBody['signer'];
  auditTrail: SignEvent[];
}

/**
 * Checks `body` and returns its values ready for the engine. `schema` is the route schema's verdict when it
 * failed (its message and details): then the body may hold anything, and one VALIDATION_ERROR lists the
 * schema's details and this function's.
 */
export function checkSignRequest(body: SignRequestBody, schema?: { message: string; details: ErrorDetail[] }): CheckedSignRequest {
  const details: ErrorDetail[] = [...(schema?.details ?? [])];
  const message = schema?.message;
  const flagged = new Set(details.map((d) => d.field));
  // After a schema failure the body may hold anything: every value is looked at only if it has its type.
  const events: unknown[] = Array.isArray(body?.auditTrail) ? body.auditTrail : [];
  const auditTrail: SignEvent[] = [];
  events.forEach((raw, i) => {
    const event = raw as Partial<SignRequestBody['auditTrail'][number]> | null;
    if (!event || typeof event !== 'object') return;
    const at = `auditTrail.${i}.timestamp`;
    const timestamp = typeof event.timestamp === 'string' && !flagged.has(at) ? parseIsoTimestamp(event.timestamp) : undefined;
    if (typeof event.timestamp === 'string' && !flagged.has(at) && !timestamp) details.push({ field: at, issue: 'must be an ISO 8601 date-time' });
    const dataAt = `auditTrail.${i}.data`;
    if (event.data !== null && typeof event.data === 'object' && !flagged.has(dataAt)) {
      if (Buffer.byteLength(JSON.stringify(event.data), 'utf8') > MAX_EVENT_DATA_BYTES)
        details.push({ field: dataAt, issue: 'must be at most 16 KB as JSON' });
    }
    if (timestamp && typeof event.type === 'string')
      auditTrail.push({ type: event.type, timestamp, ...(event.data !== undefined ? { data: event.data } : {}) });
  });
  if (details.length > 0) {
    throw new FolioError('VALIDATION_ERROR', message ?? `Invalid request: ${details.map((d) => `${d.field} ${d.issue}`).join('; ')}`, { details });
  }
  return { signer: { ...body.signer, name: body.signer.name.trim() }, auditTrail };
}

/** The sign request's fields without its document (the CLI reads the document itself). */
const { document: _document, ...fields } = SignRequest.properties;
const SignFields = Type.Object(fields, { additionalProperties: false });
export type SignFieldsBody = Omit<SignRequestBody, 'document'>;

/**
 * The route's check for a request built outside HTTP: the request schema without `document` (TypeBox's own
 * validator on the same schema the route compiles with Ajv: one definition of every pattern and limit), then
 * `checkSignRequest`. Throws one VALIDATION_ERROR listing every offending field, as the route answers.
 */
export function checkSignFields(body: SignFieldsBody): CheckedSignRequest {
  const details = schemaDetails([...Value.Errors(SignFields, body)]);
  return checkSignRequest(body as SignRequestBody, details.length > 0 ? { message: `Invalid request: ${describe(details)}`, details } : undefined);
}

/** TypeBox's errors as the route's details (src/http/envelope.ts words Ajv's the same way). */
function schemaDetails(errors: Array<{ keyword: string; instancePath: string; message: string; params: unknown }>): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  for (const e of errors) {
    const at = e.instancePath.slice(1).replaceAll('/', '.');
    // An unknown property comes twice: once on the object, once (keyword 'boolean') on the property itself.
    if (e.keyword === 'additionalProperties') continue;
    if (e.keyword === 'boolean') details.push({ field: at, issue: 'unknown property' });
    else if (e.keyword === 'required') {
      const missing = (e.params as { requiredProperties?: string[] }).requiredProperties ?? [];
      for (const p of missing) details.push({ field: at ? `${at}.${p}` : p, issue: `must have required property '${p}'` });
    } else details.push({ field: at || 'body', issue: (e.keyword === 'pattern' ? patternIssue(at) : undefined) ?? e.message });
  }
  return details;
}

const describe = (details: ErrorDetail[]) => details.map((d) => `${d.field} ${d.issue}`).join('; ');
