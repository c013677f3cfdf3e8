/**
 * Folio's one ASN.1 idiom: the @peculiar/asn1-* schema family (asn1-schema with asn1-x509, asn1-cms,
 * asn1-tsp, asn1-pfx, asn1-pkcs8, and @peculiar/x509 for issuing certificates). Structures are built as
 * typed objects and serialised with `AsnConvert.serialize`, and parsed with `AsnConvert.parse` (BER-tolerant,
 * through asn1js underneath). This module holds what the signing and verifying modules share: OIDs, the few
 * schemas the family lacks (ESS signing-certificate), parsing that fails with a caller's error, and `verbatim`
 * for elements that must be embedded byte for byte.
 *
 * Byte-offset work the schemas cannot do (cutting a hostile CMS into slices by reading only headers, bounded)
 * lives in der.ts, the one module that reads and writes DER by hand.
 */
import { AsnConvert, AsnIntegerArrayBufferConverter, AsnProp, AsnPropTypes, AsnType, AsnTypeTypes, OctetString } from '@peculiar/asn1-schema';
import type { EncapsulatedContentInfo } from '@peculiar/asn1-cms';
import { AlgorithmIdentifier, GeneralName } from '@peculiar/asn1-x509';
import * as asn1js from 'asn1js';
import { TAG, contentBytes, decodeOid, octetStringContents, readSingle, tryDer } from './der.js';

export const OID = {
  data: '1.2.840.113549.1.7.1',
  signedData: '1.2.840.113549.1.7.2',
  encryptedData: '1.2.840.113549.1.7.6',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingTime: '1.2.840.113549.1.9.5',
  signingCertificate: '1.2.840.113549.1.9.16.2.12',
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
  signatureTimeStampToken: '1.2.840.113549.1.9.16.2.14',
  tstInfo: '1.2.840.113549.1.9.16.1.4',
  sha1: '1.3.14.3.2.26',
  sha256: '2.16.840.1.101.3.4.2.1',
  sha256WithRSAEncryption: '1.2.840.113549.1.1.11',
  ecdsaWithSHA256: '1.2.840.10045.4.3.2',
} as const;

export const toArrayBuffer = (u: Uint8Array): ArrayBuffer => u.buffer.slice(u.byteOffset, u.byteOffset + u.byteLength) as ArrayBuffer;

/**
 * Parses `bytes` as the schema `type`; any failure (not BER, wrong shape) becomes `onError(message)`, so that
 * each caller keeps its own domain error.
 */
export function parseAs<T>(bytes: Uint8Array | ArrayBuffer, type: new () => T, onError: (message: string) => Error): T {
  try {
    return AsnConvert.parse(bytes instanceof Uint8Array ? toArrayBuffer(bytes) : bytes, type);
  } catch (e) {
    throw onError((e as Error).message);
  }
}

/** The DER of a schema object. */
export const serialize = (value: unknown): Uint8Array => new Uint8Array(AsnConvert.serialize(value));

/**
 * An element embedded byte for byte where a schema type is expected: certificates and names signed by
 * someone else must not be re-encoded from their decoded values (a non-canonical but accepted encoding would
 * change, and with it the hash other verifiers compare). `T` is the schema type the element stands for.
 */
export function verbatim<T>(der: Uint8Array): T {
  if (!tryDer(() => readSingle(der))) throw new Error('not a single DER element');
  const block = new VerbatimBlock(toArrayBuffer(der));
  // asn1-schema serialises any object with toASN/fromASN through them (IAsnConvertible).
  return { toASN: () => block, fromASN: () => block } as unknown as T;
}

/** An asn1js block that writes its bytes as given (asn1js's RawData does not take part in nested writing). */
class VerbatimBlock extends asn1js.BaseBlock {
  constructor(private readonly bytes: ArrayBuffer) {
    super();
  }
  override toBER(sizeOnly?: boolean, writer?: asn1js.ViewWriter): ArrayBuffer {
    if (!writer) return this.bytes;
    writer.write(this.bytes);
    return new ArrayBuffer(0);
  }
}

// ---- ESS (RFC 5035) signing-certificate-v2, which the family does not ship ----

/** IssuerSerial ::= SEQUENCE { issuer GeneralNames, serialNumber CertificateSerialNumber } */
export class IssuerSerial {
  issuer: GeneralName[] = [];
  serialNumber = new ArrayBuffer(0);
  constructor(params: Partial<IssuerSerial> = {}) {
    Object.assign(this, params);
  }
}
AsnProp({ type: GeneralName, repeated: 'sequence' })(IssuerSerial.prototype, 'issuer');
AsnProp({ type: AsnPropTypes.Integer, converter: AsnIntegerArrayBufferConverter })(IssuerSerial.prototype, 'serialNumber');
AsnType({ type: AsnTypeTypes.Sequence })(IssuerSerial);

