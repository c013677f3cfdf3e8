/**
 * CMS SignedData checks for PDF signatures and RFC 3161 timestamp tokens. The structures are parsed with
 * @peculiar/asn1-cms / asn1-tsp (src/crypto/asn1.ts); the exact original bytes that hashing needs (embedded
 * certificates, the signed attributes, the signer identifier) are cut out with the header reader of
 * src/crypto/der.ts, so nothing that is hashed or compared is a re-serialisation, and the certificates (most of
 * the bytes) are never decoded by the schema at all. Every hash and signature check runs in node:crypto
 * (OpenSSL), which has none of the lenient-PKCS#1 forgeries of pure-JS RSA. Signed attributes are verified over
 * their original encoding (re-tagged as a SET), so a BER-encoded attribute set cannot verify under a different
 * reading.
 */
import crypto, { X509Certificate } from 'node:crypto';
import { Attribute, ContentInfo, EncapsulatedContentInfo, SignedData, SignerInfos } from '@peculiar/asn1-cms';
import { OctetString } from '@peculiar/asn1-schema';
import { RsaSaPssParams } from '@peculiar/asn1-rsa';
import { TSTInfo } from '@peculiar/asn1-tsp';
import { AlgorithmIdentifier, Time } from '@peculiar/asn1-x509';
import {
  OID as OIDS,
  SigningCertificate,
  SigningCertificateV2,
  encapsulatedContent,
  parseAs,
  parseOid,
  parseSmallInteger,
  serialize,
} from '../crypto/asn1.js';
import {
  readEncapsulated,
  readEssCertId,
  readOctetString,
  readSignerInfos,
  readTstInfo,
  type AttributeView,
  type SignerInfoView,
} from './cms-lite.js';
import { splitSignedData } from '../crypto/cms-slices.js';
import {
  TAG,
  certificateFields,
  contextTag,
  elementBytes,
  encodeElement,
  octetStringContents,
  oidContent,
  readChildren,
  readElement,
  retag,
  tryDer,
} from '../crypto/der.js';

export const DIGEST_BY_OID: Record<string, string> = {
  '1.3.14.3.2.26': 'SHA-1',
  '2.16.840.1.101.3.4.2.4': 'SHA-224',
  '2.16.840.1.101.3.4.2.1': 'SHA-256',
  '2.16.840.1.101.3.4.2.2': 'SHA-384',
  '2.16.840.1.101.3.4.2.3': 'SHA-512',
  // id-shake256 (RFC 8702): SHAKE256 with a 512-bit output, the digest Ed448 signatures use (RFC 8419).
  '2.16.840.1.101.3.4.2.12': 'SHAKE256',
};
/** id-shake256-len (RFC 8419): SHAKE256 whose output length in bits is the algorithm's INTEGER parameter. */
const SHAKE256_LEN = '2.16.840.1.101.3.4.2.18';
const NODE_HASH: Record<string, string> = {
  'SHA-1': 'sha1',
  'SHA-224': 'sha224',
  'SHA-256': 'sha256',
  'SHA-384': 'sha384',
  'SHA-512': 'sha512',
  SHAKE256: 'shake256',
};

/** A node:crypto hash for a digest label (SHAKE256 with the 512-bit output CMS uses); undefined if unknown. */
export function createDigest(alg: string): crypto.Hash | undefined {
  const name = NODE_HASH[alg];
  if (!name) return undefined;
  return name === 'shake256' ? crypto.createHash(name, { outputLength: 64 }) : crypto.createHash(name);
}

/**
 * The digest label of an AlgorithmIdentifier: id-shake256-len counts only with the 512-bit output RFC 8419
 * prescribes (a shorter SHAKE output would be a weaker digest under the same name).
 */
export function digestOfAlgorithm(oid: string, params: ArrayBuffer | null | undefined): string | undefined {
  if (oid !== SHAKE256_LEN) return DIGEST_BY_OID[oid];
  const bits = params ? parseSmallInteger(params) : undefined;
  return bits === 512 ? 'SHAKE256' : undefined;
}

