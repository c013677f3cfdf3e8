/**
 * The audit record embedded as `audit-trail.json` and rendered on the audit pages. Its shape is the
 * interface agreed with /v1/verify ("folio-audit-trail/1"): verify recomputes sha256(file[0:pdfLength])
 * and compares it with pdfSha256.
 */

export interface AuditEvent {
  type: string;
  timestamp: string;
  data?: Record<string, unknown>;
}

export interface Signer {
  name: string;
  email: string;
  ip?: string;
  userAgent?: string;
}

export interface AuditRecord {
  format: 'folio-audit-trail/1';
  /** SHA-256 (lowercase hex) of the document bytes as received (PDF or DOCX). */
  documentSha256: string;
  documentType: 'pdf' | 'docx';
  /** SHA-256 of the PDF bytes before Folio's incremental update, and their length. */
  pdfSha256: string;
  pdfLength: number;
  signer: Signer;
  eventId?: string;
  metadata?: Record<string, unknown>;
  signedAt: string;
  certificate: { subject: string; fingerprint: string };
  auditTrail: AuditEvent[];
}

export const AUDIT_TRAIL_FILE_NAME = 'audit-trail.json';

/** UTC time as printed on the pages: "2026-11-23 01:45:07 UTC" (milliseconds kept when present). */
export function formatUtc(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const s = d.toISOString();
  const ms = s.slice(19, 23);
  return `${s.slice(0, 10)} ${s.slice(11, 19)}${ms === '.000' ? '' : ms} UTC`;
}
