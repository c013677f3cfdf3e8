/**
 * CAdES detached SignedData for a PAdES baseline signature (ETSI EN 319 142-1): signed attributes
 * content-type, message-digest and ESS signing-certificate-v2, deliberately no signing-time (PAdES puts the
 * time in the signature dictionary's /M). The signature comes from the identity's Signer (src/sign/signer:
 * the file key, or only the digest of the signed attributes sent to a token); the structure is built with
 * @peculiar/asn1-cms (src/crypto/asn1.ts), the certificates and the issuer name embedded byte for byte. The
 * digest follows the key (SHA-256, or SHA-384/SHA-512 for P-384/P-521) for the document and the attributes.
 * An optional RFC 3161 token over the signature value becomes the unsigned attribute
 * id-aa-signatureTimeStampToken (PAdES B-T).
 */
import crypto from 'node:crypto';
import { NODE_DIGEST, digestAlgorithmIdentifier, maxSignatureLength, signatureAlgorithmIdentifier, type SignatureAlgorithm } from './signer/index.js';
import {
  Attribute,
  CertificateChoices,
  CertificateSet,
  CMSVersion,
  DigestAlgorithmIdentifiers,
  EncapsulatedContentInfo,
  IssuerAndSerialNumber,
  SignedData,
  SignerIdentifier,
  SignerInfo,
  SignerInfos,
} from '@peculiar/asn1-cms';
import { AsnArray, AsnConvert, AsnObjectIdentifierConverter, AsnProp, AsnPropTypes, AsnType, AsnTypeTypes, OctetString } from '@peculiar/asn1-schema';
import { Certificate, GeneralName, type Name } from '@peculiar/asn1-x509';
import type { SigningIdentity } from './identity-types.js';
import { EssCertIdV2, IssuerSerial, OID, SigningCertificateV2, parseAs, serialize, toArrayBuffer, verbatim } from '../crypto/asn1.js';
import { certificateFields, elementBytes, readChildren, readElement, tryDer } from '../crypto/der.js';

export const OIDS = {
  data: OID.data,
  signedData: OID.signedData,
  sha256: OID.sha256,
  contentType: OID.contentType,
  messageDigest: OID.messageDigest,
  signingCertificateV2: OID.signingCertificateV2,
  signatureTimeStampToken: OID.signatureTimeStampToken,
  sha256WithRSAEncryption: OID.sha256WithRSAEncryption,
  ecdsaWithSHA256: OID.ecdsaWithSHA256,
} as const;

interface IdentityAsn {
  sid: SignerIdentifier;
  signingCertificateV2Attr: Uint8Array;
  certificates: CertificateSet;
  certificatesLength: number;
  issuerLength: number;
}

// The parts that depend only on the identity are built once.
const identityCache = new WeakMap<SigningIdentity, IdentityAsn>();

function identityAsn(identity: SigningIdentity): IdentityAsn {
  let cached = identityCache.get(identity);
  if (cached) return cached;
  const leaf = identity.chainDer[0]!;
  const cert = parseAs(leaf, Certificate, () => new Error('cannot parse the signing certificate'));
  const issuerDer = certificateFields(leaf)?.issuer;
  if (!issuerDer) throw new Error('cannot parse the signing certificate');
  const issuer = verbatim<Name>(issuerDer);
  const serialNumber = cert.tbsCertificate.serialNumber;
  // ESSCertIDv2 with the default hash algorithm (SHA-256) omitted, as DER requires for a DEFAULT value.
  const signingCertificateV2 = new SigningCertificateV2({
    certs: [
      new EssCertIdV2({
        certHash: new OctetString(crypto.createHash('sha256').update(leaf).digest()),
        issuerSerial: new IssuerSerial({ issuer: [new GeneralName({ directoryName: issuer })], serialNumber }),
      }),
    ],
  });
  cached = {
    sid: new SignerIdentifier({ issuerAndSerialNumber: new IssuerAndSerialNumber({ issuer, serialNumber }) }),
    signingCertificateV2Attr: serialize(
      new Attribute({ attrType: OID.signingCertificateV2, attrValues: [AsnConvert.serialize(signingCertificateV2)] }),
    ),
    certificates: new CertificateSet(identity.chainDer.map((d) => new CertificateChoices({ certificate: verbatim<Certificate>(d) }))),
    certificatesLength: identity.chainDer.reduce((n, d) => n + d.length, 0),
    issuerLength: issuerDer.length,
  };
  identityCache.set(identity, cached);
  return cached;
}

const CONTENT_TYPE_DATA_ATTR = serialize(
  new Attribute({ attrType: OID.contentType, attrValues: [AsnObjectIdentifierConverter.toASN(OID.data).toBER(false)] }),
);

