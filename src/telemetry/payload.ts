/**
 * Validation of a `POST /v1/collect` body (docs/api.md § Telemetry ingest) into what the store keeps. Hand-written rather than a
 * JSON schema so that every offending field is named in `details` with a precise issue, and so the common
 * path (one small event) costs a few property reads. Unknown properties are ignored, not stored: clients in
 * the wild are newer than the server, and nothing we do not know about is kept.
 *
 * Text is checked before a request can join a batch: a U+0000 or a lone UTF-16 surrogate in any stored
 * string is a 400 naming the field. PostgreSQL refuses U+0000 in `text`, so one such value used to fail the
 * whole group commit and every other licence's events with it; a lone surrogate cannot be encoded as UTF-8
 * at all (the driver would silently store U+FFFD instead). Invalid UTF-8 in the body never gets this far:
 * the body is decoded with replacement characters, which are valid text, so it is stored cleaned.
 */
import { randomUUID } from 'node:crypto';
import { FolioError, type ErrorDetail } from '../errors.js';

export const MAX_BODY_BYTES = 64 * 1024;
export const MAX_EVENTS = 100;
export const MAX_METADATA_BYTES = 4 * 1024;
export const MAX_DOCUMENT_ID_CHARS = 128;
export const MAX_LICENSE_KEY_CHARS = 256;
/** SuperDoc sends an empty X-License-Key when none was configured; it counts under the community key. */
export const COMMUNITY_LICENSE_KEY = 'community-and-eval-agplv3';

export type VersionField = 'libraryVersion' | 'folioVersion' | 'superdocVersion';
const VERSION_FIELDS: VersionField[] = ['libraryVersion', 'folioVersion', 'superdocVersion'];

export interface CollectEvent {
  /** Client clock, as sent (validated ISO 8601). */
  timestamp: string;
  /** null: the client could not identify the document; such opens count, but never as a document. */
  documentId: string | null;
  documentCreatedAt: string | null;
}

/** One accepted request, as stored. Deliberately has no field for the client's address. */
export interface CollectRecord {
  /** Assigned here, once per request: makes writing it twice store it once (store.ts). */
  uid: string;
  licenseKey: string;
  receivedAt: number;
  versionField: VersionField;
  version: string;
  hostname: string;
  /** Origin and path of browserInfo.currentUrl; query and fragment are dropped before storing. */
  pageOrigin: string;
  pagePath: string;
  userAgent: string;
  screenWidth: number | null;
  screenHeight: number | null;
  /** JSON text of `metadata`, ≤ 4 KB, or null. */
  metadata: string | null;
  events: CollectEvent[];
}

/** ISO 8601 date-time with a zone (what `Date.toISOString()` and RFC 3339 produce). */
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?(?:Z|[+-]\d{2}(?::?\d{2})?)$/;
/** `dcterms:created` is W3CDTF: a date, or a date-time whose zone Word sometimes leaves out. */
const W3CDTF = /^\d{4}(?:-\d{2}(?:-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?)?)?$/;
const PRINTABLE = /^[\x20-\x7e]*$/;
/** U+0000, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
// eslint-disable-next-line no-control-regex -- finding U+0000 is the point
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** The issue to report for text that cannot be stored, or undefined when it can. */
export function unstorableText(v: string): string | undefined {
  const m = UNSTORABLE.exec(v);
  if (!m) return undefined;
  return m[0] === '\u0000' ? 'must not contain U+0000 (NUL)' : 'must not contain a lone UTF-16 surrogate (invalid Unicode)';
}

