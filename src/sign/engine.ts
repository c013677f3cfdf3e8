/**
 * The sign engine (no HTTP): takes the document bytes and the signer's data, converts a DOCX to PDF
 * through the office engine, builds the audit record and seals the PDF.
 */
import crypto from 'node:crypto';
import { FolioError } from '../errors.js';
import { isPdf, isZip } from '../formats/sniff.js';
import type { OfficeEngine } from '../office/types.js';
import type { SigningIdentity } from '../services.js';
import { AUDIT_TRAIL_FORMAT, type AuditEvent, type AuditRecord, type Signer } from '../pdf/index.js';
import { describeIdentity } from './identity.js';
import type { SafeFetcher } from '../fetch/safe-fetch.js';
import { preparePdf, sealPdf } from './sign-pdf.js';
import { addLongTermValidation, type SignatureLevel } from './ltv.js';
import { assertRevocationObtainable } from './revocation.js';

export interface SignRequest {
  document: Uint8Array;
  signer: Signer;
  auditTrail: AuditEvent[];
  eventId?: string;
  metadata?: Record<string, unknown>;
  /** Render the audit pages (default true). */
  auditPages?: boolean;
  /** PAdES level; absent: B-T when a TSA is configured, else B-B (the behaviour before levels existed). */
  level?: SignatureLevel;
}

export interface SignDependencies {
  identity: SigningIdentity;
  office?: OfficeEngine;
  tsaUrl?: string;
  tsaOptional?: boolean;
  /** B-LT/B-LTA with a SIGNING_P12 identity: revocation data is fetched from allow-listed hosts only. */
  fetcher?: SafeFetcher;
  urlFetchAllowlist?: string[];
  onTimestampSkipped?: (reason: string) => void;
  /** The signing time; the current time when absent. */
  now?: Date;
}

export interface SignResult {
  pdf: Uint8Array;
  record: AuditRecord;
  fieldName: string;
  timestamped: boolean;
  repaired: boolean;
  auditPageCount: number;
  /** The level the output has (B-B when TSA_OPTIONAL let an implicit B-T go out without a timestamp). */
  level: SignatureLevel;
}

/**
 * The level a request gets, checked before any work: every level above B-B needs the TSA, and B-LT/B-LTA
 * need the signer's revocation data (made by Folio's own CA, or fetchable from an allow-listed host).
 */
export function resolveLevel(
  asked: SignatureLevel | undefined,
  deps: Pick<SignDependencies, 'tsaUrl' | 'identity' | 'urlFetchAllowlist'>,
): SignatureLevel {
  const level = asked ?? (deps.tsaUrl ? 'B-T' : 'B-B');
  if (level !== 'B-B' && !deps.tsaUrl) {
    throw new FolioError(
      'VALIDATION_ERROR',
      `PAdES ${level} needs a timestamp authority and this server has none (TSA_URL is not set); sign at level B-B`,
      {
        details: [{ field: 'level', issue: `${level} needs TSA_URL on the server` }],
      },
    );
  }
  if (level === 'B-LT' || level === 'B-LTA') assertRevocationObtainable(deps.identity, deps.urlFetchAllowlist ?? [], level);
  return level;
}

const sha256 = (b: Uint8Array) => crypto.createHash('sha256').update(b).digest('hex');

export async function signDocument(req: SignRequest, deps: SignDependencies): Promise<SignResult> {
  let documentType: 'pdf' | 'docx';
  let pdf: Uint8Array;
  if (isPdf(req.document)) {
    documentType = 'pdf';
    pdf = req.document;
  } else if (isZip(req.document)) {
    documentType = 'docx';
    if (!deps.office) throw new FolioError('SERVICE_UNAVAILABLE', 'DOCX conversion is not available on this server', { retryAfter: 30 });
    pdf = await deps.office.docxToPdf(req.document);
  } else {
    throw new FolioError('INVALID_FILE_FORMAT', 'The document is neither a PDF nor a DOCX', {
      details: [{ field: 'document', issue: 'not a PDF or DOCX file' }],
    });
  }

  const level = resolveLevel(req.level, deps);
  const prepared = await preparePdf(pdf);
  const key = describeIdentity(deps.identity);
  const metadata = req.metadata;
  const signer: Signer = { name: req.signer.name, email: req.signer.email };
  // The signer's own ip/userAgent win; metadata.ip/userAgent (the signing request's) fill the gaps.
  const ip = req.signer.ip ?? (typeof metadata?.ip === 'string' ? metadata.ip : undefined);
  const userAgent = req.signer.userAgent ?? (typeof metadata?.userAgent === 'string' ? metadata.userAgent : undefined);
  if (ip !== undefined) signer.ip = ip;
  if (userAgent !== undefined) signer.userAgent = userAgent;

  const record: AuditRecord = {
    format: AUDIT_TRAIL_FORMAT,
    documentSha256: sha256(req.document),
    documentType,
    pdfSha256: sha256(prepared.base),
    pdfLength: prepared.base.length,
    signer,
    ...(req.eventId !== undefined ? { eventId: req.eventId } : {}),
    ...(metadata !== undefined ? { metadata } : {}),
    signedAt: (deps.now ?? new Date()).toISOString(),
    certificate: { subject: key.subject, fingerprint: key.fingerprint },
    auditTrail: req.auditTrail.map((e) => ({
      type: e.type,
      timestamp: new Date(e.timestamp).toISOString(),
      ...(e.data !== undefined ? { data: e.data } : {}),
    })),
  };
  const reason = `Signed electronically by ${req.signer.name} <${req.signer.email}>; sealed by Folio`;
  const sealed = await sealPdf(prepared, record, reason, {
    identity: deps.identity,
    auditPages: req.auditPages ?? true,
    tsaUrl: level === 'B-B' ? undefined : deps.tsaUrl,
    // TSA_OPTIONAL covers the implicit B-T only: a level the caller asked for is never quietly lowered.
    tsaOptional: req.level === undefined && (deps.tsaOptional ?? false),
    onTimestampSkipped: deps.onTimestampSkipped,
  });
  let out = sealed.pdf;
  if (level === 'B-LT' || level === 'B-LTA') {
    out = await addLongTermValidation(out, sealed, {
      identity: deps.identity,
      level,
      tsaUrl: deps.tsaUrl!,
      fetcher: deps.fetcher,
      allowlist: deps.urlFetchAllowlist ?? [],
    });
  }
  return {
    pdf: out,
    record,
    fieldName: sealed.fieldName,
    timestamped: sealed.timestamped,
    repaired: prepared.repaired,
    auditPageCount: sealed.auditPageCount,
    level: level === 'B-T' && !sealed.timestamped ? 'B-B' : level,
  };
}
