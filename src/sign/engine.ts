/**
 * The sign engine (no HTTP): takes the document — sniffed once where it came in, a DOCX already converted
 * by the office engine — and the checked, parsed request (request-check.ts, resolveLevel), builds the audit
 * record and seals the PDF. Nothing here sniffs, parses a date or checks a field again.
 */
import crypto from 'node:crypto';
import { FolioError } from '../errors.js';
import type { SigningIdentity } from './identity-types.js';
import { AUDIT_TRAIL_FORMAT, type AuditRecord, type Signer } from '../pdf/index.js';
import { describeIdentity } from './identity.js';
import type { SafeFetcher } from '../fetch/safe-fetch.js';
import { preparePdf, sealPdf } from './sign-pdf.js';
import { addLongTermValidation, type SignatureLevel } from './ltv.js';
import { assertRevocationObtainable } from './revocation.js';

/** An audit-trail event as the engine takes it: its moment parsed once, where the request came in. */
export interface SignEvent {
  type: string;
  timestamp: Date;
  data?: Record<string, unknown>;
}

/** The level a request gets (resolveLevel, called once where it came in), and whether the caller asked for it. */
export interface ResolvedLevel {
  level: SignatureLevel;
  /** False for the implicit level: TSA_OPTIONAL may then lower B-T to B-B; an asked-for level is never lowered. */
  asked: boolean;
}

/** Plain data and bytes: it crosses to the engine thread as the 'sign.seal' task's input. */
export interface SignRequest {
  /**
   * The document as received, sniffed once by the caller (src/formats/sniff.ts, `signInputKind`): a PDF, or
   * a DOCX whose PDF the office engine made (`pdfOfDocx`, converted in its supervised processes).
   */
  document: Uint8Array;
  pdfOfDocx?: Uint8Array;
  /** Checked by the request schema (name trimmed). */
  signer: Signer;
  auditTrail: SignEvent[];
  eventId?: string;
  metadata?: Record<string, unknown>;
  /** Render the audit pages (default true). */
  auditPages?: boolean;
  level: ResolvedLevel;
}

export interface SignDependencies {
  identity: SigningIdentity;
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
 * Called once, where the request comes in; the engine takes its answer as it is.
 */
export function resolveLevel(
  asked: SignatureLevel | undefined,
  deps: Pick<SignDependencies, 'tsaUrl' | 'identity' | 'urlFetchAllowlist'>,
): ResolvedLevel {
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
  return { level, asked: asked !== undefined };
}

const sha256 = (b: Uint8Array) => crypto.createHash('sha256').update(b).digest('hex');

export async function signDocument(req: SignRequest, deps: SignDependencies): Promise<SignResult> {
  const documentType = req.pdfOfDocx ? 'docx' : 'pdf';
  const { level, asked } = req.level;
  const prepared = await preparePdf(req.pdfOfDocx ?? req.document);
  const key = describeIdentity(deps.identity);
  const metadata = req.metadata;
  const signer: Signer = { name: req.signer.name, email: req.signer.email };
  // The signer's own ip/userAgent win; metadata.ip/userAgent (the signing request's) fill the gaps.
  const ip = req.signer.ip ?? (typeof metadata?.ip === 'string' ? metadata.ip : undefined);
  const userAgent = req.signer.userAgent ?? (typeof metadata?.userAgent === 'string' ? metadata.userAgent : undefined);
  if (ip !== undefined) signer.ip = ip;
  if (userAgent !== undefined) signer.userAgent = userAgent;

  // A PDF signed as it came is hashed once: it is both the document received and the PDF the update follows.
  const documentSha256 = sha256(req.document);
  const record: AuditRecord = {
    format: AUDIT_TRAIL_FORMAT,
    documentSha256,
    documentType,
    pdfSha256: prepared.base === req.document ? documentSha256 : sha256(prepared.base),
    pdfLength: prepared.base.length,
    signer,
    ...(req.eventId !== undefined ? { eventId: req.eventId } : {}),
    ...(metadata !== undefined ? { metadata } : {}),
    signedAt: (deps.now ?? new Date()).toISOString(),
    certificate: { subject: key.subject, fingerprint: key.fingerprint },
    auditTrail: req.auditTrail.map((e) => ({
      type: e.type,
      timestamp: e.timestamp.toISOString(),
      ...(e.data !== undefined ? { data: e.data } : {}),
    })),
  };
  const reason = `Signed electronically by ${req.signer.name} <${req.signer.email}>; sealed by Folio`;
  const sealed = await sealPdf(prepared, record, reason, {
    identity: deps.identity,
    auditPages: req.auditPages ?? true,
    tsaUrl: level === 'B-B' ? undefined : deps.tsaUrl,
    // TSA_OPTIONAL covers the implicit B-T only: a level the caller asked for is never quietly lowered.
    tsaOptional: !asked && (deps.tsaOptional ?? false),
    onTimestampSkipped: deps.onTimestampSkipped,
  });
  let out = sealed.pdf;
  if (level === 'B-LT' || level === 'B-LTA') {
    out = await addLongTermValidation(sealed, {
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
