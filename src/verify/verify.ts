/**
 * verifyPdf: the whole validation of one PDF, as docs/api.md § Verify answers it. Per signature: ByteRange and
 * coverage, digest and CMS signature, certificate path and timestamp, then the modifications made after the
 * revision it covers, judged against DocMDP/FieldMDP. Indications follow ETSI EN 319 102-1 (as EU DSS and
 * pyHanko use them); `valid` is about integrity and modifications only, trust is reported beside it.
 */
import type { X509Certificate } from 'node:crypto';
import { decodePdfText, openPdf, isDict, isName, isString, isRef, type PdfDict, type PdfDocument } from '../pdf/index.js';
import {
  checkByteRange,
  checkCrypto,
  fileSha256Hex,
  findSignatures,
  pdfDateOf,
  type Coverage,
  type FoundSignature,
  type UnsignedSignatureField,
} from './signatures.js';
import { ModificationAnalyzer, levelRank, type ModificationDetail, type ModificationLevel } from './modifications.js';
import { buildPath, subjectParts, keyUsageOf, EKU_TIME_STAMPING, type LinkMemo, type TrustStore } from './certificates.js';
import { verifyCms, createDigest } from './cms.js';
import { readAuditTrail, type AuditTrailAnswer } from './audit-trail.js';
import { auditRevisionShapeProblem } from './audit-revision.js';
import { checkRevocation, cmsRevocationItems, revocationUrls, sha1Hex, type RevocationItem, type RevocationReport } from './revocation.js';
import { padesLevel, readDss, type DssData, type PadesLevel } from './ltv.js';
import { readElement, tryDer } from '../crypto/der.js';

export type Indication = 'TOTAL_PASSED' | 'INDETERMINATE' | 'TOTAL_FAILED';

export interface SignerInfo {
  name: string | null;
  email: string | null;
  subject: string;
  issuer: string;
  serialNumber: string;
  notBefore: string;
  notAfter: string;
  fingerprint: string;
}

export interface TimestampInfo {
  time: string;
  valid: boolean;
  trusted: boolean;
  tsaSubject: string | null;
}

export interface DocMdpInfo {
  permission: 1 | 2 | 3;
  respected: boolean;
  /** Field names locked by FieldMDP transforms of this signature. */
  lockedFields?: string[] | 'ALL';
}

export interface SignatureReport {
  /** `timestamp` for a document timestamp (/SubFilter /ETSI.RFC3161), `signature` otherwise. */
  type: 'signature' | 'timestamp';
  /** PAdES baseline level reached (ltv.ts); null for a document timestamp or a non-PAdES signature. */
  level: PadesLevel | null;
  revocation: RevocationReport;
  fieldName: string | null;
  subFilter: string | null;
  digestAlgorithm: string | null;
  signatureAlgorithm: string | null;
  signedAt: string | null;
  timestamp?: TimestampInfo;
  signer: SignerInfo | null;
  byteRange: number[];
  coverage: Coverage;
  integrity: { digestMatches: boolean; signatureValid: boolean };
  certificate: { chainValid: boolean; trusted: boolean; validAtSigningTime: boolean };
  modificationsAfter: { level: ModificationLevel; details: ModificationDetail[] };
  docMdp?: DocMdpInfo;
  indication: Indication;
  subIndication?: string;
  issuedByThisService: boolean;
  /** 1-based revision the signature covers. */
  revision: number;
  certifying: boolean;
  orphaned: boolean;
  valid: boolean;
  problems: string[];
  warnings: string[];
}

export interface VerifyResult {
  valid: boolean;
  indication: Indication | 'NO_SIGNATURE_FOUND';
  reason: string;
  /** Entries of `signatures`: signatures and document timestamps. */
  signatureCount: number;
  documentTimestampCount: number;
  signer?: { name: string | null; email: string | null; signedAt: string | null };
  signatures: SignatureReport[];
  unsignedSignatureFields: Array<{ fieldName: string; hasAppearance: boolean }>;
  document: { sha256: string; revisions: number; size: number };
  auditTrail?: AuditTrailAnswer;
}

