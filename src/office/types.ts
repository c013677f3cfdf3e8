/**
 * The office engine's public surface: DOCX → PDF through LibreOffice. Other capabilities (convert, annotate
 * ?to=pdf, sign of a DOCX) depend on this interface only, never on how the pool works.
 */
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

export interface OfficeEngine {
  /**
   * Converts a DOCX held in memory to PDF bytes. Throws FolioError: INVALID_FILE_FORMAT (not a DOCX),
   * UNPROCESSABLE_DOCUMENT (corrupt, encrypted, zip bomb, conversion failed), CONVERSION_TIMEOUT,
   * SERVICE_UNAVAILABLE (queue full, waited longer than one conversion budget, or `run.signal` aborted while
   * queued; with retryAfter).
   */
  docxToPdf(docx: Uint8Array, options?: DocxToPdfOptions, run?: { signal?: AbortSignal }): Promise<Uint8Array>;
  status(): OfficeEngineStatus;
  close(): Promise<void>;
}