/** Signature algorithm OIDs → [scheme, digest implied by the OID or undefined to use the digest algorithm]. */
const SIG_ALGS: Record<string, [scheme: 'RSA' | 'PSS' | 'ECDSA' | 'EDDSA', digest?: string]> = {
  '1.2.840.113549.1.1.1': ['RSA'],
  '1.2.840.113549.1.1.5': ['RSA', 'SHA-1'],
  '1.2.840.113549.1.1.14': ['RSA', 'SHA-224'],
  '1.2.840.113549.1.1.11': ['RSA', 'SHA-256'],
  '1.2.840.113549.1.1.12': ['RSA', 'SHA-384'],
  '1.2.840.113549.1.1.13': ['RSA', 'SHA-512'],
  '1.2.840.113549.1.1.10': ['PSS'],
  '1.2.840.10045.2.1': ['ECDSA'],
  '1.2.840.10045.4.1': ['ECDSA', 'SHA-1'],
  '1.2.840.10045.4.3.1': ['ECDSA', 'SHA-224'],
  '1.2.840.10045.4.3.2': ['ECDSA', 'SHA-256'],
  '1.2.840.10045.4.3.3': ['ECDSA', 'SHA-384'],
  '1.2.840.10045.4.3.4': ['ECDSA', 'SHA-512'],
  '1.3.101.112': ['EDDSA'], // Ed25519 (RFC 8419: signed attributes digested with SHA-512)
  '1.3.101.113': ['EDDSA'], // Ed448 (signed attributes digested with SHAKE256, 512-bit output)
};

const OID = OIDS;

export interface CmsResult {
  /** Problems that make the CMS unusable (not parseable, no signer certificate, unknown algorithm). */
  errors: string[];
  warnings: string[];
  digestAlgorithm?: string;
  /** The signature scheme as read from the SignerInfo (RSA, RSASSA-PSS with its parameters, ECDSA, Ed25519, Ed448). */
  signatureAlgorithm?: string;
  digestMatches: boolean;
  signatureValid: boolean;
  signerCertificate?: X509Certificate;
  certificates: X509Certificate[];
  signingTime?: Date;
  /** The SignerInfo signature value, which an RFC 3161 signature timestamp must imprint. */
  signatureValue?: Uint8Array;
  timestampToken?: Uint8Array;
  /** Encapsulated content (adbe.pkcs7.sha1 carries the SHA-1 of the ranges here; a timestamp its TSTInfo). */
  encapsulatedContent?: Uint8Array;
  /** For a timestamp token: the parsed TSTInfo. */
  tstInfo?: { genTime: Date; imprintAlgorithm?: string; imprint: Uint8Array };
  /** An ESS signing-certificate(-v2) signed attribute names the signer certificate (a PAdES B-B requirement). */
  essSigningCertificate?: boolean;
  /**
   * Revocation data carried in the CMS, raw: SignedData's `crls` [1] RevocationInfoChoices, Adobe's
   * adbe-revocationInfoArchival signed attribute, CAdES revocation-values unsigned attribute (read in revocation.ts).
   */
  revocationRaw?: { crlsField?: Uint8Array; adbeArchival?: Uint8Array; revocationValues?: Uint8Array };
}

/**
 * Parsed certificates by DER, bounded: the same few signer and CA certificates recur across signatures and
 * requests, and parsing one costs more than the rest of its checks. Certificates are public, not documents.
 */
const certCache = new Map<string, X509Certificate>();
const CERT_CACHE_SIZE = 512;
export function certificateOf(der: Uint8Array): X509Certificate {
  const key = Buffer.from(der.buffer, der.byteOffset, der.byteLength).toString('base64');
  let cert = certCache.get(key);
  if (!cert) {
    cert = new X509Certificate(Buffer.from(der));
    if (certCache.size >= CERT_CACHE_SIZE) certCache.delete(certCache.keys().next().value!);
    certCache.set(key, cert);
  }
  return cert;
}

const hexOf = (u: Uint8Array | ArrayBuffer | undefined) =>
  u
    ? Buffer.from(u instanceof Uint8Array ? u : new Uint8Array(u))
        .toString('hex')
        .replace(/^(00)+(?=.)/, '')
        .toLowerCase()
    : '';
const SKI_OID = oidContent('2.5.29.14');

interface CertIds {
  serialHex: string;
  issuer: Uint8Array;
  ski?: Uint8Array;
}

/** Serial number, raw issuer Name and subject key identifier of a DER certificate, read from its headers. */
function certIdsOf(cert: Uint8Array): CertIds {
  const f = certificateFields(cert);
  if (!f) throw new Error('certificate is not DER');
  const skiExt = f.extensions.find((e) => Buffer.compare(e.oid, SKI_OID) === 0);
  return { serialHex: hexOf(f.serial), issuer: f.issuer, ski: skiExt && octetStringContents(skiExt.value) };
}

