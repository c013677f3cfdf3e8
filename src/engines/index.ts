/** The engine pool: CPU-bound engine calls off the event loop, each bounded in time and memory. */
import type { Config } from '../config/index.js';
import type { Logger } from 'pino';
import { EnginePool, type EnginePoolOptions } from './pool.js';
import type { TaskData } from './tasks.js';

export { EnginePool, type EnginePoolOptions, type EnginePoolStatus, type RunOptions } from './pool.js';
export type { EngineTasks, TaskName, TaskData } from './tasks.js';
export { registerEnginePoolMetrics } from './metrics.js';

/**
 * The pool as configured by ENGINE_*, its threads given `data`: where the modules' tasks are and what they
 * need to rebuild there (src/modules/engine.ts `engineWorkerData`).
 */
export function createEnginePool(
  config: Config,
  logger: Logger,
  data: TaskData,
  size: Partial<Pick<EnginePoolOptions, 'workers' | 'queueSize' | 'timeoutMs' | 'memoryMb'>> & { preloadEngines?: boolean; warmUp?: boolean } = {},
): EnginePool {
  return new EnginePool({
    workers: size.workers ?? config.engineWorkers,
    queueSize: size.queueSize ?? config.engineQueueSize,
    timeoutMs: size.timeoutMs ?? config.engineTimeoutMs,
    memoryMb: size.memoryMb ?? config.engineMemoryMb,
    logger,
    workerData: { ...data, preloadEngines: size.preloadEngines ?? true, warmUp: size.warmUp ?? false },
  });
}
