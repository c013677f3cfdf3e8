/**
 * CMS SignedData checks for PDF signatures and RFC 3161 timestamp tokens. asn1js only *parses* (the tree is
 * navigated by position, keeping each element's original bytes, so nothing is re-encoded); every
 * hash and signature check runs in node:crypto (OpenSSL), which has none of the lenient-PKCS#1 forgeries
 * of pure-JS RSA. Signed attributes are verified over their original encoding (re-tagged as a SET), never a
 * re-serialisation, so a BER-encoded attribute set cannot verify under a different reading.
 */
import crypto, { X509Certificate } from 'node:crypto';
import * as asn1js from 'asn1js';
import { readTlv, readTlvChildren } from '../pdf/index.js';

export const DIGEST_BY_OID: Record<string, string> = {
  '1.3.14.3.2.26': 'SHA-1',
  '2.16.840.1.101.3.4.2.4': 'SHA-224',
  '2.16.840.1.101.3.4.2.1': 'SHA-256',
  '2.16.840.1.101.3.4.2.2': 'SHA-384',
  '2.16.840.1.101.3.4.2.3': 'SHA-512',
};
const NODE_HASH: Record<string, string> = { 'SHA-1': 'sha1', 'SHA-224': 'sha224', 'SHA-256': 'sha256', 'SHA-384': 'sha384', 'SHA-512': 'sha512' };

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
  '1.3.101.112': ['EDDSA'],
};

const OID = {
  signedData: '1.2.840.113549.1.7.2',
  data: '1.2.840.113549.1.7.1',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingTime: '1.2.840.113549.1.9.5',
  signingCertificate: '1.2.840.113549.1.9.16.2.12',
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
  timeStampToken: '1.2.840.113549.1.9.16.2.14',
  tstInfo: '1.2.840.113549.1.9.16.1.4',
};

export interface CmsResult {
  /** Problems that make the CMS unusable (not parseable, no signer certificate, unknown algorithm). */
  errors: string[];
  warnings: string[];
  digestAlgorithm?: string;
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
}

/**
 * Parsed certificates by DER, bounded: the same few signer and CA certificates recur across signatures and
 * requests, and parsing one costs more than the rest of its checks. Certificates are public, not documents.
 */
const certCache = new Map<string, X509Certificate>();
const CERT_CACHE_SIZE = 512;
function certificateOf(der: Uint8Array): X509Certificate {
  const key = Buffer.from(der.buffer, der.byteOffset, der.byteLength).toString('base64');
  let cert = certCache.get(key);
  if (!cert) {
    cert = new X509Certificate(Buffer.from(der));
    if (certCache.size >= CERT_CACHE_SIZE) certCache.delete(certCache.keys().next().value!);
    certCache.set(key, cert);
  }
  return cert;
}

/** A parsed CMS element: asn1js blocks navigated by position, keeping each element's original bytes. */
type Block = asn1js.AsnType;

const children = (b: Block | undefined): Block[] => {
  const v = (b as asn1js.Constructed | undefined)?.valueBlock as { value?: Block[] } | undefined;
  return Array.isArray(v?.value) ? v!.value : [];
};
const isContext = (b: Block | undefined, n: number) => b?.idBlock.tagClass === 3 && b.idBlock.tagNumber === n;
const oidOf = (b: Block | undefined): string | undefined => (b instanceof asn1js.ObjectIdentifier ? b.valueBlock.toString() : undefined);
const rawOf = (b: Block): Uint8Array => new Uint8Array(b.valueBeforeDecodeView);
/** Content bytes of an OCTET STRING (primitive or BER-constructed) or of an implicitly tagged primitive. */
function octets(b: Block | undefined): Uint8Array | undefined {
  if (!b) return undefined;
  if (b.idBlock.isConstructed) {
    const parts = children(b).map(octets);
    return parts.every((x) => x) ? new Uint8Array(Buffer.concat(parts as Uint8Array[])) : undefined;
  }
  const view = (b.valueBlock as { valueHexView?: Uint8Array }).valueHexView;
  return view ? new Uint8Array(view) : undefined;
}
const hexOf = (u: Uint8Array | undefined) =>
  u
    ? Buffer.from(u)
        .toString('hex')
        .replace(/^(00)+(?=.)/, '')
        .toLowerCase()
    : '';

