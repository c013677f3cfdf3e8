/**
 * PAdES B-LT and B-LTA on top of a freshly sealed B-T signature (ETSI EN 319 142-1 §5.4):
 * - B-LT: one more incremental update with the catalog's /DSS — the signer's chain and its OCSP/CRL data,
 *   the TSA's certificates — and a /VRI entry for the signature;
 * - B-LTA: then a document timestamp (RFC 3161 over the whole file) in a further update, from the same
 *   TSA, which protects the validation data in the DSS once the signer's certificate has expired.
 * The revisions are appended after the signature, so the signature itself is untouched. Each update chains
 * to what the one before it wrote (src/pdf/xref-chain.ts): the output is never read back.
 */
import crypto from 'node:crypto';
import { FolioError } from '../errors.js';
import type { SigningIdentity } from './identity-types.js';
import {
  appendDocTimestampPlaceholder,
  byteRangeParts,
  contentsInGap,
  dssUpdate,
  fillDocTimestamp,
  vriKey,
  type UpdateBase,
  type ValidationData,
} from '../pdf/index.js';
import type { SealResult } from './sign-pdf.js';
import { signerValidationData, timestampValidationData, type RevocationSources } from './revocation.js';
import { requestTimestamp, TimestampError } from './tsa.js';

export type SignatureLevel = 'B-B' | 'B-T' | 'B-LT' | 'B-LTA';

/**
 * Room for a document-timestamp token (TSA chain included) when no earlier token from the same TSA tells its
 * size; with one, that size plus a margin (tokens of one TSA differ by a few bytes: serial, time, nonce). A
 * token that does not fit is stamped again with room.
 */
const DOC_TIMESTAMP_ROOM = 16_384;
const TOKEN_MARGIN = 2_048;

function merge(...parts: ValidationData[]): ValidationData {
  return { certs: parts.flatMap((p) => p.certs), ocsps: parts.flatMap((p) => p.ocsps), crls: parts.flatMap((p) => p.crls) };
}

export interface LongTermOptions extends RevocationSources {
  identity: SigningIdentity;
  level: 'B-LT' | 'B-LTA';
  tsaUrl: string;
}

/** Appends the DSS (and for B-LTA the document timestamp) after the sealed signature. */
export async function addLongTermValidation(
  sealed: Pick<SealResult, 'pdf' | 'byteRange' | 'token' | 'chain'>,
  opts: LongTermOptions,
): Promise<Uint8Array> {
  const signer = await signerValidationData(opts.identity, opts);
  const tsa = sealed.token ? await timestampValidationData(sealed.token, opts) : { certs: [], ocsps: [], crls: [] };
  const all = merge(signer, tsa);
  const withDss = dssUpdate(sealed.chain(), { ...all, vri: [{ key: vriKey(contentsInGap(sealed.pdf, sealed.byteRange)), data: all }] });
  if (opts.level === 'B-LT') return withDss.bytes;
  return addDocumentTimestamp(withDss.next, opts.tsaUrl, sealed.token && sealed.token.length + TOKEN_MARGIN);
}

/**
 * A document timestamp over `pdf` (bytes read by the reader, or the base an update of the same request left);
 * a TSA failure fails the request (an explicit B-LTA is never downgraded).
 */
export async function addDocumentTimestamp(pdf: Uint8Array | UpdateBase, tsaUrl: string, roomHint?: number): Promise<Uint8Array> {
  let room = roomHint ?? DOC_TIMESTAMP_ROOM;
  for (let attempt = 0; attempt < 2; attempt++) {
    const placeholder = appendDocTimestampPlaceholder(pdf, room);
    const hash = crypto.createHash('sha256');
    for (const part of byteRangeParts(placeholder.bytes, placeholder.byteRange)) hash.update(part);
    let token: Uint8Array;
    try {
      token = (await requestTimestamp(tsaUrl, hash.digest())).token;
    } catch (e) {
      const why = e instanceof TimestampError ? e.message : 'unexpected error';
      throw new FolioError(
        'SERVICE_UNAVAILABLE',
        `The document was not signed: the timestamp authority failed on the B-LTA document timestamp (${why}). Retry later, or sign at level B-LT.`,
        { retryAfter: 30, cause: e },
      );
    }
    if (fillDocTimestamp(placeholder, token)) return placeholder.bytes;
    room = token.length + TOKEN_MARGIN;
  }
  throw new Error('the document timestamp did not fit its placeholder');
}
