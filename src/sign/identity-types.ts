/**
 * The service's signing identity, shared by signing, the CA routes, the verifier's trust (through
 * `Services.signing`, src/sign/module.ts) and the engine threads, which receive it serialised.
 */
import type { KeyObject } from 'node:crypto';
import type { SignerThreadData, ThreadableSigner } from './signer/types.js';

/** A certificate chain Folio signed with before a rotation: still published and trusted (SIGNING_PREVIOUS_CERT_CHAIN). */
export interface PreviousIdentity {
  /** DER certificates: the former signer first, then its chain. */
  chainDer: Uint8Array[];
  certificatePem: string;
  /** The top of the chain when it is a self-signed CA: trusted by verify. */
  rootCertificatePem?: string;
}

/** The service's signing key and certificates: generated into DATA_DIR, from SIGNING_P12, or in a PKCS#11 token. */
export interface SigningIdentity {
  /** The one way to sign (src/sign/signer): a file key on every thread, or a key host the threads ask. */
  signer: ThreadableSigner;
  /** The signer certificate's public key. */
  publicKey: KeyObject;
  /** 'RSA' (PKCS#1 v1.5 or PSS) or 'ECDSA' (P-256, P-384, P-521); `signer.algorithm` has the details. */
  keyAlgorithm: 'RSA' | 'ECDSA';
  /** DER certificates: signer first, then intermediates, then the root when known. */
  chainDer: Uint8Array[];
  certificatePem: string;
  /** The service's own root CA (generated identity) or the top of the configured chain; trusted by verify. */
  rootCertificatePem?: string;
  /** The generated root CA's key and certificate (DER): signs its CRL and OCSP answers. Absent otherwise. */
  ca?: { privateKey: KeyObject; certificateDer: Uint8Array };
  /** Identities of before a rotation, published by GET /v1/verify/key and trusted by verify. */
  previous?: PreviousIdentity[];
  /** A key held outside the process's memory (PKCS#11): its health, and its thread to close on shutdown. */
  keyHost?: { status(): { status: 'healthy' | 'degraded'; reason?: string; since: string }; close(): Promise<void> };
}

/** A SigningIdentity as plain data, for an engine thread's workerData (key objects and sessions do not cross threads). */
export interface SerializedSigningIdentity {
  signer: SignerThreadData;
  keyAlgorithm: 'RSA' | 'ECDSA';
  chainDer: Uint8Array[];
  certificatePem: string;
  rootCertificatePem?: string;
  /** The generated CA (B-LT revocation data made in-process). */
  ca?: { privateKeyPem: string; certificateDer: Uint8Array };
}
