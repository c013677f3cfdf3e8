/**
 * A SignerInfo read by DER headers (src/pdf/der.ts) instead of the asn1-cms schema: profiling the verify of a
 * B-LTA document (three signatures, each with a timestamp token, and a document timestamp) showed the schema
 * parse of SignerInfos as the largest single cost (asn1js decodes and schema-compares every element). Only
 * OIDs go through asn1js; every other value is a slice of the original bytes, which is also what hashing and
 * matching need. The result has the shape of the schema object's fields verifyCms reads; anything that does
 * not read cleanly gives undefined and verifyCms falls back to the schema.
 */
import { parseOid, toArrayBuffer } from '../crypto/asn1.js';
import { readTlv, readTlvChildren, type Tlv } from '../pdf/index.js';

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
