/** The office capability: DOCX → PDF through a supervised pool of LibreOfficeKit worker processes. */
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { OfficePool } from './pool.js';
import type { DocxToPdfRun, OfficeEngine } from './types.js';

export { OfficePool, type OfficePoolOptions, type OfficePoolStatus, type ConversionEvent, type MemoryExceededEvent } from './pool.js';
export { validateDocx, OFFICE_PACKAGE_LIMITS } from './validate.js';
export { minimalDocx } from './minimal-docx.js';
export type { DocxOrigin, DocxToPdfOptions, DocxToPdfRun, OfficeEngine, OfficeEngineStatus } from './types.js';

/** The pool as configured by OFFICE_WORKERS, OFFICE_QUEUE_SIZE, OFFICE_TIMEOUT_MS and OFFICE_MEMORY_MB (not yet started). */
export function createOfficePool(config: Config, logger?: Logger): OfficePool {
  return new OfficePool({
    workers: config.officeWorkers,
    queueSize: config.officeQueueSize,
    timeoutMs: config.officeTimeoutMs,
    maxJobRssBytes: config.officeMemoryBytes,
    logger,
  });
}

/**
 * The engine with one call's run settings (signal, deadline) bound, for code that takes an OfficeEngine and
 * calls docxToPdf itself (convertDocument): the request's deadline reaches the pool without every caller
 * growing a parameter.
 */
export function officeWithRun(engine: OfficeEngine | undefined, run: DocxToPdfRun): OfficeEngine | undefined {
  if (!engine) return undefined;
  return {
    docxToPdf: (docx, options, own) => engine.docxToPdf(docx, options, { ...run, ...own }),
    status: () => engine.status(),
    close: () => engine.close(),
  };
}
