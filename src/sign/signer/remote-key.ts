/**
 * The remote-signer interface: what a key held outside Folio implements — PKCS#11 (`pkcs11-key.ts`) today, a
 * cloud KMS (AWS KMS, Google Cloud KMS, Azure Key Vault) as one adapter each. An adapter only connects, signs a
 * digest and says when it cannot; the key host thread (`key-host-thread.ts`) does the rest for every adapter:
 * the start-up checks (a test signature verified with the certificate's public key), serving engine threads,
 * the operation time limit, health, and reconnecting after a failure. docs/operations.md ("Remote signers")
 * walks through writing one.
 */
import type { SignatureAlgorithm } from './types.js';

/** A setting that stops start-up: the one line names `variable`. */
export class KeySetupError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
    this.name = 'KeySetupError';
  }
}

/** The key cannot be reached now (device removed, session lost, network down): requests answer 503, the host reconnects. */
export class KeyUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'KeyUnavailableError';
  }
}

export interface RemoteKey {
  /**
   * Connects, authenticates and finds the key. Throws KeySetupError for what configuration must fix (wrong
   * PIN, no such key, a key type Folio cannot use) and KeyUnavailableError for what may pass (device absent).
   * Called at start-up (any error stops it) and again to recover after a failure.
   */
  open(): Promise<void>;
  /**
   * Signs `digest` (already `algorithm.hash`) with the key. RSA PKCS#1 v1.5 gets the bare digest too: the
   * adapter wraps it in a DigestInfo if its backend wants that (`encoding.ts`). Returns the signature as CMS
   * carries it (ECDSA as DER, `ecdsaRawToDer` for backends that give r‖s). Throws KeyUnavailableError when the
   * key cannot be reached.
   */
  signDigest(digest: Uint8Array, algorithm: SignatureAlgorithm): Promise<Uint8Array>;
  /** A cheap check that the key can still be reached, made while idle; throws KeyUnavailableError. */
  probe(): Promise<void>;
  /** Drops every connection and session, so that the next `open()` starts afresh. Never throws. */
  reset(): Promise<void>;
  /** Releases everything on shutdown. Never throws. */
  close(): Promise<void>;
}

/** How the key host builds an adapter: its name (the registry in `key-host-thread.ts`) and plain-data options. */
export interface RemoteKeySpec {
  adapter: 'pkcs11';
  /** The adapter's options, structured-cloned to the key host thread. */
  options: unknown;
}

/**
 * What health and a 503 answer say of a failure: the PKCS#11 code or a short category, never the full message,
 * which may name files, URIs and key labels (those go to the log). /v1/health needs no key.
 */
export function publicReason(reason: string): string {
  const code = /CKR_[A-Z0-9_]+/.exec(reason)?.[0];
  if (code) return code;
  if (/finds no private key|names no token|more than one/.test(reason)) return 'key not found';
  if (/refused the PIN|refuses logins|refused this PIN/.test(reason)) return 'PIN refused';
  if (/pin-source/.test(reason)) return 'PIN file unreadable';
  if (/certif/.test(reason)) return 'certificate does not match the key';
  if (/no signature within/.test(reason)) return 'timed out';
  if (/thread stopped/.test(reason)) return 'key host stopped';
  return 'unavailable';
}
