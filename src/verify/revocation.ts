/**
 * Revocation checking of a signer certificate at its signing time (ETSI EN 319 102-1 §5.2.6, RFC 5280 §6.3,
 * RFC 6960) from the CRLs and OCSP responses a PDF carries: the Document Security Store (document-level and the
 * signature's VRI entry), the CMS itself (SignedData `crls`, Adobe's adbe-revocationInfoArchival signed attribute,
 * the CAdES revocation-values unsigned attribute), and, only when the operator allow-lists the host, data fetched
 * from the certificate's CRL distribution point (revocation-fetch.ts).
 *
 * Each source is checked before it counts: signed by the certificate's issuer (a CRL) or by the issuer or a
 * responder it delegated with id-kp-OCSPSigning (an OCSP response); current at the signing time (nextUpdate not
 * before it) or issued after it; not issued in the future. Structures are cut by DER headers (src/crypto/der.ts) so
 * that signatures are checked over the original bytes and a large CRL's entries are compared without decoding
 * them all; the values are read with the @peculiar/asn1-* schemas. Everything is bounded (sizes, entries, count).
 */
import crypto, { X509Certificate } from 'node:crypto';
import { AlgorithmIdentifier, Time, CRLDistributionPoints, AuthorityInfoAccessSyntax } from '@peculiar/asn1-x509';
import { OCSPResponse, OCSPResponseStatus, ResponseData } from '@peculiar/asn1-ocsp';
import { parseAs, parseOid } from '../crypto/asn1.js';
import {
  DerError,
  TAG,
  certificateFields,
  contentBytes,
  contextTag,
  decodeOid,
  elementBytes,
  readChildren,
  readElement,
  readInner,
  spkiKeyBits,
  tryDer,
  type Tlv,
} from '../crypto/der.js';
import { DIGEST_BY_OID, createDigest, verifyWithAlgorithm } from './cms.js';

export type RevocationStatus = 'GOOD' | 'REVOKED' | 'UNKNOWN' | 'NOT_CHECKED';
export type RevocationOrigin = 'DSS' | 'VRI' | 'CMS' | 'ONLINE';

export interface RevocationSource {
  type: 'OCSP' | 'CRL';
  origin: RevocationOrigin;
  /** CRL issuer or OCSP responder (subject of the certificate whose key signed it), when it verified. */
  issuer: string | null;
  producedAt?: string;
  thisUpdate?: string;
  nextUpdate?: string | null;
  /** Signature, signer and time window all check out: the source counts. */
  valid: boolean;
  /** What the source says about the signer certificate. */
  status?: 'GOOD' | 'REVOKED' | 'UNKNOWN';
  revokedAt?: string;
  problem?: string;
  /** 1-based revision that added it to the DSS. */
  revision?: number;
}

export interface RevocationReport {
  /** The signer certificate's status at the signing time. */
  status: RevocationStatus;
  /** thisUpdate of the source the status rests on. */
  checkedAt?: string;
  /** A revocation after the signing time (status stays GOOD at the signing time). */
  revokedAt?: string;
  sources: RevocationSource[];
}

/** Raw revocation data with where it was found. */
export interface RevocationItem {
  type: 'OCSP' | 'CRL';
  origin: RevocationOrigin;
  /** A CRL (CertificateList), or an OCSP response: OCSPResponse or (from CAdES revocation values) BasicOCSPResponse. */
  der: Uint8Array;
  /** 0-based revision that added it (DSS/VRI). */
  revision?: number;
}

/** Bounds: what one document can make the verifier parse. */
export const MAX_REVOCATION_ITEMS = 64;
export const MAX_CRL_BYTES = 4 * 1024 * 1024;
export const MAX_CRL_ENTRIES = 200_000;
export const MAX_OCSP_BYTES = 256 * 1024;
const MAX_OCSP_RESPONSES = 1000;
/** A source issued this far after the validation time is refused (clock skew allowance). */
const FUTURE_SKEW_MS = 5 * 60_000;

const EKU_OCSP_SIGNING = '1.3.6.1.5.5.7.3.9';
const ID_PKIX_OCSP_BASIC = '1.3.6.1.5.5.7.48.1.1';
const ID_RI_OCSP_RESPONSE = '1.3.6.1.5.5.7.16.2';