/** SignedAttributes ::= SET OF Attribute, the encoding the signature covers (RFC 5652 §5.4). */
class SignedAttributes extends AsnArray<Attribute> {
  constructor(items?: Attribute[]) {
    super(items);
    Object.setPrototypeOf(this, SignedAttributes.prototype);
  }
}
AsnType({ type: AsnTypeTypes.Set, itemType: Attribute })(SignedAttributes);

/** ContentInfo with its content typed as SignedData (asn1-cms types it ANY, which would re-parse the bytes). */
class SignedDataContentInfo {
  contentType: string = OID.signedData;
  constructor(public content = new SignedData()) {}
}
AsnProp({ type: AsnPropTypes.ObjectIdentifier })(SignedDataContentInfo.prototype, 'contentType');
AsnProp({ type: SignedData, context: 0 })(SignedDataContentInfo.prototype, 'content');
AsnType({ type: AsnTypeTypes.Sequence })(SignedDataContentInfo);

export interface CmsSigner {
  /** The DER signed attributes (as a SET, tag 0x31) and the signature over them. */
  signedAttributes: Uint8Array;
  signature: Uint8Array;
  /** What the signer signed with (the SignerInfo's signatureAlgorithm). */
  algorithm: SignatureAlgorithm;
}

/** The node:crypto name of the digest the document (the /ByteRange) is hashed with for this identity. */
export const documentDigestName = (identity: SigningIdentity): 'sha256' | 'sha384' | 'sha512' => NODE_DIGEST[identity.signer.algorithm.hash];

/** Computes the signed attributes for a document digest (`documentDigestName`) and has the signer sign them. */
export async function signDigest(identity: SigningIdentity, documentDigest: Uint8Array): Promise<CmsSigner> {
  const asn = identityAsn(identity);
  const messageDigestAttr = serialize(
    new Attribute({ attrType: OID.messageDigest, attrValues: [AsnConvert.serialize(new OctetString(documentDigest))] }),
  );
  // DER orders a SET OF by the elements' encodings; the serialiser keeps the array order.
  const attrs = [CONTENT_TYPE_DATA_ATTR, messageDigestAttr, asn.signingCertificateV2Attr].sort((a, b) => Buffer.compare(a, b));
  const signedAttributes = serialize(new SignedAttributes(attrs.map((a) => verbatim<Attribute>(a))));
  // Only this digest goes to a token or a KMS; the file key signs the attributes themselves (node:crypto).
  const digest = crypto.createHash(documentDigestName(identity)).update(signedAttributes).digest();
  const { signature, algorithm } = await identity.signer.sign({ digest, data: signedAttributes });
  return { signedAttributes, signature, algorithm };
}

/** Assembles the ContentInfo(SignedData) DER; `timeStampToken` is the DER of an RFC 3161 token. */
export function buildSignedData(identity: SigningIdentity, signer: CmsSigner, timeStampToken?: Uint8Array): Uint8Array {
  const asn = identityAsn(identity);
  // The attributes exactly as signed, now under the SignerInfo's [0] IMPLICIT tag.
  const attrsDer = signer.signedAttributes;
  const signedAttrs = tryDer(() => readChildren(attrsDer, readElement(attrsDer)));
  if (!signedAttrs) throw new Error('the signed attributes are not DER');
  const signerInfo = new SignerInfo({
    version: CMSVersion.v1,
    sid: asn.sid,
    digestAlgorithm: digestAlgorithmIdentifier(signer.algorithm.hash),
    signedAttrs: signedAttrs.map((a) => verbatim<Attribute>(elementBytes(attrsDer, a))),
    signatureAlgorithm: signatureAlgorithmIdentifier(signer.algorithm),
    signature: new OctetString(signer.signature),
    unsignedAttrs: timeStampToken
      ? [new Attribute({ attrType: OID.signatureTimeStampToken, attrValues: [toArrayBuffer(timeStampToken)] })]
      : undefined,
  });
  const signedData = new SignedData({
    version: CMSVersion.v1,
    digestAlgorithms: new DigestAlgorithmIdentifiers([digestAlgorithmIdentifier(signer.algorithm.hash)]),
    encapContentInfo: new EncapsulatedContentInfo({ eContentType: OID.data }), // detached: no eContent
    certificates: asn.certificates,
    signerInfos: new SignerInfos([signerInfo]),
  });
  return serialize(new SignedDataContentInfo(signedData));
}

/** Upper bound of the CMS size without a timestamp, to size the /Contents placeholder. */
export function estimateCmsSize(identity: SigningIdentity): number {
  const asn = identityAsn(identity);
  const keyBytes = maxSignatureLength(identity.signer.algorithm);
  // Fixed structure (OIDs, attributes, RSASSA-PSS parameters, lengths) stays well below 600 bytes; the issuer name appears twice.
  return asn.certificatesLength + 8 * identity.chainDer.length + keyBytes + 2 * asn.issuerLength + 600;
}
