/**
 * CAdES detached SignedData for a PAdES baseline signature (ETSI EN 319 142-1): signed attributes
 * content-type, message-digest and ESS signing-certificate-v2, deliberately no signing-time (PAdES puts the
 * time in the signature dictionary's /M). The signature maths is node:crypto; the DER is
 * written with src/pdf/der.ts (elements joined by tag, OIDs and certificate fields through asn1js).
 * An optional RFC 3161 token over the signature value becomes the unsigned attribute
 * id-aa-signatureTimeStampToken (PAdES B-T).
 */
import crypto from 'node:crypto';
import * as asn1js from 'asn1js';
import type { SigningIdentity } from '../services.js';
import { DER, encodeOid, encodeSetOfContents, encodeTlv } from '../pdf/index.js';

export const OIDS = {
  data: '1.2.840.113549.1.7.1',
  signedData: '1.2.840.113549.1.7.2',
  sha256: '2.16.840.1.101.3.4.2.1',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
  signatureTimeStampToken: '1.2.840.113549.1.9.16.2.14',
  sha256WithRSAEncryption: '1.2.840.113549.1.1.11',
  ecdsaWithSHA256: '1.2.840.10045.4.3.2',
} as const;

const { SEQUENCE, SET, OCTET_STRING, CONTEXT_0, CONTEXT_1, CONTEXT_4 } = DER;
const oid = encodeOid;
const INTEGER_1 = Buffer.from([DER.INTEGER, 0x01, 0x01]);
const NULL = Buffer.from([DER.NULL, 0x00]);

interface CertificateParts {
  issuer: Buffer;
  serial: Buffer;
}

/** The issuer Name and serial number TLVs of a DER certificate, byte for byte. */
function certificateParts(certDer: Uint8Array): CertificateParts {
  const r = asn1js.fromBER(certDer);
  if (r.offset === -1) throw new Error('cannot parse the signing certificate');
  const tbs = (r.result as asn1js.Sequence).valueBlock.value[0] as asn1js.Sequence;
  const fields = tbs.valueBlock.value;
  const hasVersion = fields[0]!.idBlock.tagClass === 3; // [0] EXPLICIT version
  return {
    serial: Buffer.from(fields[hasVersion ? 1 : 0]!.toBER(false)),
    issuer: Buffer.from(fields[hasVersion ? 3 : 2]!.toBER(false)),
  };
}

interface IdentityDer {
  issuerAndSerial: Buffer;
  signingCertificateV2Attr: Buffer;
  certificates: Buffer;
  signatureAlgorithm: Buffer;
  issuerLength: number;
}

// The parts that depend only on the identity are encoded once.
const identityCache = new WeakMap<SigningIdentity, IdentityDer>();

function identityDer(identity: SigningIdentity): IdentityDer {
  let cached = identityCache.get(identity);
  if (cached) return cached;
  const leaf = identity.chainDer[0]!;
  const { issuer, serial } = certificateParts(leaf);
  const certHash = crypto.createHash('sha256').update(leaf).digest();
  // ESSCertIDv2 { certHash, issuerSerial { GeneralNames [directoryName [4] issuer], serial } }, with the
  // default hash algorithm (SHA-256) omitted as DER requires for a DEFAULT value.
  const essCertId = encodeTlv(
    SEQUENCE,
    encodeTlv(OCTET_STRING, certHash),
    encodeTlv(SEQUENCE, encodeTlv(SEQUENCE, encodeTlv(CONTEXT_4, issuer)), serial),
  );
  const signingCertificateV2 = encodeTlv(SEQUENCE, encodeTlv(SEQUENCE, essCertId));
  cached = {
    issuerAndSerial: encodeTlv(SEQUENCE, issuer, serial),
    signingCertificateV2Attr: encodeTlv(SEQUENCE, oid(OIDS.signingCertificateV2), encodeTlv(SET, signingCertificateV2)),
    certificates: encodeSetOfContents(identity.chainDer.map((d) => Buffer.from(d))),
    signatureAlgorithm:
      identity.keyAlgorithm === 'RSA' ? encodeTlv(SEQUENCE, oid(OIDS.sha256WithRSAEncryption), NULL) : encodeTlv(SEQUENCE, oid(OIDS.ecdsaWithSHA256)),
    issuerLength: issuer.length,
  };
  identityCache.set(identity, cached);
  return cached;
}