export interface VerifyOptions {
  trust: TrustStore;
  /** Revocation data fetched online (revocation-fetch.ts), by signer certificate fingerprint. */
  online?: Map<string, RevocationItem[]>;
  /** Filled with the signer certificates that lack revocation data and the URLs that could provide it. */
  onlineCandidates?: Array<{ fingerprint: string; crl: string[]; ocsp: string[]; cert: X509Certificate; issuer?: X509Certificate }>;
}

/**
 * Certificate links checked (`child.verify(issuer.publicKey)`), kept across calls on this thread: certificates are
 * public, not documents, and come from the bounded parse cache (cms.ts `certificateOf`) or the trust store, so a
 * link is keyed by the very objects that cache holds and goes when they are evicted. The service's own signer and
 * root recur in nearly every document Folio verifies; the check (an RSA or ECDSA verification) was a sixth of a
 * one-signature verify.
 */
const links: LinkMemo = new WeakMap();

export function verifyPdf(bytes: Uint8Array, options: VerifyOptions): VerifyResult {
  const doc = openPdf(bytes);
  const fields = findSignatures(doc);
  const analyzer = new ModificationAnalyzer(doc, fields);
  const certification = findCertification(doc, fields.signatures);

  // Bodies of every signature dictionary, including older versions of the same object (a placeholder filled
  // in a later revision): a /ByteRange outside all of them is a stray (signature wrapping).
  const known: Array<[number, number]> = [];
  for (let p = doc.indexOf('/ByteRange'); p >= 0; p = doc.indexOf('/ByteRange', p + 10)) {
    const body = doc.bodyBefore(p);
    const obj = body && doc.objectAt(body.offset, doc.last);
    if (obj && obj.end > p && isDict(obj.value) && obj.value.map.has('ByteRange')) known.push([obj.offset, obj.end]);
  }
  // A signature dictionary inline in its field's /V: the field's body holds its /ByteRange.
  for (const s of fields.signatures) if (s.inline && s.sigOffset !== undefined && s.sigEnd !== undefined) known.push([s.sigOffset, s.sigEnd]);
  const dss = readDss(doc);
  const examined = fields.signatures.map((sig) => examineSignature(doc, sig, options, known, dss, links));
  const auditRevisions = findAuditRevisions(doc, examined, analyzer);
  const reports = examined.map((ex) => judgeSignature(doc, ex, analyzer, certification, auditRevisions));
  assignLevels(examined, reports, dss, options.trust);
  const valid = reports.length > 0 && reports.every((r) => r.valid);
  const indication: VerifyResult['indication'] =
    reports.length === 0
      ? 'NO_SIGNATURE_FOUND'
      : reports.some((r) => r.indication === 'TOTAL_FAILED')
        ? 'TOTAL_FAILED'
        : reports.some((r) => r.indication === 'INDETERMINATE')
          ? 'INDETERMINATE'
          : 'TOTAL_PASSED';
  const sigs = reports.filter((r) => r.type === 'signature');
  const lastSig = [...sigs].reverse().find((r) => !r.orphaned) ?? sigs[sigs.length - 1];
  const result: VerifyResult = {
    valid,
    indication,
    reason: summarise(reports, fields.unsigned.filter((u) => u.hasAppearance).length),
    signatureCount: reports.length,
    documentTimestampCount: reports.length - sigs.length,
    signatures: reports,
    unsignedSignatureFields: fields.unsigned.map((u: UnsignedSignatureField) => ({ fieldName: u.fieldName, hasAppearance: u.hasAppearance })),
    document: { sha256: fileSha256Hex(doc), revisions: doc.revisions.length, size: bytes.length },
  };
  if (lastSig) result.signer = { name: lastSig.signer?.name ?? null, email: lastSig.signer?.email ?? null, signedAt: lastSig.signedAt };
  const intactRevisions = reports
    .filter((r) => r.integrity.digestMatches && r.integrity.signatureValid && (r.coverage === 'ENTIRE_FILE' || r.coverage === 'ENTIRE_REVISION'))
    .map((r) => r.revision - 1);
  const audit = readAuditTrail(doc, intactRevisions);
  if (audit) result.auditTrail = audit;
  // Folio's own signatures are made with the service's certificate on behalf of a person, who is named in
  // the embedded audit trail: that person is the answer's `signer` (the certificate stays in signatures[].signer),
  // when the trail is intact and covered by that very signature.
  const person = lastSig && audit ? auditPerson(audit, lastSig) : undefined;
  if (person && result.signer) result.signer = { ...result.signer, ...person };
  return result;
}

