/**
 * Which signature algorithm a key signs with, decided once from its public key (the certificate's): RSA of
 * 2048 bits or more with PKCS#1 v1.5 or PSS (SIGNING_RSA_PADDING; an RSASSA-PSS certificate key is always PSS)
 * and SHA-256; ECDSA on P-256, P-384 or P-521 with the SHA-2 of matching strength (SHA-256, SHA-384, SHA-512),
 * as RFC 5480 §4 and ETSI TS 119 312 pair them. Anything else is refused before the service starts.
 */
import type { KeyObject } from 'node:crypto';
import { AlgorithmIdentifier } from '@peculiar/asn1-x509';
import { RsaSaPssParams, id_RSASSA_PSS, id_mgf1 } from '@peculiar/asn1-rsa';
import { AsnConvert } from '@peculiar/asn1-schema';
import { DIGEST_LENGTH, type DigestName, type NamedCurve, type SignatureAlgorithm } from './types.js';

export type RsaPadding = 'pkcs1' | 'pss';

const CURVES: Record<string, { curve: NamedCurve; hash: DigestName }> = {
  prime256v1: { curve: 'P-256', hash: 'SHA-256' },
  secp384r1: { curve: 'P-384', hash: 'SHA-384' },
  secp521r1: { curve: 'P-521', hash: 'SHA-512' },
};

/** RSA keys shorter than this are refused (NIST SP 800-131A, ETSI TS 119 312). */
export const MIN_RSA_BITS = 2048;

export class UnsupportedKeyError extends Error {}

/** The algorithm for a public (or private) key; throws UnsupportedKeyError naming what the key is. */
export function algorithmFor(key: KeyObject, rsaPadding: RsaPadding = 'pkcs1'): SignatureAlgorithm {
  const type = key.asymmetricKeyType;
  const details = key.asymmetricKeyDetails ?? {};
  if (type === 'rsa' || type === 'rsa-pss') {
    const modulusBits = details.modulusLength ?? 0;
    if (modulusBits < MIN_RSA_BITS) throw new UnsupportedKeyError(`an RSA key of ${modulusBits} bits (at least ${MIN_RSA_BITS} are needed)`);
    // A key certified for RSASSA-PSS only (id-RSASSA-PSS in the certificate) may not make PKCS#1 v1.5 signatures.
    if (type === 'rsa-pss' || rsaPadding === 'pss')
      return { scheme: 'RSASSA-PSS', hash: 'SHA-256', modulusBits, saltLength: DIGEST_LENGTH['SHA-256'] };
    return { scheme: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', modulusBits };
  }
  if (type === 'ec') {
    const curve = CURVES[details.namedCurve ?? ''];
    if (!curve) throw new UnsupportedKeyError(`an EC key on curve ${details.namedCurve ?? 'unknown'} (P-256, P-384 or P-521 are supported)`);
    return { scheme: 'ECDSA', ...curve };
  }
  throw new UnsupportedKeyError(`a ${type ?? 'unknown'} key (RSA or ECDSA P-256/P-384/P-521 are supported)`);
}

/** What GET /v1/verify/key says of the algorithm: `ECDSA P-256 SHA-256`, `RSA-3072 PKCS#1 v1.5 SHA-256`, `RSA-2048 RSASSA-PSS SHA-256`. */
export function describeAlgorithm(a: SignatureAlgorithm): string {
  if (a.scheme === 'ECDSA') return `ECDSA ${a.curve} ${a.hash}`;
  return `RSA-${a.modulusBits} ${a.scheme === 'RSASSA-PSS' ? 'RSASSA-PSS' : 'PKCS#1 v1.5'} ${a.hash}`;
}

/** The largest signature an algorithm makes, in octets (DER for ECDSA: two INTEGERs of the order's size + 1, in a SEQUENCE). */
export function maxSignatureLength(a: SignatureAlgorithm): number {
  if (a.scheme !== 'ECDSA') return Math.ceil(a.modulusBits / 8);
  const order = { 'P-256': 32, 'P-384': 48, 'P-521': 66 }[a.curve];
  return 2 * (order + 3) + 3;
}

const DIGEST_OID: Record<DigestName, string> = {
  'SHA-256': '2.16.840.1.101.3.4.2.1',
  'SHA-384': '2.16.840.1.101.3.4.2.2',
  'SHA-512': '2.16.840.1.101.3.4.2.3',
};
const RSA_OID: Record<DigestName, string> = {
  'SHA-256': '1.2.840.113549.1.1.11',
  'SHA-384': '1.2.840.113549.1.1.12',
  'SHA-512': '1.2.840.113549.1.1.13',
};
const ECDSA_OID: Record<DigestName, string> = {
  'SHA-256': '1.2.840.10045.4.3.2',
  'SHA-384': '1.2.840.10045.4.3.3',
  'SHA-512': '1.2.840.10045.4.3.4',
};

/** The digest's AlgorithmIdentifier (parameters absent, as RFC 5754 §2 prefers for CMS). */
export function digestAlgorithmIdentifier(hash: DigestName): AlgorithmIdentifier {
  return new AlgorithmIdentifier({ algorithm: DIGEST_OID[hash] });
}

/** The DER OBJECT IDENTIFIER value of a digest (for the DigestInfo of PKCS#1 v1.5). */
export const digestOid = (hash: DigestName): string => DIGEST_OID[hash];

/** The signatureAlgorithm of a SignerInfo (RFC 5754 §3 for RSA and ECDSA, RFC 4056 for RSASSA-PSS). */
export function signatureAlgorithmIdentifier(a: SignatureAlgorithm): AlgorithmIdentifier {
  if (a.scheme === 'ECDSA') return new AlgorithmIdentifier({ algorithm: ECDSA_OID[a.hash] });
  if (a.scheme === 'RSASSA-PKCS1-v1_5') return new AlgorithmIdentifier({ algorithm: RSA_OID[a.hash], parameters: null });
  const hash = new AlgorithmIdentifier({ algorithm: DIGEST_OID[a.hash], parameters: null });
  const params = new RsaSaPssParams({
    hashAlgorithm: hash,
    maskGenAlgorithm: new AlgorithmIdentifier({ algorithm: id_mgf1, parameters: AsnConvert.serialize(hash) }),
    saltLength: a.saltLength,
  });
  return new AlgorithmIdentifier({ algorithm: id_RSASSA_PSS, parameters: AsnConvert.serialize(params) });
}