/** First string (key or value) in a JSON value that cannot be stored, as [path, issue]. */
function unstorableIn(v: unknown, at: string, depth = 0): [string, string] | undefined {
  if (typeof v === 'string') {
    const issue = unstorableText(v);
    return issue ? [at, issue] : undefined;
  }
  if (typeof v !== 'object' || v === null || depth > 32) return undefined;
  for (const [k, x] of Object.entries(v)) {
    const keyIssue = unstorableText(k);
    if (keyIssue) return [at, `a property name ${keyIssue}`];
    const inner = unstorableIn(x, Array.isArray(v) ? `${at}[${k}]` : `${at}.${k}`, depth + 1);
    if (inner) return inner;
  }
  return undefined;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function validDate(text: string): boolean {
  // The regex admits 2024-13-45; Date.parse refuses it. Dates without a zone parse as local: fine for a check.
  return !Number.isNaN(Date.parse(text.length <= 7 ? `${text.length === 4 ? text + '-01' : text}-01` : text.replace(',', '.')));
}

/** Validates the license key header: absent → 401; empty → community bucket. */
export function licenseKeyFrom(header: string | string[] | undefined): string {
  if (header === undefined) {
    throw new FolioError('AUTHENTICATION_ERROR', 'Missing X-License-Key header');
  }
  const value = Array.isArray(header) ? (header[0] ?? '') : header;
  const key = value.trim();
  if (key.length > MAX_LICENSE_KEY_CHARS || !PRINTABLE.test(key)) {
    throw new FolioError('AUTHENTICATION_ERROR', `X-License-Key must be at most ${MAX_LICENSE_KEY_CHARS} printable ASCII characters`);
  }
  return key === '' ? COMMUNITY_LICENSE_KEY : key;
}

/** True for SuperDoc 0.x–1.x batched payloads: a JSON array of usage/parsing records. Answered 2xx, never billed. */
export function isLegacyBatch(body: unknown): body is unknown[] {
  return Array.isArray(body);
}

function str(details: ErrorDetail[], obj: Record<string, unknown>, key: string, field: string, max: number): string {
  const v = obj[key];
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') {
    details.push({ field, issue: 'must be a string' });
    return '';
  }
  if (v.length > max) {
    details.push({ field, issue: `must be at most ${max} characters` });
    return '';
  }
  const issue = unstorableText(v);
  if (issue) {
    details.push({ field, issue });
    return '';
  }
  return v;
}

function dimension(details: ErrorDetail[], obj: Record<string, unknown>, key: string, field: string): number | null {
  const v = obj[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 1_000_000) {
    details.push({ field, issue: 'must be a non-negative integer' });
    return null;
  }
  return v;
}

/** Splits a page URL into origin and path, dropping query and fragment (they can hold personal data). */
export function pageOf(currentUrl: string): { origin: string; path: string } {
  if (currentUrl === '') return { origin: '', path: '' };
  try {
    const u = new URL(currentUrl);
    if (u.protocol === 'http:' || u.protocol === 'https:') return { origin: u.origin, path: u.pathname };
    return { origin: u.protocol, path: '' };
  } catch {
    return { origin: '', path: '' };
  }
}

/**
 * Validates a parsed body; throws 400 VALIDATION_ERROR listing every offending field. `receivedAt` is the
 * server clock, which alone decides the billing month.
 */