function auditPerson(audit: AuditTrailAnswer, sig: SignatureReport): { name: string | null; email: string | null } | undefined {
  if (!sig.issuedByThisService || !sig.valid || !audit.hashMatches || !audit.coveredBySignature) return undefined;
  // The audit record names the certificate it was signed with: it must be this signature's.
  const cert = audit.certificate as { fingerprint?: unknown } | undefined;
  if (typeof cert?.fingerprint !== 'string' || cert.fingerprint !== sig.signer?.fingerprint) return undefined;
  const s = audit.signer;
  if (typeof s !== 'object' || s === null) return undefined;
  const { name, email } = s as { name?: unknown; email?: unknown };
  if (typeof name !== 'string' && typeof email !== 'string') return undefined;
  return { name: typeof name === 'string' ? name : null, email: typeof email === 'string' ? email : null };
}

interface Certification {
  sig: FoundSignature;
  permission: 1 | 2 | 3;
}

/** The certifying signature: a /Reference DocMDP transform, or the catalog's /Perms /DocMDP. */
function findCertification(doc: PdfDocument, sigs: FoundSignature[]): Certification | undefined {
  const last = doc.last;
  const perms = doc.dictAt(doc.catalogAt(last)?.map.get('Perms'), last);
  const permsRef = perms?.map.get('DocMDP');
  for (const sig of sigs) {
    const docMdp = transforms(doc, sig.sigDict).find((t) => t.method === 'DocMDP');
    const viaPerms = isRef(permsRef) && permsRef.num === sig.sigNum;
    if (docMdp || viaPerms) {
      const p = docMdp?.params?.map.get('P');
      return { sig, permission: p === 1 || p === 3 ? p : 2 };
    }
  }
  return undefined;
}

function transforms(doc: PdfDocument, sigDict: PdfDict): Array<{ method: string; params?: PdfDict }> {
  const last = doc.last;
  const refs = doc.deref(sigDict.map.get('Reference'), last);
  if (!Array.isArray(refs)) return [];
  return refs.flatMap((r) => {
    const d = doc.dictAt(r, last);
    const m = d?.map.get('TransformMethod');
    return d && isName(m) ? [{ method: m.name, params: doc.dictAt(d.map.get('TransformParams'), last) }] : [];
  });
}

function fieldMdpLocks(doc: PdfDocument, sigDict: PdfDict): string[] | 'ALL' | undefined {
  const t = transforms(doc, sigDict).find((x) => x.method === 'FieldMDP');
  if (!t?.params) return undefined;
  const action = t.params.map.get('Action');
  const fieldsV = doc.deref(t.params.map.get('Fields'), doc.last);
  const names = Array.isArray(fieldsV) ? fieldsV.flatMap((f) => (isString(f) ? [decodePdfText(f.bytes)] : [])) : [];
  if (isName(action, 'All')) return 'ALL';
  if (isName(action, 'Include')) return names;
  if (isName(action, 'Exclude')) return names.map((n) => `!${n}`);
  return undefined;
}