/** certIdsOf for a certificate of the parse cache (certificateOf): read once per certificate object. */
const certIdsCache = new WeakMap<X509Certificate, CertIds>();
function idsOfCertificate(cert: X509Certificate, der: Uint8Array): CertIds {
  let ids = certIdsCache.get(cert);
  if (!ids) certIdsCache.set(cert, (ids = certIdsOf(der)));
  return ids;
}

/**
 * The original bytes of the first SignerInfo's signed attributes ([0] IMPLICIT SET OF) and of the issuer Name
 * of its issuerAndSerialNumber; the schema parse re-encodes both, and the signature and the certificate match
 * need them as they were written.
 */
function signerInfoBytes(signerInfos: Uint8Array): { signedAttrs?: Uint8Array; sidIssuer?: Uint8Array } {
  const first = tryDer(() => readChildren(signerInfos, readElement(signerInfos))[0]);
  const fields = first && tryDer(() => readChildren(signerInfos, first));
  if (!fields) return {};
  const attrs = fields.find((f, i) => i >= 3 && f.tag === contextTag(0));
  const sid = fields[1];
  const sidParts = sid?.tag === TAG.SEQUENCE ? tryDer(() => readChildren(signerInfos, sid)) : undefined;
  return {
    signedAttrs: attrs && elementBytes(signerInfos, attrs),
    sidIssuer: sidParts?.[0] && elementBytes(signerInfos, sidParts[0]),
  };
}

const cmsError = (m: string) => new Error(m);

/** The first value of each attribute of `type`, raw (ANY). */
const valuesOf = (attrs: AttributeView[] | undefined, type: string): ArrayBuffer[][] =>
  (attrs ?? []).filter((a) => a.attrType === type).map((a) => a.attrValues);

