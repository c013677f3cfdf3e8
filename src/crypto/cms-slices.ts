/**
 * A ContentInfo(SignedData) cut into raw slices by its DER headers (der.ts): the verifier hashes and compares the
 * exact original bytes of each part and hands the certificates (most of the bytes) to node:crypto undecoded;
 * the signer takes a timestamp token's certificates for its DSS the same way.
 */
import { DerError, TAG, contextTag, elementBytes, expectTag, oidContent, readChildren, readElement, readInner, tryDer } from './der.js';
import { OID } from './asn1.js';

export interface SignedDataSlices {
  /** The EncapsulatedContentInfo element. */
  encap: Uint8Array;
  /** Each certificate of the `certificates` [0] field that is a Certificate (SEQUENCE); other choices are left out. */
  certs: Uint8Array[];
  /** The SignerInfos SET. */
  signerInfos: Uint8Array;
  /** The `crls` [1] field (RevocationInfoChoices), when present. */
  crls?: Uint8Array;
}

const SIGNED_DATA = oidContent(OID.signedData);

/**
 * SignedData ::= SEQUENCE { version, digestAlgorithms SET, encapContentInfo, [0] certificates OPTIONAL,
 * [1] crls OPTIONAL, signerInfos SET } inside ContentInfo { contentType, [0] EXPLICIT content }, read by headers
 * only (BER indefinite lengths included; bytes after the ContentInfo, a /Contents string's zero padding, ignored).
 * Undefined when the headers do not read so; callers then parse the whole structure with the schema.
 */
export function splitSignedData(der: Uint8Array): SignedDataSlices | undefined {
  return tryDer(() => {
    const [ct, content] = readChildren(der, expectTag(readElement(der), TAG.SEQUENCE));
    if (!ct || !content || ct.tag !== TAG.OID || content.tag !== contextTag(0)) throw new DerError('shape', 'not a ContentInfo', 0);
    if (Buffer.compare(der.subarray(ct.start, ct.contentEnd), SIGNED_DATA) !== 0) throw new DerError('shape', 'not SignedData', ct.at);
    const parts = readChildren(der, expectTag(readInner(der, content), TAG.SEQUENCE));
    if (parts.length < 4) throw new DerError('shape', 'not a SignedData', content.start);
    const certSet = parts.find((p) => p.tag === contextTag(0));
    const certs = certSet ? readChildren(der, certSet) : [];
    const last = parts[parts.length - 1]!;
    if (parts[2]!.tag !== TAG.SEQUENCE || last.tag !== TAG.SET) throw new DerError('shape', 'not a SignedData', content.start);
    const crls = parts.find((p) => p.tag === contextTag(1));
    return {
      encap: elementBytes(der, parts[2]!),
      certs: certs.filter((c) => c.tag === TAG.SEQUENCE).map((c) => elementBytes(der, c)),
      signerInfos: elementBytes(der, last),
      ...(crls ? { crls: elementBytes(der, crls) } : {}),
    };
  });
}