/** First pass over a signature: structure, cryptography, timestamp and certificate path. */
function examineSignature(
  doc: PdfDocument,
  sig: FoundSignature,
  options: VerifyOptions,
  known: Array<[number, number]>,
  dss: DssData | undefined,
  links: LinkMemo,
) {
  const trust = options.trust;
  const last = doc.last;
  const problems: string[] = [];
  const warnings: string[] = [];
  const subFilterV = doc.deref(sig.sigDict.map.get('SubFilter'), last);
  const subFilter = isName(subFilterV) ? subFilterV.name : null;
  const br = checkByteRange(doc, sig, known);
  problems.push(...br.formatErrors);
  if (sig.orphaned) problems.push('ORPHANED_SIGNATURE: no signature field of the final revision points at this signature dictionary');

  const crypt = checkCrypto(doc, subFilter ?? undefined, br);
  const cms = crypt?.cms;
  if (cms) {
    problems.push(...cms.errors);
    warnings.push(...cms.warnings);
  }
  const digestMatches = !!crypt?.digestMatches;
  const signatureValid = !!crypt?.signatureValid;
  const type: SignatureReport['type'] = subFilter === 'ETSI.RFC3161' ? 'timestamp' : 'signature';
  // A document timestamp's time is its token's genTime, whatever /M claims.
  const claimed =
    (type === 'timestamp' ? cms?.tstInfo?.genTime : undefined) ??
    cms?.signingTime ??
    pdfDateOf(doc.deref(sig.sigDict.map.get('M'), last)) ??
    cms?.tstInfo?.genTime;

  // Signature timestamp (PAdES B-T): the token imprints the SignerInfo signature value.
  let timestamp: TimestampInfo | undefined;
  if (cms?.timestampToken && cms.signatureValue) {
    const sv = cms.signatureValue;
    const tsa = verifyCms(cms.timestampToken, () => undefined);
    const tst = tsa.tstInfo;
    const h = tst?.imprintAlgorithm ? createDigest(tst.imprintAlgorithm) : undefined;
    const imprintOk = !!tst && !!h && h.update(sv).digest().equals(Buffer.from(tst.imprint));
    const tsaPath = tsa.signerCertificate && tst ? buildPath(tsa.signerCertificate, tsa.certificates, trust, tst.genTime, links) : undefined;
    // RFC 3161 §2.3: the TSA's certificate carries the timeStamping extended key usage.
    const tsaEku = !!tsa.signerCertificate?.keyUsage?.includes(EKU_TIME_STAMPING);
    if (tsa.signerCertificate && !tsaEku) warnings.push('TIMESTAMP_INVALID: the TSA certificate lacks the timeStamping extended key usage');
    timestamp = {
      time: tst?.genTime.toISOString() ?? '',
      valid: imprintOk && tsaEku && tsa.signatureValid && tsa.digestMatches && tsa.errors.length === 0,
      trusted: !!tsaPath?.trusted,
      tsaSubject: tsa.signerCertificate ? tsa.signerCertificate.subject.replace(/\n/g, ', ') : null,
    };
    if (!timestamp.valid && tsaEku) warnings.push('TIMESTAMP_INVALID: the signature timestamp token does not verify');
  }

  let signer: SignerInfo | null = null;
  let path: ReturnType<typeof buildPath> | undefined;
  let revocation: RevocationReport = { status: 'NOT_CHECKED', sources: [] };
  let caRevoked: string | undefined;
  let signerRevokedLater: string | undefined;
  let ltvCerts: X509Certificate[] = [];
  const signerCert: X509Certificate | undefined = cms?.signerCertificate;
  const at = timestamp?.valid ? new Date(timestamp.time) : (claimed ?? new Date());
  if (signerCert) {
    const parts = subjectParts(signerCert);
    signer = {
      name: parts.name ?? null,
      email: parts.email ?? null,
      subject: signerCert.subject.replace(/\n/g, ', '),
      issuer: signerCert.issuer.replace(/\n/g, ', '),
      serialNumber: signerCert.serialNumber,
      notBefore: new Date(signerCert.validFrom).toISOString(),
      notAfter: new Date(signerCert.validTo).toISOString(),
      fingerprint: signerCert.fingerprint256,
    };
    // The VRI entry of this signature: keyed by the SHA-1 of its /Contents (as written, or without the padding).
    const contents = br.contents?.bytes;
    const tlv = contents && tryDer(() => readElement(contents));
    const vri = contents ? (dss?.vri.get(sha1Hex(contents)) ?? (tlv ? dss?.vri.get(sha1Hex(contents.subarray(0, tlv.end))) : undefined)) : undefined;
    ltvCerts = [...(dss?.certs ?? []), ...(vri?.certs ?? [])];
    path = buildPath(signerCert, [...cms!.certificates, ...ltvCerts], trust, at, links);
    const docItems = [...(vri?.items ?? []), ...(dss?.items ?? []), ...cmsRevocationItems(cms!.revocationRaw)];
    const itemsFor = (c: X509Certificate) => [...docItems, ...(options.online?.get(c.fingerprint256) ?? [])];
    const wantOnline = (cert: X509Certificate, issuer: X509Certificate) => {
      if (options.onlineCandidates && !options.onlineCandidates.some((c) => c.fingerprint === cert.fingerprint256))
        options.onlineCandidates.push({ fingerprint: cert.fingerprint256, ...revocationUrls(cert), cert, issuer });
    };
    const issuer = path.chainValid && path.path.length > 1 ? path.path[1] : undefined;
    revocation = checkRevocation(signerCert, issuer, itemsFor(signerCert), at);
    if (issuer && (revocation.status === 'NOT_CHECKED' || revocation.status === 'UNKNOWN')) wantOnline(signerCert, issuer);
    if (revocation.status !== 'REVOKED') signerRevokedLater = revocation.revokedAt;
    // The CA certificates between the signer and the anchor (or self-signed root), each against its own
    // issuer's CRLs/OCSP responses from the same sources (and online, when allowed). The answer has one
    // revocation block per signature: a CA revoked before the signing time makes its status REVOKED, and which
    // CA and when is told in problems; later revocations and missing data are warnings.
    for (let k = 1; path.chainValid && revocation.status !== 'REVOKED' && k + 1 < path.path.length; k++) {
      const ca = path.path[k]!;
      const caIssuer = path.path[k + 1]!;
      const name = ca.subject.replace(/\n/g, ', ');
      const r = checkRevocation(ca, caIssuer, itemsFor(ca), at);
      if (r.status === 'REVOKED') {
        caRevoked = `the CA certificate ${name} of the signer's path was revoked${r.revokedAt ? ` at ${r.revokedAt}` : ''}, before the signing time`;
        revocation = {
          ...revocation,
          status: 'REVOKED',
          ...(r.checkedAt ? { checkedAt: r.checkedAt } : {}),
          ...(r.revokedAt ? { revokedAt: r.revokedAt } : {}),
        };
      } else if (r.revokedAt) {
        // As for the signer: GOOD at the signing time, with the (earliest) later revocation in revokedAt, so that
        // without a timestamp proving the signing time the indication is REVOKED_NO_POE.
        if (!revocation.revokedAt || r.revokedAt < revocation.revokedAt) revocation = { ...revocation, revokedAt: r.revokedAt };
        warnings.push(`REVOKED_AFTER_SIGNING: the CA certificate ${name} was revoked at ${r.revokedAt}, after the signing time`);
      } else if (r.status !== 'GOOD') {
        wantOnline(ca, caIssuer);
        if (revocation.status === 'GOOD')
          warnings.push(`REVOCATION_INCOMPLETE: no usable revocation data for the CA certificate ${name} of the signer's path`);
      }
    }
    warnings.push(...path.problems);
    if (subFilter === 'ETSI.RFC3161') {
      if (!signerCert.keyUsage?.includes(EKU_TIME_STAMPING))
        warnings.push('KEY_USAGE: the document timestamp certificate lacks the timeStamping extended key usage');
    } else {
      const ku = keyUsageOf(signerCert);
      if (ku && !ku.digitalSignature && !ku.nonRepudiation)
        warnings.push('KEY_USAGE: the signer certificate allows neither digitalSignature nor nonRepudiation');
    }
  }

  if (caRevoked) problems.push(`REVOKED: ${caRevoked}`);
  else if (revocation.status === 'REVOKED') {
    problems.push(`REVOKED: the signer certificate was revoked${revocation.revokedAt ? ` at ${revocation.revokedAt}` : ''}, before the signing time`);
  } else if (signerRevokedLater) {
    warnings.push(`REVOKED_AFTER_SIGNING: the signer certificate was revoked at ${signerRevokedLater}, after the signing time`);
  }
  return {
    sig,
    type,
    subFilter,
    br,
    crypt,
    cms,
    digestMatches,
    signatureValid,
    claimed,
    timestamp,
    signer,
    path,
    revocation,
    ltvCerts,
    problems,
    warnings,
  };
}