const SHA256_DEFAULT = new AlgorithmIdentifier({ algorithm: OID.sha256 });

/** ESSCertIDv2 ::= SEQUENCE { hashAlgorithm DEFAULT sha256, certHash OCTET STRING, issuerSerial OPTIONAL } */
export class EssCertIdV2 {
  hashAlgorithm = SHA256_DEFAULT;
  certHash = new OctetString();
  issuerSerial?: IssuerSerial;
  constructor(params: Partial<EssCertIdV2> = {}) {
    Object.assign(this, params);
  }
}
AsnProp({ type: AlgorithmIdentifier, defaultValue: SHA256_DEFAULT, optional: true })(EssCertIdV2.prototype, 'hashAlgorithm');
AsnProp({ type: OctetString })(EssCertIdV2.prototype, 'certHash');
AsnProp({ type: IssuerSerial, optional: true })(EssCertIdV2.prototype, 'issuerSerial');
AsnType({ type: AsnTypeTypes.Sequence })(EssCertIdV2);

/** ESSCertID ::= SEQUENCE { certHash OCTET STRING (SHA-1), issuerSerial OPTIONAL } (signing-certificate v1) */
export class EssCertId {
  certHash = new OctetString();
  issuerSerial?: IssuerSerial;
}
AsnProp({ type: OctetString })(EssCertId.prototype, 'certHash');
AsnProp({ type: IssuerSerial, optional: true })(EssCertId.prototype, 'issuerSerial');
AsnType({ type: AsnTypeTypes.Sequence })(EssCertId);

/** SigningCertificateV2 ::= SEQUENCE { certs SEQUENCE OF ESSCertIDv2, policies OPTIONAL } */
export class SigningCertificateV2 {
  certs: EssCertIdV2[] = [];
  policies?: ArrayBuffer;
  constructor(params: Partial<SigningCertificateV2> = {}) {
    Object.assign(this, params);
  }
}
AsnProp({ type: EssCertIdV2, repeated: 'sequence' })(SigningCertificateV2.prototype, 'certs');
AsnProp({ type: AsnPropTypes.Any, optional: true })(SigningCertificateV2.prototype, 'policies');
AsnType({ type: AsnTypeTypes.Sequence })(SigningCertificateV2);

/** SigningCertificate ::= SEQUENCE { certs SEQUENCE OF ESSCertID, policies OPTIONAL } */
export class SigningCertificate {
  certs: EssCertId[] = [];
  policies?: ArrayBuffer;
}
AsnProp({ type: EssCertId, repeated: 'sequence' })(SigningCertificate.prototype, 'certs');
AsnProp({ type: AsnPropTypes.Any, optional: true })(SigningCertificate.prototype, 'policies');
AsnType({ type: AsnTypeTypes.Sequence })(SigningCertificate);

/**
 * The content octets of an EncapsulatedContentInfo: asn1-cms gives a primitive OCTET STRING as `single` and
 * leaves a BER-constructed one (Java and Windows signers write those) as raw `any`, whose pieces are joined here.
 */
export function encapsulatedContent(info: EncapsulatedContentInfo): Uint8Array | undefined {
  const content = info.eContent;
  if (!content) return undefined;
  if (content.single) return new Uint8Array(content.single.buffer);
  return content.any ? octetStringContents(new Uint8Array(content.any)) : undefined;
}

/** The value of a DER OBJECT IDENTIFIER element (an attribute value); undefined when it is not one. */
export function parseOid(der: ArrayBuffer | Uint8Array): string | undefined {
  const bytes = der instanceof Uint8Array ? der : new Uint8Array(der);
  // Decoded by der.ts, not asn1js: the verifier reads dozens per signature and asn1js's general parse of each
  // was a measurable share of verifying (bench/verify.ts).
  const t = tryDer(() => readSingle(bytes, TAG.OID));
  return t && decodeOid(contentBytes(bytes, t));
}

/** The value of a DER INTEGER element that fits a safe integer (an algorithm parameter); undefined otherwise. */
export function parseSmallInteger(der: ArrayBuffer | Uint8Array): number | undefined {
  const r = asn1js.fromBER(der instanceof Uint8Array ? toArrayBuffer(der) : der);
  if (r.offset === -1 || !(r.result instanceof asn1js.Integer)) return undefined;
  const v = r.result.valueBlock.valueDec;
  return Number.isSafeInteger(v) ? v : undefined;
}
