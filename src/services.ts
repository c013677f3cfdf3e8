/**
 * The API's services, built once at start-up by src/api.ts and handed to each route plugin. A capability
 * whose engine is not configured leaves its entry undefined, and its routes are not registered.
 */
import type { Logger } from 'pino';
import type { Config } from './config/index.js';
import type { SafeFetcher } from './fetch/safe-fetch.js';
import type { AuthService } from './auth/index.js';
import type { OfficeEngine } from './office/types.js';
import type { KeyObject } from 'node:crypto';
import type { EnginePool } from './engines/index.js';
import type { Coordination } from './coordination/redis.js';

/** The service's signing key and certificates (CONTRACT §5): from SIGNING_P12 or generated into DATA_DIR. */
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

export interface EngineHealth {
  name: string;
  /** A required engine that cannot serve makes /v1/health answer 503 "unhealthy". */
  required: boolean;
  status(): { status: 'healthy' | 'degraded' | 'unhealthy'; [k: string]: unknown };
}

export interface Services {
  config: Config;
  logger: Logger;
  fetcher: SafeFetcher;
  auth: AuthService;
  office?: OfficeEngine;
  /** Worker threads running every CPU-bound engine call (convert to DOCX, annotate, sign, verify). */
  enginePool: EnginePool;
  /** One thread that parses large JSON bodies (and decodes their document) off the event loop. */
  bodyPool: EnginePool;
  signing?: SigningIdentity;
  /** REDIS_URL: the shared Redis connections (limits, revocations) and their state; absent without Redis. */
  coordination?: Coordination;
  /** Engines reported by /v1/health (and `coordination`, not required: while Redis is down, "degraded"). */
  engines: EngineHealth[];
  /** Called on shutdown, in reverse order of registration. */
  closers: Array<() => Promise<void>>;
}
