/**
 * The validation data of a B-LT signature: the signer's chain and, for every certificate in it that is not
 * a self-signed root, an OCSP response and/or a CRL.
 * - Folio's generated CA: made in-process (ca.ts), no network.
 * - A SIGNING_P12 identity from another CA: fetched from the certificate's own OCSP responder (Authority
 *   Information Access) or CRL distribution point, through the SSRF-safe fetcher and only from hosts named
 *   on URL_FETCH_ALLOWLIST. Without such a source the request fails before anything is signed; B-LT is
 *   never quietly downgraded to B-T.
 * The timestamp authority's certificates (from its token) are added too, with their revocation data when an
 * allow-listed source has it (best effort: the TSA's chain is not ours to vouch for).
 */
import { X509Certificate } from 'node:crypto';
import { OCSPRequest, OCSPResponse, OCSPResponseStatus, Request, TBSRequest } from '@peculiar/asn1-ocsp';
import {
  AuthorityInfoAccessSyntax,
  Certificate,
  CertificateList,
  CRLDistributionPoints,
  id_ad_ocsp,
  id_ce_cRLDistributionPoints,
  id_pe_authorityInfoAccess,
} from '@peculiar/asn1-x509';
import { FolioError } from '../errors.js';
import type { SafeFetcher } from '../fetch/safe-fetch.js';
import type { SigningIdentity } from './identity-types.js';
import { parseAs, serialize } from '../crypto/asn1.js';
import type { ValidationData } from '../pdf/index.js';
import { splitSignedData } from '../crypto/cms-slices.js';
import { buildCrl, certIdOf, ocspResponseFor } from './ca.js';

export interface RevocationSources {
  fetcher?: SafeFetcher;
  /** URL_FETCH_ALLOWLIST: `host:port` entries; revocation data is fetched from these hosts only. */
  allowlist: string[];
  now?: Date;
}

interface Pointers {
  ocsp: string[];
  crl: string[];
}

/** The OCSP and CRL URLs a certificate names (AIA id-ad-ocsp, CRL distribution points), http(s) only. */
function pointers(der: Uint8Array): Pointers {
  const out: Pointers = { ocsp: [], crl: [] };
  let cert: Certificate;
  try {
    cert = parseAs(der, Certificate, (m) => new Error(m));
  } catch {
    return out;
  }
  for (const ext of cert.tbsCertificate.extensions ?? []) {
    try {
      if (ext.extnID === id_pe_authorityInfoAccess) {
        for (const ad of parseAs(ext.extnValue.buffer, AuthorityInfoAccessSyntax, (m) => new Error(m))) {
          if (ad.accessMethod === id_ad_ocsp && ad.accessLocation.uniformResourceIdentifier)
            out.ocsp.push(ad.accessLocation.uniformResourceIdentifier);
        }
      } else if (ext.extnID === id_ce_cRLDistributionPoints) {
        for (const dp of parseAs(ext.extnValue.buffer, CRLDistributionPoints, (m) => new Error(m))) {
          for (const name of dp.distributionPoint?.fullName ?? []) if (name.uniformResourceIdentifier) out.crl.push(name.uniformResourceIdentifier);
        }
      }
    } catch {
      // An extension that does not parse names no source.
    }
  }
  const web = (u: string) => /^https?:\/\//i.test(u);
  return { ocsp: out.ocsp.filter(web), crl: out.crl.filter(web) };
}

function allowed(url: string, allowlist: string[]): boolean {
  try {
    const u = new URL(url);
    const port = u.port || (u.protocol === 'https:' ? '443' : '80');
    return allowlist.some((entry) => entry.toLowerCase() === `${u.hostname.toLowerCase()}:${port}`);
  } catch {
    return false;
  }
}

const selfSigned = (der: Uint8Array) => {
  const c = new X509Certificate(der);
  return c.issuer === c.subject && c.verify(c.publicKey);
};

const isGeneratedCa = (identity: SigningIdentity) =>
  identity.ca !== undefined && identity.chainDer.length >= 2 && Buffer.from(identity.chainDer[1]!).equals(Buffer.from(identity.ca.certificateDer));

/** The certificates of the chain that need revocation data, each with its issuer when the chain has it. */
function needingRevocation(chain: Uint8Array[]): Array<{ cert: Uint8Array; issuer?: Uint8Array }> {
  const out: Array<{ cert: Uint8Array; issuer?: Uint8Array }> = [];
  chain.forEach((cert, i) => {
    if (!selfSigned(cert)) out.push({ cert, issuer: chain[i + 1] });
  });
  return out;
}

function subjectOf(der: Uint8Array): string {
  return new X509Certificate(der).subject.split('\n').filter(Boolean).join(', ');
}

/**
 * Refuses B-LT/B-LTA before signing when the signer's revocation data cannot be had: for a P12 identity,
 * every certificate below the root needs an OCSP responder or CRL on an allow-listed host.
 */