/** `contentDigest(alg)` hashes the signed content (the ByteRange bytes) with the named algorithm. */
export function verifyCms(der: Uint8Array, contentDigest: (alg: string) => Uint8Array | undefined): CmsResult {
  const result: CmsResult = { errors: [], warnings: [], digestMatches: false, signatureValid: false, certificates: [] };
  // SignedData ::= { version, digestAlgorithms, encapContentInfo, [0] certificates, [1] crls, signerInfos }
  // The schema's EncapsulatedContentInfo, or the header reading of it (content already unwrapped).
  let encapInfo: EncapsulatedContentInfo | { eContentType: string; content?: Uint8Array };
  let signerInfos: SignerInfoView[];
  let certDers: Uint8Array[];
  let raw: { signedAttrs?: Uint8Array; sidIssuer?: Uint8Array };
  try {
    const split = splitSignedData(der);
    if (split?.crls) result.revocationRaw = { crlsField: split.crls };
    if (split) {
      // Fast path: certificates are cut out as raw slices; the schema decodes only the small parts.
      const lite = readEncapsulated(split.encap);
      encapInfo = lite
        ? { eContentType: lite.eContentType, ...(lite.content ? { content: lite.content } : {}) }
        : parseAs(split.encap, EncapsulatedContentInfo, cmsError);
      // Signer infos read by headers (cms-lite.ts); the schema only when they do not read cleanly.
      signerInfos = readSignerInfos(split.signerInfos) ?? [...parseAs(split.signerInfos, SignerInfos, cmsError)];
      certDers = split.certs;
      raw = signerInfoBytes(split.signerInfos);
    } else {
      // Headers not readable (e.g. multi-byte tags): the schema parses the whole structure.
      const ci = parseAs(der, ContentInfo, cmsError);
      if (ci.contentType !== OID.signedData) throw new Error(`content type ${ci.contentType || '?'} is not SignedData`);
      const signedData = parseAs(ci.content, SignedData, cmsError);
      encapInfo = signedData.encapContentInfo;
      signerInfos = [...signedData.signerInfos];
      certDers = [...(signedData.certificates ?? [])].flatMap((c) => (c.certificate ? [serialize(c.certificate)] : []));
      const sis = serialize(signedData.signerInfos);
      raw = signerInfoBytes(sis);
    }
  } catch (e) {
    result.errors.push(`CMS not parseable: ${(e as Error).message}`.slice(0, 200));
    return result;
  }
  const eContentType = encapInfo.eContentType;
  const encapsulated = encapInfo instanceof EncapsulatedContentInfo ? encapsulatedContent(encapInfo) : encapInfo.content;
  result.encapsulatedContent = encapsulated;
  const certIds: CertIds[] = [];
  for (const c of certDers) {
    try {
      const cert = certificateOf(c);
      // Both lists are pushed together (the signer is found by index): a certificate whose identifiers
      // cannot be read is left out of both.
      const ids = idsOfCertificate(cert, c);
      result.certificates.push(cert);
      certIds.push(ids);
    } catch {
      result.warnings.push('an embedded certificate could not be read');
    }
  }
  if (signerInfos.length !== 1) {
    result.errors.push(`CMS has ${signerInfos.length} signer infos; exactly one is expected`);
    if (signerInfos.length === 0) return result;
  }
  // SignerInfo ::= { version, sid, digestAlgorithm, [0] signedAttrs, signatureAlgorithm, signature, [1] unsignedAttrs }
  const si = signerInfos[0]!;
  const digestOid = si.digestAlgorithm.algorithm;
  const digestAlg = digestOfAlgorithm(digestOid, si.digestAlgorithm.parameters);
  if (!digestAlg) {
    result.errors.push(`unsupported digest algorithm ${digestOid}`);
    return result;
  }
  result.digestAlgorithm = digestAlg;
  if (digestAlg === 'SHA-1') result.warnings.push('WEAK_DIGEST_ALGORITHM: SHA-1 is no longer accepted for new signatures');
  const signatureValue = new Uint8Array(si.signature.buffer);
  if (signatureValue.length === 0) {
    result.errors.push('the SignerInfo has no signature value');
    return result;
  }
  result.signatureValue = signatureValue;

  // The signer certificate: by issuer + serial number, or by subject key identifier.
  const { issuerAndSerialNumber: ias, subjectKeyIdentifier: skid } = si.sid;
  const sidIssuer = ias && (raw.sidIssuer ?? serialize(ias.issuer));
  const idx = certIds.findIndex((ids) => {
    if (ias) return hexOf(ias.serialNumber) === ids.serialHex && !!sidIssuer && Buffer.compare(sidIssuer, ids.issuer) === 0;
    return !!skid && !!ids.ski && hexOf(skid.buffer) === hexOf(ids.ski);
  });
  if (idx < 0) {
    result.errors.push('the signer certificate is not in the CMS');
    return result;
  }
  const signer = result.certificates[idx]!;
  result.signerCertificate = signer;

  // Encapsulated content (timestamp tokens, adbe.pkcs7.sha1) or the detached ByteRange content.
  const hashOfContent = encapsulated ? createDigest(digestAlg)!.update(encapsulated).digest() : contentDigest(digestAlg);
  if (!hashOfContent) {
    result.errors.push('the signed content could not be hashed');
    return result;
  }
  if (eContentType === OID.tstInfo && encapsulated) {
    try {
      const lite = readTstInfo(encapsulated);
      const tst = lite
        ? { genTime: lite.genTime, alg: lite.imprintAlgorithm, imprint: lite.imprint }
        : (({ genTime, messageImprint: m }) => ({ genTime, alg: m.hashAlgorithm, imprint: new Uint8Array(m.hashedMessage.buffer) }))(
            parseAs(encapsulated, TSTInfo, cmsError),
          );
      result.tstInfo = { genTime: tst.genTime, imprintAlgorithm: digestOfAlgorithm(tst.alg.algorithm, tst.alg.parameters), imprint: tst.imprint };
    } catch {
      result.errors.push('TSTInfo not parseable');
    }
  }

  let signedBytes: Uint8Array;
  const signedAttrs = si.signedAttrs;
  if (signedAttrs) {
    const md = valuesOf(signedAttrs, OID.messageDigest);
    let mdValue: Uint8Array | undefined;
    try {
      const v = md.length === 1 && md[0]!.length === 1 ? new Uint8Array(md[0]![0]!) : undefined;
      mdValue = v && (readOctetString(v) ?? new Uint8Array(parseAs(v, OctetString, cmsError).buffer));
    } catch {
      mdValue = undefined;
    }
    if (!mdValue) result.errors.push('signed attributes lack a single message-digest');
    result.digestMatches = !!mdValue && Buffer.compare(Buffer.from(mdValue), Buffer.from(hashOfContent)) === 0;
    const ct = valuesOf(signedAttrs, OID.contentType);
    const ctValue = ct.length === 1 && ct[0]![0] ? parseOid(ct[0]![0]) : undefined;
    if (ctValue !== eContentType) result.errors.push(`content-type attribute (${ctValue ?? 'absent'}) does not match ${eContentType}`);
    const st = valuesOf(signedAttrs, OID.signingTime)[0]?.[0];
    if (st) {
      try {
        result.signingTime = parseAs(st, Time, cmsError).getTime();
      } catch {
        // an unreadable signing-time is ignored, as before: /M and the timestamp carry the time
      }
    }
    checkSigningCertificateAttribute(signedAttrs, signer, result);
    // The signature covers the attributes' original encoding with the SET tag instead of [0] IMPLICIT.
    if (!raw.signedAttrs) {
      result.errors.push('the signed attributes could not be located');
      return result;
    }
    signedBytes = retag(raw.signedAttrs, TAG.SET);
  } else {
    signedBytes = encapsulated ?? new Uint8Array(0);
  }

  const sigOid = si.signatureAlgorithm.algorithm;
  const sigAlg = SIG_ALGS[sigOid];
  if (!sigAlg) {
    result.errors.push(`unsupported signature algorithm ${sigOid}`);
    return result;
  }
  const [scheme, impliedDigest] = sigAlg;
  result.signatureAlgorithm = scheme === 'EDDSA' ? (sigOid === '1.3.101.112' ? 'Ed25519' : 'Ed448') : scheme === 'PSS' ? 'RSASSA-PSS' : scheme;
  const hashName = NODE_HASH[impliedDigest ?? digestAlg]!;
  if (scheme !== 'EDDSA' && digestAlg === 'SHAKE256') {
    result.errors.push('SHAKE256 is only supported with EdDSA (Ed448) signatures');
    return result;
  }
  if (impliedDigest === 'SHA-1' && digestAlg !== 'SHA-1') result.warnings.push('WEAK_SIGNATURE_ALGORITHM: SHA-1');
  const pairing = pairingProblem(sigOid, scheme, impliedDigest, digestAlg);
  if (pairing) result.warnings.push(`ALGORITHM_MISMATCH: ${pairing}`);
  try {
    const key = signer.publicKey;
    let ok: boolean;
    const sig = signatureValue;
    if (scheme === 'EDDSA') {
      // Pure EdDSA over the signed attributes; the key type (Ed25519/Ed448) must be the one the OID names.
      const want = sigOid === '1.3.101.112' ? 'ed25519' : 'ed448';
      if (key.asymmetricKeyType !== want) throw new Error(`the signer key is ${key.asymmetricKeyType ?? '?'}, not ${want}`);
      if (!signedAttrs) throw new Error('EdDSA signatures without signed attributes are not supported');
      ok = crypto.verify(null, signedBytes, key, sig);
    } else if (scheme === 'PSS') {
      const pss = pssParameters(si.signatureAlgorithm.parameters);
      if (typeof pss === 'string') {
        result.errors.push(pss);
        return result;
      }
      result.signatureAlgorithm = `RSASSA-PSS (${pss.hash}, MGF1 ${pss.hash}, salt ${pss.saltLength})`;
      if (pss.hash !== digestAlg)
        result.warnings.push(
          `ALGORITHM_MISMATCH: the message digest is ${digestAlg} but the RSASSA-PSS parameters hash with ${pss.hash} (RFC 4055, RFC 8933)`,
        );
      ok = crypto.verify(
        NODE_HASH[pss.hash]!,
        signedBytes,
        { key, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: pss.saltLength },
        sig,
      );
    } else if (!signedAttrs && !encapsulated) {
      // Detached, no attributes: the signature is over the ByteRange digest itself.
      ok = verifyPrehashed(scheme, key, hashName, hashOfContent, sig);
      result.digestMatches = ok;
    } else {
      ok = crypto.verify(hashName, signedBytes, scheme === 'ECDSA' ? { key, dsaEncoding: 'der' } : key, sig);
    }
    result.signatureValid = ok;
    if (!signedAttrs && encapsulated) result.digestMatches = ok;
  } catch (e) {
    result.errors.push(`signature could not be checked: ${(e as Error).message}`.slice(0, 200));
  }

  const unsignedValue = (oid: string): Uint8Array | undefined => {
    const v = valuesOf(si.unsignedAttrs, oid)[0]?.[0];
    return v ? new Uint8Array(v) : undefined;
  };
  const ts = unsignedValue(OID.signatureTimeStampToken);
  if (ts) result.timestampToken = ts;
  const adbe = valuesOf(signedAttrs, ADBE_REVOCATION_ARCHIVAL)[0]?.[0];
  const revVals = unsignedValue(REVOCATION_VALUES);
  if (adbe || revVals) {
    result.revocationRaw = {
      ...result.revocationRaw,
      ...(adbe ? { adbeArchival: new Uint8Array(adbe) } : {}),
      ...(revVals ? { revocationValues: revVals } : {}),
    };
  }
  return result;
}

