/**
 * A SignerInfo read by DER headers (src/crypto/der.ts) instead of the asn1-cms schema: profiling the verify of a
 * B-LTA document (three signatures, each with a timestamp token, and a document timestamp) showed the schema
 * parse of SignerInfos as the largest single cost (asn1js decodes and schema-compares every element). Only
 * OIDs go through asn1js; every other value is a slice of the original bytes, which is also what hashing and
 * matching need. The result has the shape of the schema object's fields verifyCms reads; anything that does
 * not read cleanly (a DerError) gives undefined and verifyCms falls back to the schema.
 */
import { parseOid, toArrayBuffer } from '../crypto/asn1.js';
import {
  DerError,
  TAG,
  contentBytes,
  contextTag,
  elementBytes,
  expectTag,
  octetStringContents,
  readChildren,
  readElement,
  readSingle,
  tryDer,
  type Tlv,
} from '../crypto/der.js';

export interface AlgorithmView {
  algorithm: string;
  parameters?: ArrayBuffer | null;
}

export interface AttributeView {
  attrType: string;
  attrValues: ArrayBuffer[];
}

export interface SignerInfoView {
  digestAlgorithm: AlgorithmView;
  signatureAlgorithm: AlgorithmView;
  signature: { buffer: ArrayBuffer };
  sid: { issuerAndSerialNumber?: { serialNumber: ArrayBuffer; issuer: unknown }; subjectKeyIdentifier?: { buffer: ArrayBuffer } };
  signedAttrs?: AttributeView[];
  unsignedAttrs?: AttributeView[];
}

const contentOf = (buf: Uint8Array, t: Tlv) => toArrayBuffer(contentBytes(buf, t));
const shape = (what: string, t: Tlv | undefined) => new DerError('shape', `not ${what}`, t?.at ?? 0);
const oidOf = (buf: Uint8Array, t: Tlv | undefined): string => {
  const oid = t?.tag === TAG.OID ? parseOid(elementBytes(buf, t)) : undefined;
  if (!oid) throw shape('an OBJECT IDENTIFIER', t);
  return oid;
};

/** AlgorithmIdentifier ::= SEQUENCE { algorithm OID, parameters ANY OPTIONAL } */
function algorithm(buf: Uint8Array, t: Tlv | undefined): AlgorithmView {
  if (t?.tag !== TAG.SEQUENCE) throw shape('an AlgorithmIdentifier', t);
  const parts = readChildren(buf, t);
  if (parts.length > 2) throw shape('an AlgorithmIdentifier', t);
  return { algorithm: oidOf(buf, parts[0]), ...(parts[1] ? { parameters: toArrayBuffer(elementBytes(buf, parts[1])) } : {}) };
}

/** SET OF Attribute { attrType OID, attrValues SET OF ANY } */
function attributes(buf: Uint8Array, t: Tlv): AttributeView[] {
  return readChildren(buf, t).map((a) => {
    const [type, values, extra] = readChildren(buf, a);
    if (values?.tag !== TAG.SET || extra) throw shape('an Attribute', a);
    return { attrType: oidOf(buf, type), attrValues: readChildren(buf, values).map((v) => toArrayBuffer(elementBytes(buf, v))) };
  });
}

/** SignerInfo ::= SEQUENCE { version, sid, digestAlgorithm, [0] signedAttrs OPTIONAL, signatureAlgorithm, signature, [1] unsignedAttrs OPTIONAL } */
function signerInfo(buf: Uint8Array, info: Tlv): SignerInfoView {
  const f = readChildren(buf, expectTag(info, TAG.SEQUENCE));
  if (f.length < 5 || f[0]!.tag !== TAG.INTEGER) throw shape('a SignerInfo', info);
  const sidT = f[1]!;
  let sid: SignerInfoView['sid'];
  if (sidT.tag === TAG.SEQUENCE) {
    const [issuer, serial, extra] = readChildren(buf, sidT);
    if (issuer?.tag !== TAG.SEQUENCE || serial?.tag !== TAG.INTEGER || extra) throw shape('an IssuerAndSerialNumber', sidT);
    sid = { issuerAndSerialNumber: { serialNumber: contentOf(buf, serial), issuer: undefined } };
  } else if (sidT.tag === contextTag(0, false)) sid = { subjectKeyIdentifier: { buffer: contentOf(buf, sidT) } };
  else throw shape('a SignerIdentifier', sidT);
  const digestAlgorithm = algorithm(buf, f[2]);
  let i = 3;
  const signedAttrs = f[i]?.tag === contextTag(0) ? attributes(buf, f[i++]!) : undefined;
  const signatureAlgorithm = algorithm(buf, f[i++]);
  const sig = f[i++];
  const unsignedAttrs = f[i]?.tag === contextTag(1) ? attributes(buf, f[i++]!) : undefined;
  if (sig?.tag !== TAG.OCTET_STRING || i !== f.length) throw shape('a SignerInfo', info);
  return {
    digestAlgorithm,
    signatureAlgorithm,
    signature: { buffer: contentOf(buf, sig) },
    sid,
    ...(signedAttrs ? { signedAttrs } : {}),
    ...(unsignedAttrs ? { unsignedAttrs } : {}),
  };
}