const fail = (m: string) => new Error(m);
/** The elements inside `t`; undefined when there is no `t` or they do not read. */
const children = (buf: Uint8Array, t: Tlv | undefined) => (t ? tryDer(() => readChildren(buf, t)) : undefined);
const outerOf = (buf: Uint8Array) => tryDer(() => readElement(buf));
const slice = elementBytes;
const subject = (c: X509Certificate) => c.subject.replace(/\n/g, ', ');
const stripZeros = (u: Uint8Array) =>
  Buffer.from(u)
    .toString('hex')
    .replace(/^(00)+(?=.)/, '');

/** The elements of an explicitly tagged `SEQUENCE OF` ([n] { SEQUENCE { items } }) inside a SEQUENCE. */
function taggedSequenceItems(buf: Uint8Array, tag: number): Uint8Array[] {
  const field = children(buf, outerOf(buf))?.find((t) => t.tag === tag);
  const seq = field && tryDer(() => readInner(buf, field));
  return (children(buf, seq) ?? []).map((t) => slice(buf, t));
}

/** CRLs and OCSP responses carried in a CMS (see CmsResult.revocationRaw). */
export function cmsRevocationItems(
  raw: { crlsField?: Uint8Array; adbeArchival?: Uint8Array; revocationValues?: Uint8Array } | undefined,
): RevocationItem[] {
  const out: RevocationItem[] = [];
  if (!raw) return out;
  if (raw.crlsField) {
    // RevocationInfoChoices: CertificateList, or [1] OtherRevocationInfoFormat { id-ri-ocsp-response, OCSPResponse }.
    for (const c of children(raw.crlsField, outerOf(raw.crlsField)) ?? []) {
      if (c.tag === TAG.SEQUENCE) out.push({ type: 'CRL', origin: 'CMS', der: slice(raw.crlsField, c) });
      else if (c.tag === contextTag(1)) {
        const [format, info] = children(raw.crlsField, c) ?? [];
        if (format && info && parseOid(slice(raw.crlsField, format)) === ID_RI_OCSP_RESPONSE)
          out.push({ type: 'OCSP', origin: 'CMS', der: slice(raw.crlsField, info) });
      }
    }
  }
  // RevocationInfoArchival ::= SEQUENCE { crl [0] EXPLICIT SEQUENCE OF CRL, ocsp [1] EXPLICIT SEQUENCE OF OCSPResponse, ... }
  if (raw.adbeArchival) {
    for (const d of taggedSequenceItems(raw.adbeArchival, contextTag(0))) out.push({ type: 'CRL', origin: 'CMS', der: d });
    for (const d of taggedSequenceItems(raw.adbeArchival, contextTag(1))) out.push({ type: 'OCSP', origin: 'CMS', der: d });
  }
  // RevocationValues ::= SEQUENCE { crlVals [0] SEQUENCE OF CertificateList, ocspVals [1] SEQUENCE OF BasicOCSPResponse, ... }
  if (raw.revocationValues) {
    for (const d of taggedSequenceItems(raw.revocationValues, contextTag(0))) out.push({ type: 'CRL', origin: 'CMS', der: d });
    for (const d of taggedSequenceItems(raw.revocationValues, contextTag(1))) out.push({ type: 'OCSP', origin: 'CMS', der: d });
  }
  return out;
}

interface Window {
  thisUpdate: Date;
  nextUpdate?: Date;
}

/** Current at the signing time (or issued after it), and not issued in the future. */
function windowProblem(w: Window, at: Date, now: Date): string | undefined {
  if (w.thisUpdate.getTime() > now.getTime() + FUTURE_SKEW_MS) return 'issued in the future';
  if (w.thisUpdate.getTime() < at.getTime() && w.nextUpdate && w.nextUpdate.getTime() < at.getTime())
    return 'expired before the signing time (nextUpdate passed)';
  return undefined;
}

const readTime = (buf: Uint8Array, t: Tlv | undefined): Date | undefined => {
  if (!t || (t.tag !== TAG.UTC_TIME && t.tag !== TAG.GENERALIZED_TIME)) return undefined;
  try {
    return parseAs(slice(buf, t), Time, fail).getTime();
  } catch {
    return undefined;
  }
};

/** The signature of a signed structure { tbs, AlgorithmIdentifier, BIT STRING } over tbs's original bytes. */
function signatureOver(buf: Uint8Array, parts: Tlv[]): { tbs: Uint8Array; alg: AlgorithmIdentifier; sig: Uint8Array } | undefined {
  const [tbs, alg, bits] = parts;
  if (!tbs || !alg || !bits || bits.tag !== TAG.BIT_STRING || bits.contentEnd - bits.start < 2) return undefined;
  try {
    return { tbs: slice(buf, tbs), alg: parseAs(slice(buf, alg), AlgorithmIdentifier, fail), sig: buf.subarray(bits.start + 1, bits.contentEnd) };
  } catch {
    return undefined;
  }
}