export function assertRevocationObtainable(identity: SigningIdentity, allowlist: string[], level: string): void {
  if (isGeneratedCa(identity)) return;
  for (const { cert, issuer } of needingRevocation(identity.chainDer)) {
    const p = pointers(cert);
    const ocsp = issuer ? p.ocsp.filter((u) => allowed(u, allowlist)) : [];
    if (ocsp.length === 0 && p.crl.filter((u) => allowed(u, allowlist)).length === 0) {
      const named = [...p.ocsp, ...p.crl].map((u) => new URL(u).host);
      throw new FolioError(
        'VALIDATION_ERROR',
        `PAdES ${level} needs revocation data (OCSP or CRL) for the signing certificate ${subjectOf(cert)}: ` +
          (named.length === 0
            ? 'the certificate names no OCSP responder or CRL distribution point'
            : `its sources (${[...new Set(named)].join(', ')}) are not on URL_FETCH_ALLOWLIST`) +
          '. Sign at level B-T, or let the operator allow the host.',
        { details: [{ field: 'level', issue: `${level} needs revocation data this server may not fetch` }] },
      );
    }
  }
}

/** OCSP over HTTP GET (RFC 6960 Appendix A.1), which the SSRF-safe fetcher speaks. */
async function fetchOcsp(fetcher: SafeFetcher, url: string, cert: Uint8Array, issuer: Uint8Array): Promise<Uint8Array> {
  const request = serialize(new OCSPRequest({ tbsRequest: new TBSRequest({ requestList: [new Request({ reqCert: certIdOf(cert, issuer) })] }) }));
  const path = encodeURIComponent(Buffer.from(request).toString('base64'));
  const { bytes } = await fetcher.fetch(`${url.replace(/\/+$/, '')}/${path}`, 'level');
  const resp = parseAs(bytes, OCSPResponse, () => new Error('not an OCSP response'));
  if (resp.responseStatus !== OCSPResponseStatus.successful || !resp.responseBytes) {
    throw new Error(`the OCSP responder answered status ${resp.responseStatus}`);
  }
  return bytes;
}

async function fetchCrl(fetcher: SafeFetcher, url: string): Promise<Uint8Array> {
  const { bytes } = await fetcher.fetch(url, 'level');
  parseAs(bytes, CertificateList, () => new Error('not a DER CRL'));
  return bytes;
}

/** Revocation data of one certificate from its allow-listed sources: the first OCSP answer, else a CRL. */
async function fetchRevocation(
  cert: Uint8Array,
  issuer: Uint8Array | undefined,
  src: RevocationSources,
): Promise<Pick<ValidationData, 'ocsps' | 'crls'>> {
  const p = pointers(cert);
  const errors: string[] = [];
  if (!src.fetcher) throw new Error('no URL fetcher');
  if (issuer) {
    for (const url of p.ocsp.filter((u) => allowed(u, src.allowlist))) {
      try {
        return { ocsps: [await fetchOcsp(src.fetcher, url, cert, issuer)], crls: [] };
      } catch (e) {
        errors.push(`OCSP ${new URL(url).host}: ${(e as Error).message}`);
      }
    }
  }
  for (const url of p.crl.filter((u) => allowed(u, src.allowlist))) {
    try {
      return { ocsps: [], crls: [await fetchCrl(src.fetcher, url)] };
    } catch (e) {
      errors.push(`CRL ${new URL(url).host}: ${(e as Error).message}`);
    }
  }
  throw new Error(errors.join('; ') || 'no allow-listed source');
}

/** The signer's chain and its revocation data. */
export async function signerValidationData(identity: SigningIdentity, src: RevocationSources): Promise<ValidationData> {
  const data: ValidationData = { certs: [...identity.chainDer], ocsps: [], crls: [] };
  if (isGeneratedCa(identity)) {
    const now = src.now ?? new Date();
    data.ocsps.push(ocspResponseFor(identity.ca!, identity.chainDer[0]!, now));
    data.crls.push(buildCrl(identity.ca!, now));
    return data;
  }
  for (const { cert, issuer } of needingRevocation(identity.chainDer)) {
    try {
      const got = await fetchRevocation(cert, issuer, src);
      data.ocsps.push(...got.ocsps);
      data.crls.push(...got.crls);
    } catch (e) {
      throw new FolioError(
        'SERVICE_UNAVAILABLE',
        `The document was not signed: the revocation data of the signing certificate could not be fetched (${(e as Error).message}). Retry later, or sign at level B-T.`,
        { retryAfter: 30, cause: e },
      );
    }
  }
  return data;
}

/** The certificates a CMS SignedData (a timestamp token) carries, byte for byte. */
export function cmsCertificates(cms: Uint8Array): Uint8Array[] {
  return (splitSignedData(cms)?.certs ?? []).map((c) => new Uint8Array(c));
}

/** The TSA's certificates from its token, with revocation data where an allow-listed source has it. */
export async function timestampValidationData(token: Uint8Array, src: RevocationSources): Promise<ValidationData> {
  const certs = cmsCertificates(token);
  const data: ValidationData = { certs, ocsps: [], crls: [] };
  for (const { cert, issuer } of needingRevocation(certs)) {
    const p = pointers(cert);
    if (![...p.ocsp, ...p.crl].some((u) => allowed(u, src.allowlist)) || !src.fetcher) continue;
    try {
      const got = await fetchRevocation(cert, issuer, src);
      data.ocsps.push(...got.ocsps);
      data.crls.push(...got.crls);
    } catch {
      // Best effort: the TSA's revocation data is added where available.
    }
  }
  return data;
}
