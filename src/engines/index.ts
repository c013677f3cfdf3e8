/** The engine pool: CPU-bound engine calls off the event loop, each bounded in time and memory. */
import type { Config } from '../config/index.js';
import type { Logger } from 'pino';
import type { SigningIdentity } from '../services.js';
import { EnginePool, type EnginePoolOptions } from './pool.js';

export { EnginePool, type EnginePoolOptions, type EnginePoolStatus, type RunOptions } from './pool.js';
export type { EngineTasks, TaskName } from './tasks.js';
export { registerEnginePoolMetrics } from './metrics.js';

/** The pool as configured by ENGINE_*, with what the workers need to rebuild signing, trust and fetching. */
export function createEnginePool(
  config: Config,
  logger: Logger,
  signing?: SigningIdentity,
  size: Partial<Pick<EnginePoolOptions, 'workers' | 'queueSize' | 'timeoutMs' | 'memoryMb'>> & { preloadEngines?: boolean; warmUp?: boolean } = {},
): EnginePool {
  return new EnginePool({
    workers: size.workers ?? config.engineWorkers,
    queueSize: size.queueSize ?? config.engineQueueSize,
    timeoutMs: size.timeoutMs ?? config.engineTimeoutMs,
    memoryMb: size.memoryMb ?? config.engineMemoryMb,
    logger,
    workerData: {
      preloadEngines: size.preloadEngines ?? true,
      warmUp: size.warmUp ?? false,
      signing: signing && {
        privateKeyPem: signing.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
        keyAlgorithm: signing.keyAlgorithm,
        chainDer: signing.chainDer,
        certificatePem: signing.certificatePem,
        rootCertificatePem: signing.rootCertificatePem,
        ca: signing.ca && {
          privateKeyPem: signing.ca.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
          certificateDer: signing.ca.certificateDer,
        },
      },
      trust: {
        rootCertificatePem: signing?.rootCertificatePem,
        certificatePem: signing?.certificatePem,
        trustAnchorsPath: config.trustAnchors,
      },
      urlFetchAllowlist: config.urlFetchAllowlist,
      tsaUrl: config.tsaUrl,
      tsaOptional: config.tsaOptional,
    },
  });
}
