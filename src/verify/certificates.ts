/**
 * Certificate path building from a signer certificate through the certificates carried in the CMS to the
 * configured trust anchors (the service's own root CA and TRUST_ANCHORS), with node:crypto's X509Certificate
 * doing name matching (checkIssued) and signature checks (verify). Revocation is not checked (offline).
 */
import fs from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { KeyUsage, KeyUsageFlags } from '@peculiar/asn1-x509';
import { parseAs } from '../crypto/asn1.js';
import { certificateFields, oidContent } from '../crypto/der.js';

export interface TrustStore {
  anchors: X509Certificate[];
  /** Certificates of this Folio instance: its signer certificate and root CA. */
  service: X509Certificate[];
}

export interface PathResult {
  path: X509Certificate[];
  /** Every link verifies and the path ends at a self-signed certificate or an anchor. */
  chainValid: boolean;
  trusted: boolean;
  /** Every certificate of the path was within its validity period at `at`. */
  validAtSigningTime: boolean;
  issuedByThisService: boolean;
  problems: string[];
}

const MAX_PATH = 10;

/**
 * Results of `subordinate.verify(issuer.publicKey)`: the signatures, their timestamp tokens and the document
 * timestamp of one file share a few certificates (the TSA's is checked against its root once per token
 * otherwise), and so do the files of one signer. Keyed by certificate objects (weakly); verify.ts keeps one per
 * thread.
 */
export type LinkMemo = WeakMap<X509Certificate, Map<X509Certificate, boolean>>;

function verifiesUnder(cert: X509Certificate, issuer: X509Certificate, memo: LinkMemo | undefined): boolean {
  let row = memo?.get(cert);
  const hit = row?.get(issuer);
  if (hit !== undefined) return hit;
  const ok = safe(() => cert.verify(issuer.publicKey));
  if (memo) {
    if (!row) memo.set(cert, (row = new Map()));
    row.set(issuer, ok);
  }
  return ok;
}

export function buildPath(leaf: X509Certificate, pool: X509Certificate[], store: TrustStore, at: Date, memo?: LinkMemo): PathResult {
  const path: X509Certificate[] = [leaf];
  const problems: string[] = [];
  let chainValid = false;
  let trusted = false;
  const isAnchor = (c: X509Certificate) => store.anchors.some((a) => a.fingerprint256 === c.fingerprint256);
  let current = leaf;
  for (let depth = 0; depth < MAX_PATH; depth++) {
    if (isAnchor(current)) {
      trusted = chainValid = true;
      break;
    }
    const candidates = [...store.anchors, ...pool].filter((c) => c.fingerprint256 !== current.fingerprint256 && safe(() => current.checkIssued(c)));
    const issuer = candidates.find((c) => verifiesUnder(current, c, memo));
    if (!issuer) {
      if (safe(() => current.checkIssued(current))) {
        chainValid = verifiesUnder(current, current, memo);
        if (!chainValid) problems.push('the self-signed root certificate does not verify');
        problems.push('the path ends at a root that is not a trust anchor');
      } else {
        problems.push(candidates.length ? 'an issuer certificate does not verify its subordinate' : 'the issuer certificate is missing');
      }
      break;
    }
    path.push(issuer);
    current = issuer;
  }
  const t = at.getTime();
  const expired = path.filter((c) => t < new Date(c.validFrom).getTime() || t > new Date(c.validTo).getTime());
  if (expired.length) problems.push(`${expired.length} certificate(s) of the path were not valid at the signing time`);
  const serviceFps = new Set(store.service.map((c) => c.fingerprint256));
  const issuedByThisService = path.some((c) => serviceFps.has(c.fingerprint256)) && chainValid;
  return { path, chainValid, trusted, validAtSigningTime: expired.length === 0, issuedByThisService, problems };
}

function safe(f: () => boolean): boolean {
  try {
    return f();
  } catch {
    return false;
  }
}

/** Splits a PEM bundle into certificates (text outside BEGIN/END blocks is ignored). */
export function certificatesFromPem(pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((b) => new X509Certificate(b));
}

export interface TrustSources {
  rootCertificatePem?: string;
  certificatePem?: string;
  trustAnchorsPath?: string;
  /** The service's identities of before a key rotation (SIGNING_PREVIOUS_CERT_CHAIN): still its own, still trusted. */
  previous?: Array<{ certificatePem: string; rootCertificatePem?: string }>;
}

export function loadTrustStore(src: TrustSources): TrustStore {
  const service = [...certificatesFromPem(src.rootCertificatePem ?? ''), ...certificatesFromPem(src.certificatePem ?? '')];
  const anchors = [...certificatesFromPem(src.rootCertificatePem ?? '')];
  if (!src.rootCertificatePem) anchors.push(...certificatesFromPem(src.certificatePem ?? ''));
  for (const p of src.previous ?? []) {
    service.push(...certificatesFromPem(p.rootCertificatePem ?? ''), ...certificatesFromPem(p.certificatePem));
    anchors.push(...certificatesFromPem(p.rootCertificatePem ?? p.certificatePem));
  }
  if (src.trustAnchorsPath) anchors.push(...certificatesFromPem(fs.readFileSync(src.trustAnchorsPath, 'utf8')));
  return { anchors, service };
}

/** CN / e-mail of a certificate subject, for the answer's signer block. */
export function subjectParts(cert: X509Certificate): { name?: string; email?: string } {
  const lines = cert.subject.split('\n');
  const get = (k: string) => lines.find((l) => l.startsWith(`${k}=`))?.slice(k.length + 1);
  const san = cert.subjectAltName?.match(/email:([^,\s]+)/)?.[1];
  return { name: get('CN') ?? get('O'), email: get('emailAddress') ?? san };
}

const KEY_USAGE_OID = oidContent('2.5.29.15');
export const EKU_TIME_STAMPING = '1.3.6.1.5.5.7.3.8';

/** The keyUsage bits a signer needs (X.509 bit 0 digitalSignature, bit 1 nonRepudiation); undefined if absent. */
export function keyUsageOf(cert: X509Certificate): { digitalSignature: boolean; nonRepudiation: boolean } | undefined {
  // Certificates come from the bounded parse cache (cms.ts), so the same object recurs across signatures.
  if (keyUsageCache.has(cert)) return keyUsageCache.get(cert);
  const ku = readKeyUsage(cert);
  keyUsageCache.set(cert, ku);
  return ku;
}
const keyUsageCache = new WeakMap<X509Certificate, { digitalSignature: boolean; nonRepudiation: boolean } | undefined>();

function readKeyUsage(cert: X509Certificate): { digitalSignature: boolean; nonRepudiation: boolean } | undefined {
  const ext = certificateFields(new Uint8Array(cert.raw))?.extensions.find((e) => Buffer.compare(e.oid, KEY_USAGE_OID) === 0);
  if (!ext) return undefined;
  try {
    const bits = parseAs(ext.value, KeyUsage, (m) => new Error(m)).toNumber();
    return { digitalSignature: (bits & KeyUsageFlags.digitalSignature) !== 0, nonRepudiation: (bits & KeyUsageFlags.nonRepudiation) !== 0 };
  } catch {
    return { digitalSignature: false, nonRepudiation: false };
  }
}