/**
 * What a CRL says independently of the certificate asked about, by its SHA-256 and its issuer's fingerprint:
 * the same CRL is typically carried twice (document-level and VRI) and consulted for every signature, and its
 * time fields and signature cost more than the lookup. CRLs are public data; the cache is bounded.
 */
const crlCache = new Map<string, { thisUpdate?: Date; nextUpdate?: Date; signatureOk: boolean }>();
const CRL_CACHE_SIZE = 256;

/** A CRL's SHA-256 (hex) per CRL object: the DSS and VRI items of a document are asked about for every signature. */
const crlHashes = new WeakMap<Uint8Array, string>();
function crlHash(der: Uint8Array): string {
  let h = crlHashes.get(der);
  if (h === undefined) crlHashes.set(der, (h = crypto.createHash('sha256').update(der).digest('hex')));
  return h;
}

/** The header fields of a parsed certificate, read once per certificate object (certificates recur in every check). */
const certFieldsCache = new WeakMap<X509Certificate, ReturnType<typeof certificateFields>>();
function fieldsOf(cert: X509Certificate): ReturnType<typeof certificateFields> {
  if (certFieldsCache.has(cert)) return certFieldsCache.get(cert);
  const f = certificateFields(new Uint8Array(cert.raw));
  certFieldsCache.set(cert, f);
  return f;
}

function crlFacts(der: Uint8Array, parts: Tlv[], tbs: Tlv[], timeAt: number, issuer: X509Certificate) {
  const key = `${crlHash(der)}|${issuer.fingerprint256}`;
  let hit = crlCache.get(key);
  if (!hit) {
    const thisUpdate = readTime(der, tbs[timeAt]);
    const nextUpdate = thisUpdate ? readTime(der, tbs[timeAt + 1]) : undefined;
    const signed = signatureOver(der, parts);
    hit = { thisUpdate, nextUpdate, signatureOk: !!signed && verifyWithAlgorithm(signed.alg, signed.tbs, issuer.publicKey, signed.sig) };
    if (crlCache.size >= CRL_CACHE_SIZE) crlCache.delete(crlCache.keys().next().value!);
    crlCache.set(key, hit);
  }
  return hit;
}

function checkCrl(
  der: Uint8Array,
  cert: X509Certificate,
  issuer: X509Certificate,
  at: Date,
  now: Date,
  origin: RevocationOrigin,
): RevocationSource | undefined {
  const src: RevocationSource = { type: 'CRL', origin, issuer: null, valid: false };
  if (der.length > MAX_CRL_BYTES) return { ...src, problem: `larger than ${MAX_CRL_BYTES / 1024 / 1024} MB` };
  const parts = children(der, outerOf(der));
  const tbsT = parts?.[0];
  const tbs = children(der, tbsT);
  if (!parts || !tbs) return { ...src, problem: 'not a CRL' };
  let i = tbs[0]?.tag === TAG.INTEGER ? 1 : 0; // version
  i++; // signature algorithm
  const issuerName = tbs[i++];
  const certFields = fieldsOf(cert);
  // Only a CRL of the certificate's issuer speaks about it (indirect CRLs are not followed).
  if (!issuerName || !certFields || Buffer.compare(slice(der, issuerName), certFields.issuer) !== 0) return undefined;
  const facts = crlFacts(der, parts, tbs, i, issuer);
  const thisUpdate = facts.thisUpdate;
  i++;
  if (!thisUpdate) return { ...src, problem: 'thisUpdate unreadable' };
  const maybeNext = facts.nextUpdate;
  if (maybeNext) i++;
  src.thisUpdate = thisUpdate.toISOString();
  src.nextUpdate = maybeNext ? maybeNext.toISOString() : null;
  if (!facts.signatureOk) return { ...src, problem: "the CRL's signature does not verify with the issuer's key" };
  src.issuer = subject(issuer);
  const tp = windowProblem({ thisUpdate, nextUpdate: maybeNext }, at, now);
  if (tp) return { ...src, problem: tp };
  const revoked = tbs[i]?.tag === TAG.SEQUENCE ? tbs[i] : undefined;
  let entries: Tlv[] = [];
  try {
    if (revoked) entries = readChildren(der, revoked, MAX_CRL_ENTRIES);
  } catch (e) {
    if (!(e instanceof DerError)) throw e;
    if (e.reason === 'count') return { ...src, problem: `more than ${MAX_CRL_ENTRIES} entries` };
  }
  const serial = stripZeros(certFields.serial);
  src.valid = true;
  src.status = 'GOOD';
  for (const e of entries) {
    const [sn, date] = children(der, e) ?? [];
    if (!sn || sn.tag !== TAG.INTEGER || stripZeros(contentBytes(der, sn)) !== serial) continue;
    const when = readTime(der, date);
    src.status = 'REVOKED';
    if (when) src.revokedAt = when.toISOString();
    break;
  }
  return src;
}

