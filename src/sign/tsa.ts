/**
 * RFC 3161 time-stamp client: asks the configured TSA (TSA_URL) for a token over the signature value,
 * and checks that the answer is granted and stamps exactly what was asked (message imprint and nonce)
 * before it is embedded. Unlike products that silently fall back to a bare time, a failure is an error
 * unless the operator opted into TSA_OPTIONAL.
 */
import crypto from 'node:crypto';
import * as asn1js from 'asn1js';

export class TimestampError extends Error {}

const SHA256 = '2.16.840.1.101.3.4.2.1';
const ID_CT_TSTINFO = '1.2.840.113549.1.9.16.1.4';
const MAX_RESPONSE_BYTES = 256 * 1024;

const toAb = (u: Uint8Array): ArrayBuffer => u.buffer.slice(u.byteOffset, u.byteOffset + u.byteLength) as ArrayBuffer;

export function buildTimeStampRequest(imprint: Uint8Array, nonce: Uint8Array): Uint8Array {
  const req = new asn1js.Sequence({
    value: [
      new asn1js.Integer({ value: 1 }),
      new asn1js.Sequence({
        value: [
          new asn1js.Sequence({ value: [new asn1js.ObjectIdentifier({ value: SHA256 }), new asn1js.Null()] }),
          new asn1js.OctetString({ valueHex: toAb(imprint) }),
        ],
      }),
      new asn1js.Integer({ valueHex: toAb(nonce) }),
      new asn1js.Boolean({ value: true }), // certReq: the token carries the TSA certificate
    ],
  });
  return new Uint8Array(req.toBER(false));
}

function seq(n: asn1js.AsnType | undefined, what: string): asn1js.AsnType[] {
  const v = (n as { valueBlock?: { value?: unknown } } | undefined)?.valueBlock?.value;
  if (!n || !n.idBlock.isConstructed || !Array.isArray(v)) throw new TimestampError(`malformed ${what}`);
  return v as asn1js.AsnType[];
}

function intBytes(n: asn1js.AsnType): Buffer {
  const hex = Buffer.from((n as asn1js.Integer).valueBlock.valueHexView);
  // Drop a leading sign byte so that two encodings of one positive number compare equal.
  return hex.length > 1 && hex[0] === 0 ? hex.subarray(1) : hex;
}

export interface TimestampTokenInfo {
  token: Uint8Array;
  genTime: Date;
}

/** Parses a TimeStampResp and checks it against the request. */
export function parseTimeStampResponse(body: Uint8Array, imprint: Uint8Array, nonce: Uint8Array): TimestampTokenInfo {
  const parsed = asn1js.fromBER(body);
  if (parsed.offset === -1) throw new TimestampError('the TSA answer is not DER');
  const [statusInfo, tokenNode] = seq(parsed.result, 'TimeStampResp');
  const statusFields = seq(statusInfo, 'PKIStatusInfo');
  const status = (statusFields[0] as asn1js.Integer).valueBlock?.valueDec;
  if (status !== 0 && status !== 1) {
    const text = statusFields[1]
      ? seq(statusFields[1], 'statusString')
          .map((s) => (s as asn1js.Utf8String).valueBlock.value)
          .join('; ')
      : '';
    throw new TimestampError(`the TSA refused the request (status ${status}${text ? `: ${text}` : ''})`);
  }
  if (!tokenNode) throw new TimestampError('the TSA granted the request but sent no token');
  const token = new Uint8Array(tokenNode.toBER(false));

  // ContentInfo → [0] → SignedData → encapContentInfo → [0] → OCTET STRING(TSTInfo)
  const signedData = seq(seq(tokenNode, 'token')[1], 'token content')[0];
  const encap = seq(signedData, 'SignedData')[2];
  const [eContentType, eContentTagged] = seq(encap, 'encapContentInfo');
  if ((eContentType as asn1js.ObjectIdentifier).valueBlock?.toString() !== ID_CT_TSTINFO) {
    throw new TimestampError('the token does not hold a TSTInfo');
  }
  const octets = seq(eContentTagged, 'eContent')[0] as asn1js.OctetString;
  const tstBytes = octets.idBlock.isConstructed
    ? Buffer.concat(seq(octets, 'eContent').map((p) => Buffer.from((p as asn1js.OctetString).valueBlock.valueHexView)))
    : Buffer.from(octets.valueBlock.valueHexView);
  const tst = asn1js.fromBER(tstBytes);
  if (tst.offset === -1) throw new TimestampError('malformed TSTInfo');
  const f = seq(tst.result, 'TSTInfo');
  const [, hashed] = seq(f[2], 'messageImprint');
  if (!Buffer.from((hashed as asn1js.OctetString).valueBlock.valueHexView).equals(Buffer.from(imprint))) {
    throw new TimestampError('the token stamps a different message imprint');
  }
  const genTime = (f[4] as asn1js.GeneralizedTime).toDate?.();
  if (!(genTime instanceof Date) || Number.isNaN(genTime.getTime())) throw new TimestampError('the token has no valid genTime');
  const nonceNode = f.slice(5).find((n) => n instanceof asn1js.Integer);
  if (!nonceNode || !intBytes(nonceNode).equals(intBytes(new asn1js.Integer({ valueHex: toAb(nonce) })))) {
    throw new TimestampError('the token does not echo our nonce');
  }
  return { token, genTime };
}

/** Requests a signature timestamp (RFC 3161 over HTTP) for the given signature value. */
export async function requestSignatureTimestamp(tsaUrl: string, signatureValue: Uint8Array, timeoutMs = 15_000): Promise<TimestampTokenInfo> {
  const imprint = crypto.createHash('sha256').update(signatureValue).digest();
  const nonce = crypto.randomBytes(8);
  nonce[0] = nonce[0]! & 0x7f || 0x01; // positive, no leading zero byte
  let res: Response;
  try {
    res = await fetch(tsaUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/timestamp-query', accept: 'application/timestamp-reply' },
      body: Buffer.from(buildTimeStampRequest(imprint, nonce)),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'error',
    });
  } catch (e) {
    throw new TimestampError(`the TSA could not be reached (${(e as Error).name === 'TimeoutError' ? 'timeout' : (e as Error).message})`);
  }
  if (res.status !== 200) {
    await res.body?.cancel().catch(() => undefined);
    throw new TimestampError(`the TSA answered HTTP ${res.status}`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.length;
    if (size > MAX_RESPONSE_BYTES) throw new TimestampError('the TSA answer is too large');
    chunks.push(chunk);
  }
  return parseTimeStampResponse(Buffer.concat(chunks), imprint, nonce);
}