const SHA256_ALGORITHM = encodeTlv(SEQUENCE, oid(OIDS.sha256));
const CONTENT_TYPE_DATA_ATTR = encodeTlv(SEQUENCE, oid(OIDS.contentType), encodeTlv(SET, oid(OIDS.data)));

export interface CmsSigner {
  /** The DER signed attributes (as a SET, tag 0x31) and the signature over them. */
  signedAttributes: Uint8Array;
  signature: Uint8Array;
}

/** Computes the signed attributes and the signature for a document digest. */
export function signDigest(identity: SigningIdentity, documentDigest: Uint8Array): CmsSigner {
  const der = identityDer(identity);
  const messageDigestAttr = encodeTlv(SEQUENCE, oid(OIDS.messageDigest), encodeTlv(SET, encodeTlv(OCTET_STRING, documentDigest)));
  const signedAttributes = encodeTlv(SET, encodeSetOfContents([CONTENT_TYPE_DATA_ATTR, messageDigestAttr, der.signingCertificateV2Attr]));
  const signature =
    identity.keyAlgorithm === 'RSA'
      ? crypto.sign('sha256', signedAttributes, { key: identity.privateKey, padding: crypto.constants.RSA_PKCS1_PADDING })
      : crypto.sign('sha256', signedAttributes, { key: identity.privateKey, dsaEncoding: 'der' });
  return { signedAttributes, signature: new Uint8Array(signature) };
}

/** Assembles the ContentInfo(SignedData) DER; `timeStampToken` is the DER of an RFC 3161 token. */
export function buildSignedData(identity: SigningIdentity, signer: CmsSigner, timeStampToken?: Uint8Array): Uint8Array {
  const der = identityDer(identity);
  const attrs = Buffer.from(signer.signedAttributes);
  // [0] IMPLICIT SET OF Attribute: the signed SET with its tag replaced by the context tag.
  const signedAttrsTagged = Buffer.concat([Buffer.from([CONTEXT_0]), attrs.subarray(1)]);
  const signerInfo = encodeTlv(
    SEQUENCE,
    INTEGER_1,
    der.issuerAndSerial,
    SHA256_ALGORITHM,
    signedAttrsTagged,
    der.signatureAlgorithm,
    encodeTlv(OCTET_STRING, signer.signature),
    ...(timeStampToken ? [encodeTlv(CONTEXT_1, encodeTlv(SEQUENCE, oid(OIDS.signatureTimeStampToken), encodeTlv(SET, timeStampToken)))] : []),
  );
  const signedData = encodeTlv(
    SEQUENCE,
    INTEGER_1,
    encodeTlv(SET, SHA256_ALGORITHM),
    encodeTlv(SEQUENCE, oid(OIDS.data)), // detached: no eContent
    encodeTlv(CONTEXT_0, der.certificates),
    encodeTlv(SET, signerInfo),
  );
  return new Uint8Array(encodeTlv(SEQUENCE, oid(OIDS.signedData), encodeTlv(CONTEXT_0, signedData)));
}

/** Upper bound of the CMS size without a timestamp, to size the /Contents placeholder. */
export function estimateCmsSize(identity: SigningIdentity): number {
  const der = identityDer(identity);
  const keyBytes = identity.keyAlgorithm === 'RSA' ? Math.ceil((identity.privateKey.asymmetricKeyDetails?.modulusLength ?? 4096) / 8) : 72;
  // Fixed structure (OIDs, attributes, lengths) stays well below 600 bytes; the issuer name appears twice.
  return der.certificates.length + keyBytes + 2 * der.issuerLength + 600;
}
