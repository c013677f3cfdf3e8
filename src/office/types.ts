/**
 * The office engine's public surface: DOCX → PDF through LibreOffice. Other capabilities (convert, annotate
 * ?to=pdf, sign of a DOCX) depend on this interface only, never on how the pool works.
 */
import type { Deadline } from '../budget/index.js';

export interface DocxToPdfOptions {
  /** How tracked changes appear: as markup (default), all accepted, or all rejected. */
  trackedChanges?: 'markup' | 'accept' | 'reject';
  pdfa?: '1b' | '2b' | '3b';
  tagged?: boolean;
  /**
   * Word comments: left out ('none', the default), printed in a comment column added to the right of each
   * page ('margin', comments-margin.ts), or kept as PDF text annotations ('annotations', through the
   * soffice fallback: the in-process engine refuses documents with comments).
   */
  comments?: CommentsMode;
  /**
   * Where the DOCX comes from. 'upload' (the default) is anything from outside: the worker opens it with every
   * office check (validate.ts) before LibreOffice sees it. 'folio' says Folio's own writer produced these
   * bytes (annotate's filled template, convert's Markdown/HTML composition), so the checks that only a
   * hostile package needs are skipped (sniffing, content types and main part, the zip-bomb compression
   * ratio, which a legitimately repetitive document exceeds); the size bounds that protect LibreOffice's
   * memory stay (validate.ts, openFolioBuiltDocx). Never set it from a request parameter: only code that
   * built the bytes itself may.
   */
  origin?: DocxOrigin;
}

export type DocxOrigin = 'upload' | 'folio';

export type CommentsMode = 'none' | 'margin' | 'annotations';

export interface OfficeEngineStatus {
  status: 'healthy' | 'degraded' | 'unhealthy';
  workers: number;
  busy: number;
  queued: number;
}

/** Per-call settings of one conversion that are not about the document. */
export interface DocxToPdfRun {
  /** The client went away: leave the queue / stop the conversion. */
  signal?: AbortSignal;
  /**
   * The request's one deadline (src/budget): waiting for a worker and the conversion itself draw from it (the
   * conversion gets `deadline.cap(OFFICE_TIMEOUT_MS)`); spent → 504 CONVERSION_TIMEOUT and LibreOffice is
   * stopped as on a timeout.
   */
  deadline?: Deadline;
  /** Filled with what the conversion left out (e.g. comments past the margin column's limit), for `X-Folio-Warnings`. */
  warnings?: string[];
}

export interface OfficeEngine {
  /**
   * Converts a DOCX held in memory to PDF bytes. Throws FolioError: INVALID_FILE_FORMAT (not a DOCX),
   * UNPROCESSABLE_DOCUMENT (corrupt, encrypted, zip bomb, conversion failed), CONVERSION_TIMEOUT,
   * SERVICE_UNAVAILABLE (queue full, waited longer than one conversion budget, or `run.signal` aborted while
   * queued; with retryAfter). With `run.deadline`, a budget spent while queued or converting is a 504.
   */
  docxToPdf(docx: Uint8Array, options?: DocxToPdfOptions, run?: DocxToPdfRun): Promise<Uint8Array>;
  /**
   * One turn for a native job that is not a conversion (a page render), taken from the same admission as the
   * conversions so that both together stay within the configured workers; resolves with its release.
   * Optional: an engine without workers of its own (an adapter) has none to share.
   */
  acquireRenderSlot?(run?: DocxToPdfRun): Promise<() => void>;
  status(): OfficeEngineStatus;
  close(): Promise<void>;
}