/** The digests EdDSA signed attributes are hashed with (RFC 8419 §3): Ed25519 SHA-512, Ed448 SHAKE256 only. */
const EDDSA_DIGEST: Record<string, string> = { '1.3.101.112': 'SHA-512', '1.3.101.113': 'SHAKE256' };

/**
 * The pairing rules of RFC 8419 (EdDSA), RFC 5754/5758 and RFC 8017 (RSA and ECDSA with a digest in their
 * OID): the SignerInfo's digest algorithm must be the one the signature algorithm implies (RFC 8933 protects
 * exactly that pairing). pyHanko refuses a mismatch as a cryptographic constraint failure. RSASSA-PSS is
 * checked against its parameters by the caller; rsaEncryption and id-ecPublicKey imply no digest.
 */
function pairingProblem(sigOid: string, scheme: string, impliedDigest: string | undefined, digestAlg: string): string | undefined {
  if (scheme === 'EDDSA') {
    const want = EDDSA_DIGEST[sigOid]!;
    const name = sigOid === '1.3.101.112' ? 'Ed25519' : 'Ed448';
    return digestAlg === want ? undefined : `${name} signatures digest their signed attributes with ${want}, not ${digestAlg} (RFC 8419)`;
  }
  if (impliedDigest && impliedDigest !== digestAlg)
    return `the message digest is ${digestAlg} but the signature algorithm ${sigOid} implies ${impliedDigest} (RFC 5754, RFC 8933)`;
  return undefined;
}