type ExaminedSignature = ReturnType<typeof examineSignature>;

/**
 * Folio audit revisions (0-based): shaped as the signer writes them (audit-revision.ts) and covered through
 * their own end by an intact signature issued by this service, whose dictionary lies in that revision.
 */
function findAuditRevisions(doc: PdfDocument, examined: ExaminedSignature[], analyzer: ModificationAnalyzer): Set<number> {
  const out = new Set<number>();
  for (const e of examined) {
    const rev = e.br.signedRevision;
    const intact =
      e.br.formatErrors.length === 0 &&
      (e.br.coverage === 'ENTIRE_REVISION' || e.br.coverage === 'ENTIRE_FILE') &&
      e.digestMatches &&
      e.signatureValid &&
      !!e.cms &&
      e.cms.errors.length === 0 &&
      !e.sig.orphaned &&
      !!e.path?.issuedByThisService &&
      e.sig.sigOffset !== undefined &&
      doc.revisionOf(e.sig.sigOffset) === rev;
    // Only worth the check (a hash of the prefix, the referrer index) when an earlier signature exists.
    if (!intact || out.has(rev) || !examined.some((o) => o.br.signedRevision < rev)) continue;
    if (auditRevisionShapeProblem(doc, rev, () => analyzer.referrerIndex()) === undefined) out.add(rev);
  }
  return out;
}

