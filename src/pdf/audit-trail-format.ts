/**
 * The audit-trail format shared by sign and verify, defined once: the signer embeds the record as an
 * attachment named AUDIT_TRAIL_FILE_NAME in the catalog's /Names /EmbeddedFiles tree and renders it on the
 * audit pages; the verifier finds it by that name, accepts it only with this format string, recomputes
 * sha256(file[0:pdfLength]) and compares it with pdfSha256.
 */

/** The attachment's name (the name-tree key, /F and /UF of its file specification). */
export const AUDIT_TRAIL_FILE_NAME = 'audit-trail.json';

/** The record's `format` value; a record carrying another one is not Folio's. */
export const AUDIT_TRAIL_FORMAT = 'folio-audit-trail/1';

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
  format: typeof AUDIT_TRAIL_FORMAT;
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

/**
 * An embedded text that parses as a JSON object carrying AUDIT_TRAIL_FORMAT. Its other fields are as the
 * document has them (anything can be embedded under the name), so the reader checks each one it uses.
 */
export type ClaimedAuditRecord = { [K in keyof AuditRecord]?: unknown } & { format: typeof AUDIT_TRAIL_FORMAT; [key: string]: unknown };

/** Parses an embedded audit file: the claimed record, or why the text is not one. */
export function parseAuditRecord(text: string): { record: ClaimedAuditRecord } | { problem: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { problem: `${AUDIT_TRAIL_FILE_NAME} is not JSON` };
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return { problem: `${AUDIT_TRAIL_FILE_NAME} is not an object` };
  const record = parsed as { format?: unknown };
  if (record.format !== AUDIT_TRAIL_FORMAT) return { problem: `${AUDIT_TRAIL_FILE_NAME} is not ${AUDIT_TRAIL_FORMAT}` };
  return { record: parsed as ClaimedAuditRecord };
}