/**
 * Splits a DER ContentInfo(SignedData) into its encapContentInfo, certificates and signerInfos by reading only
 * tag/length headers (BER indefinite lengths included), so the certificates (most of the bytes) are not decoded
 * by asn1js at all. Returns undefined when the headers cannot be read; the caller then parses everything with
 * asn1js.
 */
function splitSignedData(der: Uint8Array): { encap: Uint8Array; certs: Uint8Array[]; signerInfos: Uint8Array } | undefined {
  const ci = readTlv(der, 0, der.length);
  if (!ci || ci.tag !== 0x30) return undefined;
  const [ct, content] = readTlvChildren(der, ci) ?? [];
  if (!ct || !content || ct.tag !== 0x06 || content.tag !== 0xa0) return undefined;
  if (Buffer.compare(der.subarray(ct.start, ct.contentEnd), SIGNED_DATA_OID) !== 0) return undefined;
  const sdSeq = readTlv(der, content.start, content.contentEnd);
  const parts = sdSeq && sdSeq.tag === 0x30 ? readTlvChildren(der, sdSeq) : undefined;
  if (!parts || parts.length < 4) return undefined;
  const certSet = parts.find((p) => p.tag === 0xa0);
  const certs = certSet ? readTlvChildren(der, certSet) : [];
  if (!certs) return undefined;
  const last = parts[parts.length - 1]!;
  if (parts[2]!.tag !== 0x30 || last.tag !== 0x31) return undefined;
  return {
    encap: der.subarray(parts[2]!.at, parts[2]!.end),
    certs: certs.filter((c) => c.tag === 0x30).map((c) => der.subarray(c.at, c.end)),
    signerInfos: der.subarray(last.at, last.end),
  };
}
const SIGNED_DATA_OID = Buffer.from('2a864886f70d010702', 'hex');
const SKI_OID = Buffer.from('551d0e', 'hex');

interface CertIds {
  serialHex: string;
  issuer: Uint8Array;
  ski?: Uint8Array;
}

/** Serial number, raw issuer Name and subject key identifier of a DER certificate, read from its headers. */
function certIdsOf(cert: Uint8Array): CertIds {
  const outer = readTlv(cert, 0, cert.length);
  const tbs = outer && readTlvChildren(cert, outer)?.[0];
  const f = tbs && readTlvChildren(cert, tbs);
  if (!f) throw new Error('certificate is not DER');
  const off = f[0]!.tag === 0xa0 ? 1 : 0; // explicit version
  const serial = f[off]!;
  const issuer = f[off + 2]!;
  let ski: Uint8Array | undefined;
  const extsWrap = f.find((t) => t.tag === 0xa3);
  const extsSeq = extsWrap && readTlv(cert, extsWrap.start, extsWrap.contentEnd);
  for (const ext of (extsSeq && readTlvChildren(cert, extsSeq)) ?? []) {
    const e = readTlvChildren(cert, ext);
    if (!e || e.length < 2 || Buffer.compare(cert.subarray(e[0]!.start, e[0]!.contentEnd), SKI_OID) !== 0) continue;
    const value = e[e.length - 1]!;
    const inner = readTlv(cert, value.start, value.contentEnd);
    if (inner) ski = cert.subarray(inner.start, inner.contentEnd);
  }
  return { serialHex: hexOf(cert.subarray(serial.start, serial.contentEnd)), issuer: cert.subarray(issuer.at, issuer.end), ski };
}

function parseDer(der: Uint8Array): Block {
  const asn = asn1js.fromBER(toArrayBuffer(der));
  if (asn.offset === -1) throw new Error(asn.result.error || 'not DER');
  return asn.result;
}

interface Attr {
  type: string;
  values: Block[];
}
const attributesOf = (set: Block | undefined): Attr[] =>
  children(set).map((a) => {
    const [t, vals] = children(a);
    return { type: oidOf(t) ?? '', values: children(vals) };
  });