/** Second pass: modifications after the covered revision, DocMDP/FieldMDP, indication. */
function judgeSignature(
  doc: PdfDocument,
  ex: ExaminedSignature,
  analyzer: ModificationAnalyzer,
  cert: Certification | undefined,
  auditRevisions: ReadonlySet<number>,
): SignatureReport {
  const { sig, type, subFilter, br, crypt, cms, digestMatches, signatureValid, claimed, timestamp, signer, path, revocation, problems, warnings } =
    ex;
  // Modifications after the covered revision, judged by DocMDP (of the certification, if any) and FieldMDP.
  const signedEnd = br.byteRange.length === 4 ? br.byteRange[2]! + br.byteRange[3]! : doc.revisions[br.signedRevision]!.end;
  const certifying = cert?.sig === sig;
  const certApplies = !!cert && (cert.sig.sigOffset ?? 0) <= (sig.sigOffset ?? 0);
  // Audit pages are page additions: under a certification (any P) they stay OTHER.
  const mods = analyzer.analyze(
    br.signedRevision,
    Math.min(signedEnd, doc.revisions[br.signedRevision]!.end),
    certApplies ? new Set() : auditRevisions,
  );
  const permitted = new Set<ModificationLevel>(['NONE', 'SIGNATURES_ONLY']);
  if (certApplies && cert!.permission === 1) permitted.delete('SIGNATURES_ONLY');
  if (certApplies && cert!.permission >= 2) permitted.add('FORM_FILL');
  if (certApplies && cert!.permission === 3) permitted.add('ANNOTATIONS');
  const locks = fieldMdpLocks(doc, sig.sigDict);
  const locked = (name?: string) =>
    !!locks && !!name && (locks === 'ALL' || (locks.some((l) => l.startsWith('!')) ? !locks.includes(`!${name}`) : locks.includes(name)));
  // Long-term-validation updates (DSS, document timestamps) are permitted whatever DocMDP says, P=1 included
  // (ISO 32000-2 §12.8.2.2.2, PAdES).
  const allowed = (d: ModificationDetail) => permitted.has(d.level) || (d.level === 'SIGNATURES_ONLY' && !!d.ltaUpdate);
  const forbidden = mods.details.filter((d) => !allowed(d) || d.attack || (d.level === 'FORM_FILL' && locked(d.field)));
  const modsOk = forbidden.length === 0;
  if (!modsOk) {
    const attacks = [...new Set(forbidden.map((d) => d.attack).filter(Boolean))];
    problems.push(
      `MODIFIED_AFTER_SIGNING: ${mods.level} changes after the signed revision${attacks.length ? ` (${attacks.join(', ')})` : ''}${
        certApplies ? ` exceed what DocMDP P=${cert!.permission} permits` : ''
      }`,
    );
  }
  let docMdp: DocMdpInfo | undefined;
  if (certifying) docMdp = { permission: cert!.permission, respected: modsOk };
  if (locks) (docMdp ??= { permission: cert?.permission ?? 2, respected: modsOk }).lockedFields = locks;

  const coverageOk = br.coverage === 'ENTIRE_FILE' || br.coverage === 'ENTIRE_REVISION';
  const structural = br.formatErrors.length > 0 || !crypt || (cms?.errors.length ?? 1) > 0 || sig.orphaned;
  // A certificate revoked before the signing time makes the signature invalid (ETSI EN 319 102-1 §5.2.6).
  const revoked = revocation.status === 'REVOKED';
  const valid = !structural && digestMatches && signatureValid && coverageOk && modsOk && !revoked;
  const poe = !!timestamp?.valid;

  let indication: Indication = 'TOTAL_PASSED';
  let subIndication: string | undefined;
  const conclude = (i: Indication, s: string) => {
    indication = i;
    subIndication = s;
  };
  const fail = (s: string) => conclude('TOTAL_FAILED', s);
  if (br.formatErrors.length > 0 || !crypt) fail('FORMAT_FAILURE');
  else if (!cms?.signerCertificate) conclude('INDETERMINATE', 'NO_SIGNING_CERTIFICATE_FOUND');
  else if (!digestMatches) fail('HASH_FAILURE');
  else if (!signatureValid) fail('SIG_CRYPTO_FAILURE');
  else if ((cms?.errors.length ?? 0) > 0 || sig.orphaned || !modsOk) fail('FORMAT_FAILURE');
  // A signature algorithm paired with a digest it does not take (RFC 8419, RFC 5754/8017) fails the
  // cryptographic constraints before any certificate is looked at, as in pyHanko (the signature verifies, so
  // `valid` is left to integrity, coverage and modifications, as for SHA-1).
  else if (warnings.some((w) => w.startsWith('ALGORITHM_MISMATCH'))) conclude('INDETERMINATE', 'CRYPTO_CONSTRAINTS_FAILURE');
  else if (!path?.chainValid) conclude('INDETERMINATE', 'CERTIFICATE_CHAIN_GENERAL_FAILURE');
  // Revoked before a proven (timestamped) signing time: failed; before a merely claimed one: no proof either way.
  else if (revoked) conclude(poe ? 'TOTAL_FAILED' : 'INDETERMINATE', poe ? 'REVOKED' : 'REVOKED_NO_POE');
  else if (!path.trusted) conclude('INDETERMINATE', 'NO_CERTIFICATE_CHAIN_FOUND');
  else if (!path.validAtSigningTime) conclude('INDETERMINATE', timestamp?.valid ? 'EXPIRED' : 'OUT_OF_BOUNDS_NO_POE');
  else if (revocation.revokedAt && !poe) conclude('INDETERMINATE', 'REVOKED_NO_POE');
  else if (warnings.some((w) => w.startsWith('KEY_USAGE'))) conclude('INDETERMINATE', 'CHAIN_CONSTRAINTS_FAILURE');
  else if (warnings.some((w) => w.startsWith('WEAK_'))) conclude('INDETERMINATE', 'CRYPTO_CONSTRAINTS_FAILURE');
  else if (timestamp && !timestamp.valid) conclude('INDETERMINATE', 'SIG_CONSTRAINTS_FAILURE');

  return {
    type,
    level: null,
    revocation,
    fieldName: sig.fieldName,
    subFilter,
    digestAlgorithm: cms?.digestAlgorithm ?? null,
    signatureAlgorithm: cms?.signatureAlgorithm ?? null,
    signedAt: claimed ? claimed.toISOString() : null,
    ...(timestamp ? { timestamp } : {}),
    signer,
    byteRange: br.byteRange,
    coverage: br.coverage,
    integrity: { digestMatches, signatureValid },
    certificate: { chainValid: !!path?.chainValid, trusted: !!path?.trusted, validAtSigningTime: !!path?.validAtSigningTime },
    modificationsAfter: { level: mods.level, details: mods.details },
    ...(docMdp ? { docMdp } : {}),
    indication,
    ...(subIndication ? { subIndication } : {}),
    issuedByThisService: !!path?.issuedByThisService,
    revision: br.signedRevision + 1,
    certifying,
    orphaned: sig.orphaned,
    valid,
    problems,
    warnings,
  };
}

