/**
 * The service's signing identity, shared by signing, the CA routes, the verifier's trust (through
 * `Services.signing`, src/sign/module.ts) and the engine threads, which receive it serialised.
 */
import type { KeyObject } from 'node:crypto';

/** The service's signing key and certificates: from SIGNING_P12 or generated into DATA_DIR. */
export interface SigningIdentity {
  privateKey: KeyObject;
  /** 'RSA' (PKCS#1 v1.5, SHA-256) or 'ECDSA' (P-256, SHA-256). */
  keyAlgorithm: 'RSA' | 'ECDSA';
  /** DER certificates: signer first, then intermediates, then the root when known. */
  chainDer: Uint8Array[];
  certificatePem: string;
  /** The service's own root CA (generated identity) or the top of the P12 chain; trusted by verify. */
  rootCertificatePem?: string;
  /** The generated root CA's key and certificate (DER): signs its CRL and OCSP answers. Absent for SIGNING_P12. */
  ca?: { privateKey: KeyObject; certificateDer: Uint8Array };
}

/** A SigningIdentity as plain data, for an engine thread's workerData (key objects do not cross threads). */
export interface SerializedSigningIdentity {
  privateKeyPem: string;
  keyAlgorithm: 'RSA' | 'ECDSA';
  chainDer: Uint8Array[];
  certificatePem: string;
  rootCertificatePem?: string;
  /** The generated CA (B-LT revocation data made in-process). */
  ca?: { privateKeyPem: string; certificateDer: Uint8Array };
}