/** SHA-x of the issuer's subjectPublicKey BIT STRING contents (OCSP CertID issuerKeyHash). */
function issuerKeyBits(issuer: X509Certificate): Uint8Array | undefined {
  return spkiKeyBits(new Uint8Array(issuer.publicKey.export({ type: 'spki', format: 'der' })));
}

function checkOcsp(
  der: Uint8Array,
  cert: X509Certificate,
  issuer: X509Certificate,
  at: Date,
  now: Date,
  origin: RevocationOrigin,
): RevocationSource | undefined {
  const src: RevocationSource = { type: 'OCSP', origin, issuer: null, valid: false };
  if (der.length > MAX_OCSP_BYTES) return { ...src, problem: `larger than ${MAX_OCSP_BYTES / 1024} KB` };
  // An OCSPResponse wraps the BasicOCSPResponse (CAdES revocation values carry the latter directly).
  let basic = der;
  const first = children(der, outerOf(der))?.[0];
  if (first?.tag === TAG.ENUMERATED) {
    try {
      const resp = parseAs(der, OCSPResponse, fail);
      if (resp.responseStatus !== OCSPResponseStatus.successful || !resp.responseBytes) return { ...src, problem: 'not a successful OCSP response' };
      if (resp.responseBytes.responseType !== ID_PKIX_OCSP_BASIC) return { ...src, problem: 'not a basic OCSP response' };
      basic = new Uint8Array(resp.responseBytes.response.buffer);
    } catch {
      return { ...src, problem: 'not an OCSP response' };
    }
  }
  const parts = children(basic, outerOf(basic));
  const signed = parts && signatureOver(basic, parts);
  if (!parts || !signed) return { ...src, problem: 'not a basic OCSP response' };
  let data: ResponseData;
  try {
    data = parseAs(signed.tbs, ResponseData, fail);
  } catch {
    return { ...src, problem: 'response data unreadable' };
  }
  if (data.responses.length > MAX_OCSP_RESPONSES) return { ...src, problem: 'too many responses' };
  const certFields = fieldsOf(cert);
  const keyBits = issuerKeyBits(issuer);
  const serial = certFields && stripZeros(certFields.serial);
  const single = data.responses.find((r) => {
    const h = createDigest(DIGEST_BY_OID[r.certID.hashAlgorithm.algorithm] ?? '');
    const hk = createDigest(DIGEST_BY_OID[r.certID.hashAlgorithm.algorithm] ?? '');
    if (!h || !hk || !certFields || !keyBits) return false;
    return (
      stripZeros(new Uint8Array(r.certID.serialNumber)) === serial &&
      Buffer.from(r.certID.issuerNameHash.buffer).equals(h.update(certFields.issuer).digest()) &&
      Buffer.from(r.certID.issuerKeyHash.buffer).equals(hk.update(keyBits).digest())
    );
  });
  if (!single) return undefined; // says nothing about this certificate
  src.producedAt = data.producedAt.toISOString();
  src.thisUpdate = single.thisUpdate.toISOString();
  src.nextUpdate = single.nextUpdate ? single.nextUpdate.toISOString() : null;
  // Signed by the issuing CA itself, or by a responder certificate it issued for OCSP signing.
  let responder: X509Certificate | undefined;
  if (verifyWithAlgorithm(signed.alg, signed.tbs, issuer.publicKey, signed.sig)) responder = issuer;
  else {
    const certsField = parts.find((p) => p.tag === contextTag(0));
    const seq = certsField && tryDer(() => readInner(basic, certsField));
    for (const c of (children(basic, seq) ?? []).slice(0, 8)) {
      let rc: X509Certificate;
      try {
        rc = new X509Certificate(Buffer.from(slice(basic, c)));
      } catch {
        continue;
      }
      const delegated =
        safe(() => rc.checkIssued(issuer) && rc.verify(issuer.publicKey)) &&
        !!rc.keyUsage?.includes(EKU_OCSP_SIGNING) &&
        data.producedAt.getTime() >= new Date(rc.validFrom).getTime() &&
        data.producedAt.getTime() <= new Date(rc.validTo).getTime();
      if (delegated && verifyWithAlgorithm(signed.alg, signed.tbs, rc.publicKey, signed.sig)) {
        responder = rc;
        break;
      }
    }
  }
  if (!responder) return { ...src, problem: 'not signed by the issuer or a responder it authorised (id-kp-OCSPSigning)' };
  src.issuer = subject(responder);
  const tp = windowProblem({ thisUpdate: single.thisUpdate, nextUpdate: single.nextUpdate }, at, now);
  if (tp) return { ...src, problem: tp };
  src.valid = true;
  const st = single.certStatus;
  if (st.revoked) {
    src.status = 'REVOKED';
    src.revokedAt = st.revoked.revocationTime.toISOString();
  } else src.status = st.good !== undefined ? 'GOOD' : 'UNKNOWN';
  return src;
}