/**
 * RSASSA-PSS-params (RFC 4055) ::= { [0] hashAlgorithm DEFAULT sha1, [1] maskGenAlgorithm DEFAULT mgf1SHA1,
 * [2] saltLength DEFAULT 20, [3] trailerField DEFAULT 1 }, read from the AlgorithmIdentifier rather than assumed.
 * node:crypto (OpenSSL) uses the message hash for MGF1, so a different MGF1 hash is refused, as is any
 * trailer field other than 1 (the only one defined).
 */
function pssParameters(der: ArrayBuffer | null | undefined): { hash: string; saltLength: number } | string {
  let params: RsaSaPssParams;
  try {
    params = der ? parseAs(der, RsaSaPssParams, cmsError) : new RsaSaPssParams();
  } catch {
    return 'RSA-PSS parameters are malformed';
  }
  const hash = DIGEST_BY_OID[params.hashAlgorithm.algorithm];
  if (!hash || hash === 'SHAKE256') return `unsupported RSA-PSS hash algorithm ${params.hashAlgorithm.algorithm}`;
  if (params.maskGenAlgorithm.algorithm !== MGF1) return `unsupported RSA-PSS mask generation ${params.maskGenAlgorithm.algorithm}`;
  let mgfHash: string | undefined;
  try {
    const p = params.maskGenAlgorithm.parameters;
    mgfHash = p ? DIGEST_BY_OID[parseAs(p, AlgorithmIdentifier, cmsError).algorithm] : 'SHA-1';
  } catch {
    mgfHash = undefined;
  }
  if (mgfHash !== hash) return `RSA-PSS with MGF1 over ${mgfHash ?? 'an unknown hash'} and message hash ${hash} is not supported`;
  if (params.trailerField !== 1) return `RSA-PSS trailer field ${params.trailerField} is not defined`;
  if (!Number.isInteger(params.saltLength) || params.saltLength < 0 || params.saltLength > 1024) return 'RSA-PSS salt length is out of range';
  return { hash, saltLength: params.saltLength };
}
const MGF1 = '1.2.840.113549.1.1.8';

const ADBE_REVOCATION_ARCHIVAL = '1.2.840.113583.1.1.8';
const REVOCATION_VALUES = '1.2.840.113549.1.9.16.2.24';

