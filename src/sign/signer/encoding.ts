/**
 * The two encodings a digest signer needs around a token: the DigestInfo that RSA PKCS#1 v1.5 signs
 * (RFC 8017 §9.2: CKM_RSA_PKCS pads what it is given, so the DigestInfo is built here), and the DER
 * `Ecdsa-Sig-Value` CMS wants from the raw r‖s that CKM_ECDSA returns (PKCS#11 v2.40 §2.3.1).
 */
import { TAG, encodeElement, oidContent } from '../../crypto/der.js';
import { digestOid } from './algorithm.js';
import type { DigestName } from './types.js';

/** DigestInfo ::= SEQUENCE { digestAlgorithm AlgorithmIdentifier (with NULL parameters), digest OCTET STRING }. */
export function digestInfo(hash: DigestName, digest: Uint8Array): Uint8Array {
  const algorithm = encodeElement(TAG.SEQUENCE, encodeElement(TAG.OID, oidContent(digestOid(hash))), encodeElement(TAG.NULL));
  return encodeElement(TAG.SEQUENCE, algorithm, encodeElement(TAG.OCTET_STRING, digest));
}

/** A non-negative INTEGER from big-endian octets: leading zeros dropped, one 0x00 added when the top bit is set. */
function unsignedInteger(octets: Uint8Array): Uint8Array {
  let i = 0;
  while (i < octets.length - 1 && octets[i] === 0) i++;
  const trimmed = octets.subarray(i);
  const body = trimmed[0]! & 0x80 ? Uint8Array.of(0, ...trimmed) : trimmed;
  return encodeElement(TAG.INTEGER, body);
}

/** Ecdsa-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER } from r‖s (each half the length). */
export function ecdsaRawToDer(raw: Uint8Array): Uint8Array {
  if (raw.length === 0 || raw.length % 2 !== 0) throw new Error(`an ECDSA signature of ${raw.length} octets is not r‖s`);
  const half = raw.length / 2;
  return encodeElement(TAG.SEQUENCE, unsignedInteger(raw.subarray(0, half)), unsignedInteger(raw.subarray(half)));
}
