/**
 * RFC 3161 time-stamp client: asks the configured TSA (TSA_URL) for a token over the signature value,
 * and checks that the answer is granted and stamps exactly what was asked (message imprint and nonce)
 * before it is embedded. Unlike products that silently fall back to a bare time, a failure is an error
 * unless the operator opted into TSA_OPTIONAL.
 */
import crypto from 'node:crypto';
import { SignedData } from '@peculiar/asn1-cms';
import { OctetString } from '@peculiar/asn1-schema';
import { MessageImprint, PKIStatus, TimeStampReq, TimeStampResp, TSTInfo } from '@peculiar/asn1-tsp';
import { AlgorithmIdentifier } from '@peculiar/asn1-x509';
import { OID, encapsulatedContent, parseAs, serialize, toArrayBuffer } from '../crypto/asn1.js';
import { elementBytes, readChildren, readElement, tryDer } from '../crypto/der.js';

export class TimestampError extends Error {}

const MAX_RESPONSE_BYTES = 256 * 1024;

export function buildTimeStampRequest(imprint: Uint8Array, nonce: Uint8Array): Uint8Array {
  return serialize(
    new TimeStampReq({
      messageImprint: new MessageImprint({
        hashAlgorithm: new AlgorithmIdentifier({ algorithm: OID.sha256, parameters: null }),
        hashedMessage: new OctetString(imprint),
      }),
      nonce: toArrayBuffer(nonce),
      certReq: true, // the token carries the TSA certificate
    }),
  );
}

/** Big-endian magnitude without sign bytes, so that two encodings of one positive number compare equal. */
function intBytes(n: ArrayBuffer | Uint8Array): Buffer {
  const hex = Buffer.from(n instanceof Uint8Array ? n : new Uint8Array(n));
  let i = 0;
  while (i < hex.length - 1 && hex[i] === 0) i++;
  return hex.subarray(i);
}

/** The token exactly as the TSA sent it: the second element of the TimeStampResp. */
function rawToken(body: Uint8Array): Uint8Array | undefined {
  const token = tryDer(() => readChildren(body, readElement(body))[1]);
  return token && new Uint8Array(elementBytes(body, token));
}

export interface TimestampTokenInfo {
  token: Uint8Array;
  genTime: Date;
}

/** Parses a TimeStampResp and checks it against the request. */
export function parseTimeStampResponse(body: Uint8Array, imprint: Uint8Array, nonce: Uint8Array): TimestampTokenInfo {
  const resp = parseAs(body, TimeStampResp, () => new TimestampError('the TSA answer is not a TimeStampResp'));
  const status = resp.status.status;
  if (status !== PKIStatus.granted && status !== PKIStatus.grantedWithMods) {
    const text = resp.status.statusString ? [...resp.status.statusString].join('; ') : '';
    throw new TimestampError(`the TSA refused the request (status ${status}${text ? `: ${text}` : ''})`);
  }
  if (!resp.timeStampToken) throw new TimestampError('the TSA granted the request but sent no token');
  const token = rawToken(body) ?? serialize(resp.timeStampToken);

  // ContentInfo → [0] SignedData → encapContentInfo → [0] OCTET STRING(TSTInfo)
  if (resp.timeStampToken.contentType !== OID.signedData) throw new TimestampError('the token is not SignedData');
  const signedData = parseAs(resp.timeStampToken.content, SignedData, (m) => new TimestampError(`malformed token: ${m}`));
  if (signedData.encapContentInfo.eContentType !== OID.tstInfo) throw new TimestampError('the token does not hold a TSTInfo');
  const tstBytes = encapsulatedContent(signedData.encapContentInfo);
  if (!tstBytes) throw new TimestampError('the token holds no TSTInfo');
  const tst = parseAs(tstBytes, TSTInfo, () => new TimestampError('malformed TSTInfo'));
  if (!Buffer.from(tst.messageImprint.hashedMessage.buffer).equals(Buffer.from(imprint))) {
    throw new TimestampError('the token stamps a different message imprint');
  }
  const genTime = tst.genTime;
  if (!(genTime instanceof Date) || Number.isNaN(genTime.getTime())) throw new TimestampError('the token has no valid genTime');
  if (!tst.nonce || !intBytes(tst.nonce).equals(intBytes(nonce))) {
    throw new TimestampError('the token does not echo our nonce');
  }
  return { token, genTime };
}

/** Requests a signature timestamp (RFC 3161 over HTTP) for the given signature value. */
export function requestSignatureTimestamp(tsaUrl: string, signatureValue: Uint8Array, timeoutMs = 15_000): Promise<TimestampTokenInfo> {
  return requestTimestamp(tsaUrl, crypto.createHash('sha256').update(signatureValue).digest(), timeoutMs);
}

/** Requests an RFC 3161 token over a SHA-256 `imprint` (a document timestamp stamps the ByteRange's digest). */
export async function requestTimestamp(tsaUrl: string, imprint: Uint8Array, timeoutMs = 15_000): Promise<TimestampTokenInfo> {
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