/** The SignerInfos SET's signer infos, or undefined when any of them does not read as expected. */
export function readSignerInfos(buf: Uint8Array): SignerInfoView[] | undefined {
  return tryDer(() => readChildren(buf, readSingle(buf, TAG.SET)).map((info) => signerInfo(buf, info)));
}

/** EncapsulatedContentInfo ::= SEQUENCE { eContentType OID, eContent [0] EXPLICIT OCTET STRING OPTIONAL }. */
export function readEncapsulated(buf: Uint8Array): { eContentType: string; content?: Uint8Array } | undefined {
  return tryDer(() => {
    const [type, wrapped, extra] = readChildren(buf, readSingle(buf, TAG.SEQUENCE));
    const eContentType = oidOf(buf, type);
    if (extra) throw shape('an EncapsulatedContentInfo', extra);
    if (!wrapped) return { eContentType };
    const inner = readChildren(buf, expectTag(wrapped, contextTag(0)));
    // A primitive OCTET STRING, or a BER-constructed one (pieces joined, as pkijs and Java signers write it).
    const content = inner.length === 1 ? octetStringContents(elementBytes(buf, inner[0]!)) : undefined;
    if (!content) throw shape('an eContent', wrapped);
    return { eContentType, content };
  });
}

/** The content of a primitive OCTET STRING element (a message-digest attribute value). */
export function readOctetString(buf: Uint8Array): Uint8Array | undefined {
  const t = tryDer(() => readSingle(buf, TAG.OCTET_STRING));
  return t && contentBytes(buf, t);
}

/** A GeneralizedTime's value (YYYYMMDDHHMMSS[.fff]Z, the only form RFC 3161 and RFC 5280 allow). */
function generalizedTime(buf: Uint8Array, t: Tlv): Date {
  const m =
    t.tag === TAG.GENERALIZED_TIME
      ? /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:\.(\d{1,9}))?Z$/.exec(Buffer.from(contentBytes(buf, t)).toString('latin1'))
      : null;
  const ms = m?.[7] ? Math.floor(Number(`0.${m[7]}`) * 1000) : 0;
  const d = m ? new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!, ms)) : undefined;
  if (!d || Number.isNaN(d.getTime())) throw shape('a GeneralizedTime', t);
  return d;
}

/**
 * TSTInfo ::= SEQUENCE { version, policy, messageImprint { AlgorithmIdentifier, OCTET STRING }, serialNumber,
 * genTime GeneralizedTime, ... }: what the verifier needs (genTime, the imprint and its algorithm).
 */
export function readTstInfo(buf: Uint8Array): { genTime: Date; imprintAlgorithm: AlgorithmView; imprint: Uint8Array } | undefined {
  return tryDer(() => {
    const seq = expectTag(readElement(buf), TAG.SEQUENCE);
    const f = readChildren(buf, seq);
    if (f.length < 5 || f[0]!.tag !== TAG.INTEGER || f[1]!.tag !== TAG.OID || f[2]!.tag !== TAG.SEQUENCE || f[3]!.tag !== TAG.INTEGER)
      throw shape('a TSTInfo', seq);
    const [alg, hashed, extra] = readChildren(buf, f[2]!);
    const imprintAlgorithm = algorithm(buf, alg);
    if (hashed?.tag !== TAG.OCTET_STRING || extra) throw shape('a MessageImprint', f[2]);
    return { genTime: generalizedTime(buf, f[4]!), imprintAlgorithm, imprint: contentBytes(buf, hashed) };
  });
}

/**
 * The first ESSCertID(v2) of a SigningCertificate(V2) value: { [hashAlgorithm], certHash OCTET STRING,
 * [issuerSerial] } (v1 has no algorithm: SHA-1). Undefined when it does not read.
 */
export function readEssCertId(buf: Uint8Array, v2: boolean): { algorithm?: string; certHash: Uint8Array } | undefined {
  return tryDer(() => {
    const certs = readChildren(buf, expectTag(readElement(buf), TAG.SEQUENCE))[0];
    const first = certs?.tag === TAG.SEQUENCE ? readChildren(buf, certs)[0] : undefined;
    if (first?.tag !== TAG.SEQUENCE) throw shape('a SigningCertificate', certs);
    const f = readChildren(buf, first);
    const alg = v2 && f[0]?.tag === TAG.SEQUENCE ? algorithm(buf, f[0]).algorithm : undefined;
    const hash = f[alg ? 1 : 0];
    if (hash?.tag !== TAG.OCTET_STRING) throw shape('an ESSCertID', first);
    return { ...(alg ? { algorithm: alg } : {}), certHash: contentBytes(buf, hash) };
  });
}