function safe(f: () => boolean): boolean {
  try {
    return f();
  } catch {
    return false;
  }
}

/**
 * The signer certificate's status at `at` (the signing time, the timestamp's when there is one) from
 * `items`. Sources that say nothing about the certificate are left out of the answer; sources that fail a
 * check are listed with `valid: false` and not used.
 */
export function checkRevocation(
  cert: X509Certificate,
  issuer: X509Certificate | undefined,
  items: RevocationItem[],
  at: Date,
  now = new Date(),
): RevocationReport {
  const sources: RevocationSource[] = [];
  if (!issuer) return { status: 'NOT_CHECKED', sources };
  for (const item of items) {
    const s = item.type === 'CRL' ? checkCrl(item.der, cert, issuer, at, now, item.origin) : checkOcsp(item.der, cert, issuer, at, now, item.origin);
    if (s) sources.push(item.revision !== undefined ? { ...s, revision: item.revision + 1 } : s);
  }
  const usable = sources.filter((s) => s.valid);
  const t = at.getTime();
  const revokedBefore = usable.find((s) => s.status === 'REVOKED' && (!s.revokedAt || new Date(s.revokedAt).getTime() <= t));
  if (revokedBefore) return { status: 'REVOKED', checkedAt: revokedBefore.thisUpdate, revokedAt: revokedBefore.revokedAt, sources };
  const good = usable.find((s) => s.status === 'GOOD' || s.status === 'REVOKED');
  if (good) {
    const later = usable.filter((s) => s.status === 'REVOKED').map((s) => s.revokedAt!);
    return { status: 'GOOD', checkedAt: good.thisUpdate, ...(later.length ? { revokedAt: later.sort()[0] } : {}), sources };
  }
  return { status: sources.length ? 'UNKNOWN' : 'NOT_CHECKED', sources };
}

/** CRL distribution point and OCSP responder URLs of a certificate (http only), for allow-listed online fetching. */
export function revocationUrls(cert: X509Certificate): { crl: string[]; ocsp: string[] } {
  const out = { crl: [] as string[], ocsp: [] as string[] };
  const f = fieldsOf(cert);
  for (const e of f?.extensions ?? []) {
    const oid = decodeOid(e.oid);
    try {
      if (oid === '2.5.29.31') {
        for (const dp of parseAs(e.value, CRLDistributionPoints, fail))
          for (const n of dp.distributionPoint?.fullName ?? []) if (n.uniformResourceIdentifier) out.crl.push(n.uniformResourceIdentifier);
      } else if (oid === '1.3.6.1.5.5.7.1.1') {
        for (const ad of parseAs(e.value, AuthorityInfoAccessSyntax, fail))
          if (ad.accessMethod === '1.3.6.1.5.5.7.48.1' && ad.accessLocation.uniformResourceIdentifier)
            out.ocsp.push(ad.accessLocation.uniformResourceIdentifier);
      }
    } catch {
      // an unreadable extension gives no URL
    }
  }
  const http = (u: string) => /^https?:\/\//i.test(u);
  return { crl: out.crl.filter(http).slice(0, 4), ocsp: out.ocsp.filter(http).slice(0, 4) };
}

export const sha1Hex = (b: Uint8Array) => crypto.createHash('sha1').update(b).digest('hex').toUpperCase();