/** `contentDigest(alg)` hashes the signed content (the ByteRange bytes) with the named algorithm. */
export function verifyCms(der: Uint8Array, contentDigest: (alg: string) => Uint8Array | undefined): CmsResult {
  const result: CmsResult = { errors: [], warnings: [], digestMatches: false, signatureValid: false, certificates: [] };
  // SignedData ::= { version, digestAlgorithms, encapContentInfo, [0] certificates, [1] crls, signerInfos }
  let encapBlock: Block | undefined;
  let signerInfosBlock: Block | undefined;
  let certDers: Uint8Array[] = [];
  try {
    const split = splitSignedData(der);
    if (split) {
      // Fast path: certificates are cut out as raw slices; asn1js decodes only the small parts.
      encapBlock = parseDer(split.encap);
      signerInfosBlock = parseDer(split.signerInfos);
      certDers = split.certs;
    } else {
      // Headers not readable (e.g. multi-byte tags): asn1js parses the whole structure.
      const [ct, content] = children(parseDer(der));
      if (oidOf(ct) !== OID.signedData) throw new Error(`content type ${oidOf(ct) ?? '?'} is not SignedData`);
      const signedData = children(children(content)[0]);
      if (signedData.length < 4) throw new Error('SignedData is truncated');
      encapBlock = signedData[2];
      signerInfosBlock = signedData[signedData.length - 1];
      certDers = signedData
        .filter((b) => isContext(b, 0))
        .flatMap(children)
        .filter((c) => c instanceof asn1js.Sequence)
        .map(rawOf);
    }
  } catch (e) {
    result.errors.push(`CMS not parseable: ${(e as Error).message}`.slice(0, 200));
    return result;
  }
  const encap = children(encapBlock);
  const eContentType = oidOf(encap[0]);
  const encapsulated = isContext(encap[1], 0) ? octets(children(encap[1])[0]) : undefined;
  result.encapsulatedContent = encapsulated;
  const certIds: CertIds[] = [];
  for (const c of certDers) {
    try {
      result.certificates.push(certificateOf(c));
      certIds.push(certIdsOf(c));
    } catch {
      result.warnings.push('an embedded certificate could not be read');
    }
  }
  const signerInfos = children(signerInfosBlock);
  if (signerInfos.length !== 1) {
    result.errors.push(`CMS has ${signerInfos.length} signer infos; exactly one is expected`);
    if (signerInfos.length === 0) return result;
  }
  // SignerInfo ::= { version, sid, digestAlgorithm, [0] signedAttrs, signatureAlgorithm, signature, [1] unsignedAttrs }
  const si = children(signerInfos[0]);
  const sid = si[1];
  let k = 2;
  const digestOid = oidOf(children(si[k++])[0]) ?? '';
  const signedAttrsBlock = isContext(si[k], 0) ? si[k++] : undefined;
  const sigAlgParts = children(si[k++]);
  const signatureValue = octets(si[k++]);
  const unsignedAttrsBlock = isContext(si[k], 1) ? si[k] : undefined;
  const digestAlg = DIGEST_BY_OID[digestOid];
  if (!digestAlg) {
    result.errors.push(`unsupported digest algorithm ${digestOid}`);
    return result;
  }
  result.digestAlgorithm = digestAlg;
  if (digestAlg === 'SHA-1') result.warnings.push('WEAK_DIGEST_ALGORITHM: SHA-1 is no longer accepted for new signatures');
  if (!signatureValue) {
    result.errors.push('the SignerInfo has no signature value');
    return result;
  }
  result.signatureValue = signatureValue;

  // The signer certificate: by issuer + serial number, or by subject key identifier.
  const idx = certIds.findIndex((ids) => {
    if (sid instanceof asn1js.Sequence) {
      const [issuer, serial] = children(sid);
      return !!issuer && !!serial && hexOf(octets(serial)) === ids.serialHex && Buffer.compare(rawOf(issuer), ids.issuer) === 0;
    }
    return isContext(sid, 0) && !!ids.ski && hexOf(octets(sid)) === hexOf(ids.ski);
  });
  if (idx < 0) {
    result.errors.push('the signer certificate is not in the CMS');
    return result;
  }
  const signer = result.certificates[idx]!;
  result.signerCertificate = signer;

  // Encapsulated content (timestamp tokens, adbe.pkcs7.sha1) or the detached ByteRange content.
  const hashOfContent = encapsulated ? crypto.createHash(NODE_HASH[digestAlg]!).update(encapsulated).digest() : contentDigest(digestAlg);
  if (!hashOfContent) {
    result.errors.push('the signed content could not be hashed');
    return result;
  }
  if (eContentType === OID.tstInfo && encapsulated) {
    try {
      // TSTInfo ::= { version, policy, messageImprint { hashAlgorithm, hashedMessage }, serialNumber, genTime, ... }
      const tst = children(parseDer(encapsulated));
      const [alg, hashed] = children(tst[2]);
      const gen = tst[4] as asn1js.GeneralizedTime;
      result.tstInfo = {
        genTime: gen.toDate(),
        imprintAlgorithm: DIGEST_BY_OID[oidOf(children(alg)[0]) ?? ''],
        imprint: octets(hashed) ?? new Uint8Array(),
      };
    } catch {
      result.errors.push('TSTInfo not parseable');
    }
  }

  let signedBytes: Uint8Array;
  if (signedAttrsBlock) {
    const attrs = attributesOf(signedAttrsBlock);
    const one = (oid: string) => attrs.filter((a) => a.type === oid);
    const md = one(OID.messageDigest);
    const mdValue = md.length === 1 && md[0]!.values.length === 1 ? octets(md[0]!.values[0]) : undefined;
    if (!mdValue) result.errors.push('signed attributes lack a single message-digest');
    result.digestMatches = !!mdValue && Buffer.compare(Buffer.from(mdValue), Buffer.from(hashOfContent)) === 0;
    const ct = one(OID.contentType);
    const ctValue = ct.length === 1 ? oidOf(ct[0]!.values[0]) : undefined;
    if (ctValue !== eContentType) result.errors.push(`content-type attribute (${ctValue ?? 'absent'}) does not match ${eContentType}`);
    const st = one(OID.signingTime)[0]?.values[0];
    if (st instanceof asn1js.UTCTime || st instanceof asn1js.GeneralizedTime) result.signingTime = st.toDate();
    checkSigningCertificateAttribute(attrs, signer, result);
    // The signature covers the attributes' original encoding with the SET tag instead of [0] IMPLICIT.
    signedBytes = new Uint8Array(rawOf(signedAttrsBlock));
    signedBytes[0] = 0x31;
  } else {
    signedBytes = encapsulated ?? new Uint8Array(0);
  }

  const sigOid = oidOf(sigAlgParts[0]) ?? '';
  const sigAlg = SIG_ALGS[sigOid];
  if (!sigAlg) {
    result.errors.push(`unsupported signature algorithm ${sigOid}`);
    return result;
  }
  const [scheme, impliedDigest] = sigAlg;
  const hashName = NODE_HASH[impliedDigest ?? digestAlg]!;
  if (impliedDigest === 'SHA-1' && digestAlg !== 'SHA-1') result.warnings.push('WEAK_SIGNATURE_ALGORITHM: SHA-1');
  try {
    const key = signer.publicKey;
    let ok: boolean;
    const sig = signatureValue;
    if (scheme === 'EDDSA') {
      ok = crypto.verify(null, signedBytes, key, sig);
    } else if (scheme === 'PSS') {
      // RSASSA-PSS-params ::= { [0] hashAlgorithm DEFAULT sha1, [1] maskGen, [2] saltLength DEFAULT 20, [3] trailer }
      const params = children(sigAlgParts[1]);
      const hashBlock = params.find((b) => isContext(b, 0));
      const saltBlock = params.find((b) => isContext(b, 2));
      const pssHash = NODE_HASH[DIGEST_BY_OID[oidOf(children(children(hashBlock)[0])[0]) ?? ''] ?? ''] ?? 'sha1';
      const salt = saltBlock ? (children(saltBlock)[0] as asn1js.Integer).valueBlock.valueDec : 20;
      ok = crypto.verify(pssHash, signedBytes, { key, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: salt }, sig);
    } else if (!signedAttrsBlock && !encapsulated) {
      // Detached, no attributes: the signature is over the ByteRange digest itself.
      ok = verifyPrehashed(scheme, key, hashName, hashOfContent, sig);
      result.digestMatches = ok;
    } else {
      ok = crypto.verify(hashName, signedBytes, scheme === 'ECDSA' ? { key, dsaEncoding: 'der' } : key, sig);
    }
    result.signatureValid = ok;
    if (!signedAttrsBlock && encapsulated) result.digestMatches = ok;
  } catch (e) {
    result.errors.push(`signature could not be checked: ${(e as Error).message}`.slice(0, 200));
  }

  const ts = attributesOf(unsignedAttrsBlock).find((a) => a.type === OID.timeStampToken);
  if (ts?.values[0]) result.timestampToken = rawOf(ts.values[0]);
  return result;
}