/**
 * PAdES levels (ltv.ts), once every entry is judged: B-T and B-LTA depend on the document timestamps that
 * follow a signature.
 */
function assignLevels(examined: ExaminedSignature[], reports: SignatureReport[], dss: DssData | undefined, trust: TrustStore): void {
  const docTs = reports.flatMap((r, i) => (r.type === 'timestamp' && r.valid ? [examined[i]!.br.signedRevision] : []));
  const anchors = new Set(trust.anchors.map((a) => a.fingerprint256));
  reports.forEach((r, i) => {
    const ex = examined[i]!;
    if (r.type !== 'signature') return;
    const have = new Set([...(ex.cms?.certificates ?? []), ...ex.ltvCerts].map((c) => c.fingerprint256));
    const dssSources = r.revocation.sources.filter((s) => s.valid && (s.origin === 'DSS' || s.origin === 'VRI') && s.status !== 'UNKNOWN');
    const ltvRevision = r.revocation.status === 'GOOD' && dssSources.length ? Math.min(...dssSources.map((s) => (s.revision ?? 1) - 1)) : undefined;
    r.level = padesLevel(
      {
        subFilter: r.subFilter,
        intact: r.integrity.digestMatches && r.integrity.signatureValid && (r.coverage === 'ENTIRE_FILE' || r.coverage === 'ENTIRE_REVISION'),
        essSigningCertificate: !!ex.cms?.essSigningCertificate,
        signatureTimestampValid: !!r.timestamp?.valid,
        signedRevision: ex.br.signedRevision,
        chainInLtvData: !!ex.path && ex.path.path.every((c) => anchors.has(c.fingerprint256) || have.has(c.fingerprint256)),
        ...(ltvRevision !== undefined ? { ltvRevision } : {}),
      },
      docTs,
    );
  });
}