export function parseCollectBody(body: unknown, licenseKey: string, receivedAt: number): CollectRecord {
  if (!isPlainObject(body)) {
    throw new FolioError('VALIDATION_ERROR', 'The body must be a JSON object', { details: [{ field: 'body', issue: 'must be an object' }] });
  }
  const details: ErrorDetail[] = [];

  let versionField: VersionField | undefined;
  let version = '';
  for (const f of VERSION_FIELDS) {
    if (body[f] === undefined) continue;
    if (versionField) {
      details.push({ field: f, issue: `only one of ${VERSION_FIELDS.join(', ')} may be sent` });
      continue;
    }
    versionField = f;
    const v = body[f];
    if (typeof v !== 'string' || v.length === 0 || v.length > 64 || !PRINTABLE.test(v)) {
      details.push({ field: f, issue: 'must be a non-empty string of at most 64 printable characters' });
    } else version = v;
  }
  if (!versionField) details.push({ field: 'libraryVersion', issue: `one of ${VERSION_FIELDS.join(', ')} is required` });

  let hostname = '';
  let userAgent = '';
  let page = { origin: '', path: '' };
  let screenWidth: number | null = null;
  let screenHeight: number | null = null;
  const info = body.browserInfo;
  if (info !== undefined && info !== null) {
    if (!isPlainObject(info)) details.push({ field: 'browserInfo', issue: 'must be an object' });
    else {
      userAgent = str(details, info, 'userAgent', 'browserInfo.userAgent', 1024);
      hostname = str(details, info, 'hostname', 'browserInfo.hostname', 255).toLowerCase();
      page = pageOf(str(details, info, 'currentUrl', 'browserInfo.currentUrl', 4096));
      const screen = info.screenSize;
      if (screen !== undefined && screen !== null) {
        if (!isPlainObject(screen)) details.push({ field: 'browserInfo.screenSize', issue: 'must be an object' });
        else {
          screenWidth = dimension(details, screen, 'width', 'browserInfo.screenSize.width');
          screenHeight = dimension(details, screen, 'height', 'browserInfo.screenSize.height');
        }
      }
    }
  }

  let metadata: string | null = null;
  if (body.metadata !== undefined && body.metadata !== null) {
    if (!isPlainObject(body.metadata)) details.push({ field: 'metadata', issue: 'must be an object' });
    else {
      const bad = unstorableIn(body.metadata, 'metadata');
      if (bad) details.push({ field: bad[0], issue: bad[1] });
      metadata = JSON.stringify(body.metadata);
      if (Buffer.byteLength(metadata) > MAX_METADATA_BYTES) {
        details.push({ field: 'metadata', issue: `must be at most ${MAX_METADATA_BYTES} bytes as JSON` });
        metadata = null;
      }
    }
  }

  const events: CollectEvent[] = [];
  const raw = body.events;
  if (!Array.isArray(raw)) details.push({ field: 'events', issue: 'must be an array of 1 to 100 events' });
  else if (raw.length === 0 || raw.length > MAX_EVENTS) {
    details.push({ field: 'events', issue: `must hold 1 to ${MAX_EVENTS} events (got ${raw.length})` });
  } else {
    raw.forEach((e, i) => {
      const at = `events[${i}]`;
      if (!isPlainObject(e)) {
        details.push({ field: at, issue: 'must be an object' });
        return;
      }
      const before = details.length;
      const ts = e.timestamp;
      if (typeof ts !== 'string' || ts.length > 40 || !ISO_DATE_TIME.test(ts) || !validDate(ts)) {
        details.push({ field: `${at}.timestamp`, issue: 'must be an ISO 8601 date-time with a zone' });
      }
      const id = e.documentId;
      if (id !== null && id !== undefined) {
        if (typeof id !== 'string') details.push({ field: `${at}.documentId`, issue: 'must be a string or null' });
        else if (id.length === 0 || id.length > MAX_DOCUMENT_ID_CHARS || !PRINTABLE.test(id)) {
          details.push({ field: `${at}.documentId`, issue: `must be 1 to ${MAX_DOCUMENT_ID_CHARS} printable ASCII characters` });
        }
      }
      const created = e.documentCreatedAt;
      if (created !== null && created !== undefined) {
        if (typeof created !== 'string' || created.length > 40 || !W3CDTF.test(created.trim()) || !validDate(created.trim())) {
          details.push({ field: `${at}.documentCreatedAt`, issue: 'must be an ISO 8601 date or date-time, or null' });
        }
      }
      if (details.length === before) {
        events.push({
          timestamp: ts as string,
          documentId: (id as string | null | undefined) ?? null,
          documentCreatedAt: created == null ? null : (created as string).trim(),
        });
      }
    });
  }

  if (details.length > 0) {
    throw new FolioError('VALIDATION_ERROR', 'The telemetry payload is invalid', { details: details.slice(0, 50) });
  }
  return {
    uid: randomUUID(),
    licenseKey,
    receivedAt,
    versionField: versionField!,
    version,
    hostname,
    pageOrigin: page.origin,
    pagePath: page.path,
    userAgent,
    screenWidth,
    screenHeight,
    metadata,
    events,
  };
}

/** `YYYY-MM` of an epoch-millisecond instant, in UTC: the billing period. */
export function monthOf(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 7);
}
