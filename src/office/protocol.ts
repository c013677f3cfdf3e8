/**
 * Messages between the pool (parent) and an office worker process, over the fork IPC channel. Documents do
 * not travel in messages: the pool writes the DOCX into the worker's private io directory (tmpfs under
 * /dev/shm), the worker reads it for validation and LibreOffice loads that same file; the pool reads the PDF
 * LibreOffice wrote beside it. In a message a document was copied five times each way (serialised, written
 * to the pipe, read from it in 64 KB chunks, reassembled, then written to or read from the io directory all
 * the same, since LibreOffice reads and writes files), on the event loops of both processes; as a file the
 * DOCX is copied twice and the PDF once, off the event loop (issue 26).
 */
import type { ErrorCode, ErrorDetail } from '../errors.js';
import type { DocxToPdfOptions } from './types.js';

/**
 * One conversion. `input` names a file in the worker's io directory holding the caller's bytes as received:
 * the worker validates and prepares them itself (validate.ts, prepare.ts), so that ZIP reading and revision
 * rewriting run under the job's time budget and memory ceiling instead of on the API's event loop. The PDF
 * is written to `output` in the same directory. Both are bare file names the pool chose (never paths).
 */
export interface ConvertRequest {
  type: 'convert';
  id: number;
  input: string;
  output: string;
  options: DocxToPdfOptions;
}

export type WorkerMessage =
  | { type: 'ready'; rss: number; version: string }
  | { type: 'init-failed'; message: string }
  /**
   * The PDF is in the request's `output` file. `warnings`: what the preparation left out (prepare.ts), for
   * the answer's `X-Folio-Warnings`.
   */
  | { type: 'result'; id: number; rss: number; millis: number; warnings?: string[] }
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
       * pool converts the file `docx` of the io directory (already validated and prepared) in a separate
       * soffice process (soffice.ts).
       */
      type: 'fallback';
      id: number;
      docx: string;
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
