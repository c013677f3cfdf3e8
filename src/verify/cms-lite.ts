/**
 * A SignerInfo read by DER headers (src/pdf/der.ts) instead of the asn1-cms schema: profiling the verify of a
 * B-LTA document (three signatures, each with a timestamp token, and a document timestamp) showed the schema
 * parse of SignerInfos as the largest single cost (asn1js decodes and schema-compares every element). Only
 * OIDs go through asn1js; every other value is a slice of the original bytes, which is also what hashing and
 * matching need. The result has the shape of the schema object's fields verifyCms reads; anything that does
 * not read cleanly gives undefined and verifyCms falls back to the schema.
 */
import { parseOid, toArrayBuffer } from '../crypto/asn1.js';
import { octetStringContents, readTlv, readTlvChildren, type Tlv } from '../pdf/index.js';

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

const bytesOf = (buf: Uint8Array, t: Tlv) => buf.subarray(t.at, t.end);
const contentOf = (buf: Uint8Array, t: Tlv) => toArrayBuffer(buf.subarray(t.start, t.contentEnd));

function algorithm(buf: Uint8Array, t: Tlv | undefined): AlgorithmView | undefined {
  const parts = t && t.tag === 0x30 ? readTlvChildren(buf, t) : undefined;
  const oid = parts?.[0]?.tag === 0x06 ? parseOid(bytesOf(buf, parts[0])) : undefined;
  if (!parts || !oid || parts.length > 2) return undefined;
  return { algorithm: oid, ...(parts[1] ? { parameters: toArrayBuffer(bytesOf(buf, parts[1])) } : {}) };
}

function attributes(buf: Uint8Array, t: Tlv): AttributeView[] | undefined {
  const out: AttributeView[] = [];
  for (const a of readTlvChildren(buf, t) ?? []) {
    const [type, values, extra] = readTlvChildren(buf, a) ?? [];
    const oid = type?.tag === 0x06 ? parseOid(bytesOf(buf, type)) : undefined;
    const vals = values?.tag === 0x31 ? readTlvChildren(buf, values) : undefined;
    if (!oid || !vals || extra) return undefined;
    out.push({ attrType: oid, attrValues: vals.map((v) => toArrayBuffer(bytesOf(buf, v))) });
  }
  return out;
}

/** The SignerInfos SET's signer infos, or undefined when any of them does not read as expected. */
export function readSignerInfos(buf: Uint8Array): SignerInfoView[] | undefined {
  const set = readTlv(buf, 0, buf.length);
  if (!set || set.tag !== 0x31 || set.end !== buf.length) return undefined;
  const out: SignerInfoView[] = [];
  for (const info of readTlvChildren(buf, set) ?? []) {
    const f = info.tag === 0x30 ? readTlvChildren(buf, info) : undefined;
    if (!f || f.length < 5 || f[0]!.tag !== 0x02) return undefined;
    const sidT = f[1]!;
    let sid: SignerInfoView['sid'];
    if (sidT.tag === 0x30) {
      const [issuer, serial, extra] = readTlvChildren(buf, sidT) ?? [];
      if (!issuer || issuer.tag !== 0x30 || !serial || serial.tag !== 0x02 || extra) return undefined;
      sid = { issuerAndSerialNumber: { serialNumber: contentOf(buf, serial), issuer: undefined } };
    } else if (sidT.tag === 0x80) sid = { subjectKeyIdentifier: { buffer: contentOf(buf, sidT) } };
    else return undefined;
    const digestAlgorithm = algorithm(buf, f[2]);
    let i = 3;
    const signedAttrs = f[i]?.tag === 0xa0 ? attributes(buf, f[i++]!) : undefined;
    if (f[3]?.tag === 0xa0 && !signedAttrs) return undefined;
    const signatureAlgorithm = algorithm(buf, f[i++]);
    const sig = f[i++];
    const unsignedT = f[i]?.tag === 0xa1 ? f[i++] : undefined;
    const unsignedAttrs = unsignedT ? attributes(buf, unsignedT) : undefined;
    if (!digestAlgorithm || !signatureAlgorithm || !sig || sig.tag !== 0x04 || i !== f.length || (unsignedT && !unsignedAttrs)) return undefined;
    out.push({
      digestAlgorithm,
      signatureAlgorithm,
      signature: { buffer: contentOf(buf, sig) },
      sid,
      ...(signedAttrs ? { signedAttrs } : {}),
      ...(unsignedAttrs ? { unsignedAttrs } : {}),
    });
  }
  return out;
}

