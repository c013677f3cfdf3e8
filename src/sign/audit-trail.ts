/**
 * The audit record embedded as `audit-trail.json` and rendered on the audit pages. Its format (file name,
 * version string, record type) is defined once in src/pdf/audit-trail-format.ts, shared with /v1/verify;
 * it is re-exported here for the signer's callers.
 */
export { AUDIT_TRAIL_FILE_NAME, AUDIT_TRAIL_FORMAT, type AuditEvent, type AuditRecord, type Signer } from '../pdf/index.js';

/** UTC time as printed on the pages: "2026-11-23 01:45:07 UTC" (milliseconds kept when present). */
export function formatUtc(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const s = d.toISOString();
  const ms = s.slice(19, 23);
  return `${s.slice(0, 10)} ${s.slice(11, 19)}${ms === '.000' ? '' : ms} UTC`;
}