function verifyPrehashed(scheme: string, key: crypto.KeyObject, hashName: string, digest: Uint8Array, sig: Uint8Array): boolean {
  if (scheme === 'RSA') {
    // Recover the DigestInfo with the public key and compare it as a whole (strict: no lenient parsing).
    const recovered = crypto.publicDecrypt({ key, padding: crypto.constants.RSA_PKCS1_PADDING }, sig);
    const expected = Buffer.concat([DIGEST_INFO_PREFIX[hashName] ?? Buffer.alloc(0), digest]);
    return recovered.equals(expected);
  }
  return false;
}

const DIGEST_INFO_PREFIX: Record<string, Buffer> = {
  sha1: Buffer.from('3021300906052b0e03021a05000414', 'hex'),
  sha256: Buffer.from('3031300d060960864801650304020105000420', 'hex'),
  sha384: Buffer.from('3041300d060960864801650304020205000430', 'hex'),
  sha512: Buffer.from('3051300d060960864801650304020305000440', 'hex'),
};

/** ESS signing-certificate(-v2): the hash of the signer certificate must match the one that was signed. */
function checkSigningCertificateAttribute(attrs: Attr[], signer: X509Certificate, result: CmsResult): void {
  const v2 = attrs.find((a) => a.type === OID.signingCertificateV2);
  const v1 = attrs.find((a) => a.type === OID.signingCertificate);
  const attr = v2 ?? v1;
  if (!attr) return;
  try {
    // SigningCertificateV2 ::= SEQUENCE { certs SEQUENCE OF ESSCertIDv2, ... }
    // ESSCertIDv2 ::= SEQUENCE { hashAlgorithm AlgorithmIdentifier DEFAULT sha256, certHash OCTET STRING, ... }
    const first = children(children(attr.values[0])[0])[0];
    const parts = children(first);
    let alg = v2 ? 'SHA-256' : 'SHA-1';
    let hashNode = parts[0];
    if (v2 && hashNode instanceof asn1js.Sequence) {
      const oid = oidOf(children(hashNode)[0]) ?? '';
      alg = DIGEST_BY_OID[oid] ?? oid;
      hashNode = parts[1];
    }
    const expected = Buffer.from(octets(hashNode) ?? new Uint8Array());
    const hash = NODE_HASH[alg];
    const actual = hash ? crypto.createHash(hash).update(signer.raw).digest() : undefined;
    if (!actual || !actual.equals(expected)) {
      result.errors.push('the signing-certificate attribute does not match the signer certificate');
    }
  } catch {
    result.errors.push('the signing-certificate attribute is malformed');
  }
}

/** Hash name for node:crypto of a digest algorithm label. */
export const nodeHash = (alg: string) => NODE_HASH[alg];

function toArrayBuffer(u: Uint8Array): ArrayBuffer {
  return u.buffer.slice(u.byteOffset, u.byteOffset + u.byteLength) as ArrayBuffer;
}
