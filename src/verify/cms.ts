/**
 * CMS SignedData checks for PDF signatures and RFC 3161 timestamp tokens. pkijs/asn1js only *parse*; every
 * hash and signature check runs in node:crypto (OpenSSL), which has none of the lenient-PKCS#1 forgeries
 * of pure-JS RSA. Signed attributes are verified over their original encoding (re-tagged as a SET), never a
 * re-serialisation, so a BER-encoded attribute set cannot verify under a different reading.
 */
import crypto, { X509Certificate } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';

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

/** `contentDigest(alg)` hashes the signed content (the ByteRange bytes) with the named algorithm. */
export function verifyCms(der: Uint8Array, contentDigest: (alg: string) => Uint8Array | undefined): CmsResult {
  const result: CmsResult = { errors: [], warnings: [], digestMatches: false, signatureValid: false, certificates: [] };
  let sd: pkijs.SignedData;
  try {
    const asn = asn1js.fromBER(toArrayBuffer(der));
    if (asn.offset === -1) throw new Error(asn.result.error);
    const ci = new pkijs.ContentInfo({ schema: asn.result });
    if (ci.contentType !== OID.signedData) throw new Error(`content type ${ci.contentType} is not SignedData`);
    sd = new pkijs.SignedData({ schema: ci.content });
  } catch (e) {
    result.errors.push(`CMS not parseable: ${(e as Error).message}`.slice(0, 200));
    return result;
  }
  const pkiCerts: pkijs.Certificate[] = [];
  for (const c of sd.certificates ?? []) {
    if (!(c instanceof pkijs.Certificate)) continue;
    try {
      result.certificates.push(new X509Certificate(Buffer.from(c.toSchema().toBER())));
      pkiCerts.push(c);
    } catch {
      result.warnings.push('an embedded certificate could not be read');
    }
  }
  if (sd.signerInfos.length !== 1) {
    result.errors.push(`CMS has ${sd.signerInfos.length} signer infos; exactly one is expected`);
    if (sd.signerInfos.length === 0) return result;
  }
  const si = sd.signerInfos[0]!;
  const digestOid = si.digestAlgorithm.algorithmId;
  const digestAlg = DIGEST_BY_OID[digestOid];
  if (!digestAlg) {
    result.errors.push(`unsupported digest algorithm ${digestOid}`);
    return result;
  }
  result.digestAlgorithm = digestAlg;
  if (digestAlg === 'SHA-1') result.warnings.push('WEAK_DIGEST_ALGORITHM: SHA-1 is no longer accepted for new signatures');
  result.signatureValue = new Uint8Array(si.signature.valueBlock.valueHexView);

  // The signer certificate: by issuer+serial or by subject key identifier.
  const idx = pkiCerts.findIndex((c) => {
    if (si.sid instanceof pkijs.IssuerAndSerialNumber) {
      return c.serialNumber.isEqual(si.sid.serialNumber) && c.issuer.isEqual(si.sid.issuer);
    }
    const ski = c.extensions?.find((x) => x.extnID === '2.5.29.14');
    const skiValue = ski?.parsedValue as asn1js.OctetString | undefined;
    const sidBytes = (si.sid as asn1js.OctetString).valueBlock?.valueHexView;
    return !!skiValue && !!sidBytes && Buffer.compare(Buffer.from(skiValue.valueBlock.valueHexView), Buffer.from(sidBytes)) === 0;
  });
  if (idx < 0) {
    result.errors.push('the signer certificate is not in the CMS');
    return result;
  }
  const signerPki = pkiCerts[idx]!;
  const signer = result.certificates[idx]!;
  result.signerCertificate = signer;

  // Encapsulated content (timestamp tokens, adbe.pkcs7.sha1) or the detached ByteRange content.
  const eContent = sd.encapContentInfo.eContent;
  const encapsulated = eContent ? new Uint8Array(eContent.getValue()) : undefined;
  result.encapsulatedContent = encapsulated;
  const hashOfContent = encapsulated ? crypto.createHash(NODE_HASH[digestAlg]!).update(encapsulated).digest() : contentDigest(digestAlg);
  if (!hashOfContent) {
    result.errors.push('the signed content could not be hashed');
    return result;
  }
  if (sd.encapContentInfo.eContentType === OID.tstInfo && encapsulated) {
    try {
      const tst = new pkijs.TSTInfo({ schema: asn1js.fromBER(toArrayBuffer(encapsulated)).result });
      result.tstInfo = {
        genTime: tst.genTime,
        imprintAlgorithm: DIGEST_BY_OID[tst.messageImprint.hashAlgorithm.algorithmId],
        imprint: new Uint8Array(tst.messageImprint.hashedMessage.valueBlock.valueHexView),
      };
    } catch {
      result.errors.push('TSTInfo not parseable');
    }
  }

  let signedBytes: Uint8Array;
  if (si.signedAttrs) {
    const attrs = si.signedAttrs.attributes;
    const one = (oid: string) => attrs.filter((a) => a.type === oid);
    const md = one(OID.messageDigest);
    const mdValue = md.length === 1 && md[0]!.values.length === 1 ? (md[0]!.values[0] as asn1js.OctetString).valueBlock?.valueHexView : undefined;
    if (!mdValue) result.errors.push('signed attributes lack a single message-digest');
    result.digestMatches = !!mdValue && Buffer.compare(Buffer.from(mdValue), Buffer.from(hashOfContent)) === 0;
    const ct = one(OID.contentType);
    const ctValue = ct.length === 1 ? (ct[0]!.values[0] as asn1js.ObjectIdentifier).valueBlock?.toString() : undefined;
    const expectedCt = sd.encapContentInfo.eContentType;
    if (ctValue !== expectedCt) result.errors.push(`content-type attribute (${ctValue ?? 'absent'}) does not match ${expectedCt}`);
    const st = one(OID.signingTime)[0]?.values[0] as asn1js.UTCTime | asn1js.GeneralizedTime | undefined;
    if (st && 'toDate' in st) result.signingTime = st.toDate();
    checkSigningCertificateAttribute(attrs, signerPki, result);
    signedBytes = new Uint8Array(si.signedAttrs.encodedValue); // pkijs re-tags it as SET (0x31)
  } else {
    // Without signed attributes the signature is over the content itself.
    signedBytes = encapsulated ?? new Uint8Array(0);
    if (!encapsulated) {
      // Detached content without attributes: the signature verifies the digest directly below.
    }
  }

  const sigOid = si.signatureAlgorithm.algorithmId;
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
    const sig = result.signatureValue;
    if (scheme === 'EDDSA') {
      ok = crypto.verify(null, signedBytes, key, sig);
    } else if (scheme === 'PSS') {
      const params = new pkijs.RSASSAPSSParams({ schema: si.signatureAlgorithm.algorithmParams });
      const pssHash = NODE_HASH[DIGEST_BY_OID[params.hashAlgorithm.algorithmId] ?? ''] ?? 'sha1';
      ok = crypto.verify(pssHash, signedBytes, { key, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: params.saltLength }, sig);
    } else if (!si.signedAttrs && !encapsulated) {
      // Detached, no attributes: the signature is over the ByteRange digest itself.
      ok = verifyPrehashed(scheme, key, hashName, hashOfContent, sig);
      result.digestMatches = ok;
    } else {
      ok = crypto.verify(hashName, signedBytes, scheme === 'ECDSA' ? { key, dsaEncoding: 'der' } : key, sig);
    }
    result.signatureValid = ok;
    if (!si.signedAttrs && encapsulated) result.digestMatches = ok;
  } catch (e) {
    result.errors.push(`signature could not be checked: ${(e as Error).message}`.slice(0, 200));
  }

  const ts = si.unsignedAttrs?.attributes.find((a) => a.type === OID.timeStampToken);
  if (ts && ts.values[0]) result.timestampToken = new Uint8Array(ts.values[0].toBER());
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
function checkSigningCertificateAttribute(attrs: pkijs.Attribute[], signer: pkijs.Certificate, result: CmsResult): void {
  const v2 = attrs.find((a) => a.type === OID.signingCertificateV2);
  const v1 = attrs.find((a) => a.type === OID.signingCertificate);
  const attr = v2 ?? v1;
  if (!attr) return;
  try {
    // SigningCertificateV2 ::= SEQUENCE { certs SEQUENCE OF ESSCertIDv2, ... }
    // ESSCertIDv2 ::= SEQUENCE { hashAlgorithm AlgorithmIdentifier DEFAULT sha256, certHash OCTET STRING, ... }
    const certs = (attr.values[0] as asn1js.Sequence).valueBlock.value[0] as asn1js.Sequence;
    const first = certs.valueBlock.value[0] as asn1js.Sequence;
    let alg = v2 ? 'SHA-256' : 'SHA-1';
    let hashNode = first.valueBlock.value[0]!;
    if (v2 && hashNode instanceof asn1js.Sequence) {
      const oid = (hashNode.valueBlock.value[0] as asn1js.ObjectIdentifier).valueBlock.toString();
      alg = DIGEST_BY_OID[oid] ?? oid;
      hashNode = first.valueBlock.value[1]!;
    }
    const expected = Buffer.from((hashNode as asn1js.OctetString).valueBlock.valueHexView);
    const hash = NODE_HASH[alg];
    const actual = hash ? crypto.createHash(hash).update(Buffer.from(signer.toSchema().toBER())).digest() : undefined;
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