/** EncapsulatedContentInfo ::= SEQUENCE { eContentType OID, eContent [0] EXPLICIT OCTET STRING OPTIONAL }. */
export function readEncapsulated(buf: Uint8Array): { eContentType: string; content?: Uint8Array } | undefined {
  const seq = readTlv(buf, 0, buf.length);
  const [type, wrapped, extra] = (seq && seq.tag === 0x30 && seq.end === buf.length ? readTlvChildren(buf, seq) : undefined) ?? [];
  const eContentType = type?.tag === 0x06 ? parseOid(bytesOf(buf, type)) : undefined;
  if (!eContentType || extra) return undefined;
  if (!wrapped) return { eContentType };
  const inner = wrapped.tag === 0xa0 ? readTlvChildren(buf, wrapped) : undefined;
  // A primitive OCTET STRING, or a BER-constructed one (pieces joined, as pkijs and Java signers write it).
  const content = inner?.length === 1 ? octetStringContents(bytesOf(buf, inner[0]!)) : undefined;
  return content ? { eContentType, content } : undefined;
}

/** The content of a primitive OCTET STRING element (a message-digest attribute value). */
export function readOctetString(buf: Uint8Array): Uint8Array | undefined {
  const t = readTlv(buf, 0, buf.length);
  return t && t.tag === 0x04 && t.end === buf.length ? buf.subarray(t.start, t.contentEnd) : undefined;
}

/** A GeneralizedTime's value (YYYYMMDDHHMMSS[.fff]Z, the only form RFC 3161 and RFC 5280 allow). */
function generalizedTime(buf: Uint8Array, t: Tlv): Date | undefined {
  if (t.tag !== 0x18) return undefined;
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:\.(\d{1,9}))?Z$/.exec(Buffer.from(buf.subarray(t.start, t.contentEnd)).toString('latin1'));
  if (!m) return undefined;
  const ms = m[7] ? Math.floor(Number(`0.${m[7]}`) * 1000) : 0;
  const d = new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!, ms));
  return Number.isNaN(d.getTime()) ? undefined : d;
}

/**
 * TSTInfo ::= SEQUENCE { version, policy, messageImprint { AlgorithmIdentifier, OCTET STRING }, serialNumber,
 * genTime GeneralizedTime, ... }: what the verifier needs (genTime, the imprint and its algorithm).
 */
export function readTstInfo(buf: Uint8Array): { genTime: Date; imprintAlgorithm: AlgorithmView; imprint: Uint8Array } | undefined {
  const seq = readTlv(buf, 0, buf.length);
  const f = seq && seq.tag === 0x30 ? readTlvChildren(buf, seq) : undefined;
  if (!f || f.length < 5 || f[0]!.tag !== 0x02 || f[1]!.tag !== 0x06 || f[2]!.tag !== 0x30 || f[3]!.tag !== 0x02) return undefined;
  const [alg, hashed, extra] = readTlvChildren(buf, f[2]!) ?? [];
  const imprintAlgorithm = algorithm(buf, alg);
  const genTime = generalizedTime(buf, f[4]!);
  if (!imprintAlgorithm || !hashed || hashed.tag !== 0x04 || extra || !genTime) return undefined;
  return { genTime, imprintAlgorithm, imprint: buf.subarray(hashed.start, hashed.contentEnd) };
}

/**
 * The first ESSCertID(v2) of a SigningCertificate(V2) value: { [hashAlgorithm], certHash OCTET STRING,
 * [issuerSerial] } (v1 has no algorithm: SHA-1). Undefined when it does not read.
 */
export function readEssCertId(buf: Uint8Array, v2: boolean): { algorithm?: string; certHash: Uint8Array } | undefined {
  const outer = readTlv(buf, 0, buf.length);
  const certs = outer && outer.tag === 0x30 ? readTlvChildren(buf, outer)?.[0] : undefined;
  const first = certs && certs.tag === 0x30 ? readTlvChildren(buf, certs)?.[0] : undefined;
  const f = first && first.tag === 0x30 ? readTlvChildren(buf, first) : undefined;
  if (!f || f.length === 0) return undefined;
  let i = 0;
  let alg: string | undefined;
  if (v2 && f[0]!.tag === 0x30) alg = algorithm(buf, f[i++])?.algorithm;
  const hash = f[i];
  if (!hash || hash.tag !== 0x04 || (v2 && f[0]!.tag === 0x30 && !alg)) return undefined;
  return { ...(alg ? { algorithm: alg } : {}), certHash: buf.subarray(hash.start, hash.contentEnd) };
}