function summarise(reports: SignatureReport[], drawnUnsigned: number): string {
  if (reports.length === 0) {
    return drawnUnsigned
      ? `The document carries no signature, yet ${drawnUnsigned} signature field(s) draw a signature appearance.`
      : 'The document carries no signature.';
  }
  const failed = reports.find((r) => !r.valid);
  if (failed) {
    const which = failed.fieldName ? `Signature "${failed.fieldName}"` : 'A signature dictionary';
    const first =
      failed.problems[0] ??
      (!failed.integrity.digestMatches ? 'HASH_FAILURE: the signed bytes were altered' : 'SIG_CRYPTO_FAILURE: the signature does not verify');
    return `${which} is not valid: ${first}`;
  }
  const untrusted = reports.filter((r) => !r.certificate.trusted).length;
  const tail = untrusted
    ? ` ${untrusted} of them chain${untrusted === 1 ? 's' : ''} to no trusted certificate.`
    : ' All chain to trusted certificates.';
  const level = reports.reduce(
    (m, r) => (levelRank(r.modificationsAfter.level) > levelRank(m) ? r.modificationsAfter.level : m),
    'NONE' as ModificationLevel,
  );
  return `${reports.length} signature(s) intact, covering whole revisions${level === 'NONE' ? '' : `; later changes are permitted (${level})`}.${tail}`;
}
