/**
 * The audit record embedded as `audit-trail.json` and rendered on the audit pages. Its format (file name,
 * version string, record type) is defined once in src/pdf/audit-trail-format.ts, shared with /v1/verify;
 * it is re-exported here for the signer's callers.
 */
export { AUDIT_TRAIL_FILE_NAME, AUDIT_TRAIL_FORMAT, type AuditEvent, type AuditRecord, type Signer } from '../pdf/index.js';

/** What `Date#toISOString` writes: the record's times are all in this form (parsed once, where the request came in). */
const CANONICAL_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** UTC time as printed on the pages: "2026-11-23 01:45:07 UTC" (milliseconds kept when present). */
export function formatUtc(iso: string): string {
  let s = iso;
  if (!CANONICAL_UTC.test(s)) {
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return iso;
    s = d.toISOString();
  }
  const ms = s.slice(19, 23);
  return `${s.slice(0, 10)} ${s.slice(11, 19)}${ms === '.000' ? '' : ms} UTC`;
}
