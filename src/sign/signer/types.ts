/**
 * The signer interface: the one way Folio's signing key is used. The CMS builder (src/sign/cms.ts) asks a
 * `Signer` for the signature over the DER signed attributes and writes the algorithm it answers with; it never
 * sees a key. Three kinds stand behind it:
 *
 * - the file key (`file-key.ts`): the generated identity in DATA_DIR/signing or SIGNING_P12, a node:crypto
 *   KeyObject on every thread that signs;
 * - PKCS#11 (`pkcs11-token.ts`): the key stays in the token; only the digest goes to it;
 * - a remote signer (a cloud KMS): the same digest-in, signature-out contract as PKCS#11. Such keys live in one
 *   place per process (the key host thread, `key-host.ts`), which engine threads reach over a channel
 *   (`channel.ts`); docs/operations.md says how an adapter plugs in.
 */

/** The SHA-2 digests Folio signs with (the hash follows the key: SHA-256 for RSA and P-256, SHA-384/512 for P-384/P-521). */
export type DigestName = 'SHA-256' | 'SHA-384' | 'SHA-512';

/** The EC curves a signing key may use. */
export type NamedCurve = 'P-256' | 'P-384' | 'P-521';

/** A signature scheme with its parameters: what the CMS SignerInfo names as its signatureAlgorithm. */
export type SignatureAlgorithm =
  | { scheme: 'RSASSA-PKCS1-v1_5'; hash: DigestName; modulusBits: number }
  /** RFC 4055 parameters: MGF1 with the same hash, salt as long as the digest, trailer 1. */
  | { scheme: 'RSASSA-PSS'; hash: DigestName; modulusBits: number; saltLength: number }
  | { scheme: 'ECDSA'; hash: DigestName; curve: NamedCurve };

/** What is signed: the digest (all a token or a KMS receives) and, for signers that hash themselves, the bytes. */
export interface ToBeSigned {
  /** The `algorithm.hash` digest of `data`. */
  digest: Uint8Array;
  /**
   * The bytes digested (the DER signed attributes). Only a signer that cannot sign a bare digest reads them:
   * node:crypto has no pre-hashed ECDSA or RSA-PSS, so the file key signs the bytes. Never sent to a token,
   * a KMS or another thread.
   */
  data?: Uint8Array;
}

export interface Signature {
  /** The signature as CMS carries it: RSA's octets, or ECDSA's DER `Ecdsa-Sig-Value` (SEQUENCE of r, s). */
  signature: Uint8Array;
  /** The algorithm the signature was made with (written into the SignerInfo). */
  algorithm: SignatureAlgorithm;
}

export interface Signer {
  /** The key's name for logs and errors, never a secret: `file:<path>`, `pkcs12`, a PKCS#11 URI without its PIN. */
  readonly keyName: string;
  /** The algorithm it signs with, known before signing (sizes the CMS placeholder, picks the document digest). */
  readonly algorithm: SignatureAlgorithm;
  /**
   * Signs `tbs.digest`. A key that cannot be reached (token removed, session lost, KMS down) rejects with a
   * FolioError SERVICE_UNAVAILABLE carrying `retryAfter`: the request answers 503, never 500.
   */
  sign(tbs: ToBeSigned): Promise<Signature>;
}

/** A signer as plain data for an engine thread's workerData (a KeyObject or a token session does not cross threads). */
export type SignerThreadData =
  /** The file key crosses as PEM, as it always has: it is on disk (or in SIGNING_P12) anyway. */
  | { kind: 'file'; keyName: string; algorithm: SignatureAlgorithm; privateKeyPem: string }
  /** A key held by the key host thread: the thread asks it over the channel; nothing private crosses. */
  | { kind: 'channel'; keyName: string; algorithm: SignatureAlgorithm; channel: string; timeoutMs: number };

/** A signer that can be handed to engine threads. */
export interface ThreadableSigner extends Signer {
  threadData(): SignerThreadData;
}

/** The node:crypto name of a digest. */
export const NODE_DIGEST: Record<DigestName, 'sha256' | 'sha384' | 'sha512'> = {
  'SHA-256': 'sha256',
  'SHA-384': 'sha384',
  'SHA-512': 'sha512',
};

/** Octets of a digest. */
export const DIGEST_LENGTH: Record<DigestName, number> = { 'SHA-256': 32, 'SHA-384': 48, 'SHA-512': 64 };
