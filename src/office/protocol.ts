/** Messages between the pool (parent) and an office worker process, over the fork IPC channel. */
import type { ErrorCode, ErrorDetail } from '../errors.js';
import type { DocxToPdfOptions } from './types.js';

/**
 * One conversion. `docx` is the caller's bytes as received: the worker validates and prepares them itself
 * (validate.ts, prepare.ts), so that ZIP reading and revision rewriting run under the job's time budget and
 * memory ceiling instead of on the API's event loop.
 */
export interface ConvertRequest {
  type: 'convert';
  id: number;
  docx: Uint8Array;
  options: DocxToPdfOptions;
}

export type WorkerMessage =
  | { type: 'ready'; rss: number; version: string }
  | { type: 'init-failed'; message: string }
  /** `warnings`: what the preparation left out (prepare.ts), for the answer's `X-Folio-Warnings`. */
  | { type: 'result'; id: number; pdf: Uint8Array; rss: number; millis: number; warnings?: string[] }
  | {
      type: 'failed';
      id: number;
      /** 'load': LibreOffice could not read the document; 'save': it could not export it; 'internal': the worker's own I/O failed. */
      stage: 'load' | 'save' | 'internal';
      rss: number;
    }
  | {
      /**
       * LibreOfficeKit refused to load a document whose comments were asked for (types.ts `comments`): the
       * pool converts `docx` (already validated and prepared) in a separate soffice process (soffice.ts).
       */
      type: 'fallback';
      id: number;
      docx: Uint8Array;
      rss: number;
      warnings?: string[];
    }
  | {
      /** The document was refused before LibreOffice saw it (validation or preparation): a FolioError's fields. */
      type: 'rejected';
      id: number;
      code: ErrorCode;
      message: string;
      status: number;
      details?: ErrorDetail[];
      rss: number;
    };

/** Environment variables the pool passes to a worker. */
export const WORKER_DIR_ENV = 'FOLIO_OFFICE_WORKER_DIR';
export const WORKER_INSTALL_ENV = 'FOLIO_OFFICE_INSTALL_PATH';