/**
 * Verifies `sig` over `data` with a signature AlgorithmIdentifier (CRLs, OCSP responses): the same algorithm
 * table and PSS parameter reading as for CMS signer infos. False for anything unknown.
 */
export function verifyWithAlgorithm(alg: AlgorithmIdentifier, data: Uint8Array, key: crypto.KeyObject, sig: Uint8Array): boolean {
  const entry = SIG_ALGS[alg.algorithm];
  if (!entry) return false;
  const [scheme, digest] = entry;
  try {
    if (scheme === 'EDDSA') return crypto.verify(null, data, key, sig);
    if (scheme === 'PSS') {
      const pss = pssParameters(alg.parameters);
      if (typeof pss === 'string') return false;
      return crypto.verify(NODE_HASH[pss.hash]!, data, { key, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: pss.saltLength }, sig);
    }
    if (!digest) return false;
    return crypto.verify(NODE_HASH[digest]!, data, scheme === 'ECDSA' ? { key, dsaEncoding: 'der' } : key, sig);
  } catch {
    return false;
  }
}

function verifyPrehashed(scheme: string, key: crypto.KeyObject, hashName: string, digest: Uint8Array, sig: Uint8Array): boolean {
  if (scheme === 'RSA') {
    // Recover the DigestInfo with the public key and compare it as a whole (strict: no lenient parsing).
    const recovered = crypto.publicDecrypt({ key, padding: crypto.constants.RSA_PKCS1_PADDING }, sig);
    const oid = DIGEST_INFO_OID[hashName];
    return recovered.equals(oid ? digestInfo(oid, digest) : digest);
  }
  return false;
}

const DIGEST_INFO_OID: Record<string, string> = {
  sha1: '1.3.14.3.2.26',
  sha256: '2.16.840.1.101.3.4.2.1',
  sha384: '2.16.840.1.101.3.4.2.2',
  sha512: '2.16.840.1.101.3.4.2.3',
};

/** PKCS#1 DigestInfo ::= SEQUENCE { AlgorithmIdentifier { oid, NULL }, digest OCTET STRING }, as RSA signs it. */
const digestInfo = (oid: string, digest: Uint8Array): Uint8Array =>
  encodeElement(
    TAG.SEQUENCE,
    encodeElement(TAG.SEQUENCE, encodeElement(TAG.OID, oidContent(oid)), encodeElement(TAG.NULL)),
    encodeElement(TAG.OCTET_STRING, digest),
  );

/** ESS signing-certificate(-v2): the hash of the signer certificate must match the one that was signed. */
function checkSigningCertificateAttribute(attrs: Attribute[], signer: X509Certificate, result: CmsResult): void {
  const v2 = valuesOf(attrs, OID.signingCertificateV2)[0];
  const v1 = valuesOf(attrs, OID.signingCertificate)[0];
  if (!v2 && !v1) return;
  try {
    // SigningCertificate(V2) ::= SEQUENCE { certs SEQUENCE OF ESSCertID(v2), ... }; the first names the signer.
    let alg: string;
    let expected: Buffer;
    const lite = readEssCertId(new Uint8Array(v2 ? v2[0]! : v1![0]!), !!v2);
    if (lite) {
      const oid = lite.algorithm ?? OID.sha256;
      alg = v2 ? (DIGEST_BY_OID[oid] ?? oid) : 'SHA-1';
      expected = Buffer.from(lite.certHash);
    } else if (v2) {
      const first = parseAs(v2[0]!, SigningCertificateV2, cmsError).certs[0]!;
      alg = DIGEST_BY_OID[first.hashAlgorithm.algorithm] ?? first.hashAlgorithm.algorithm;
      expected = Buffer.from(first.certHash.buffer);
    } else {
      alg = 'SHA-1';
      expected = Buffer.from(parseAs(v1![0]!, SigningCertificate, cmsError).certs[0]!.certHash.buffer);
    }
    const hash = NODE_HASH[alg];
    const actual = hash ? crypto.createHash(hash).update(signer.raw).digest() : undefined;
    if (!actual || !actual.equals(expected)) {
      result.errors.push('the signing-certificate attribute does not match the signer certificate');
    } else result.essSigningCertificate = true;
  } catch {
    result.errors.push('the signing-certificate attribute is malformed');
  }
}

/** Hash name for node:crypto of a digest algorithm label. */
export const nodeHash = (alg: string) => NODE_HASH[alg];
