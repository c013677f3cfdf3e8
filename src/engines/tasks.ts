/**
 * The jobs the engine pool runs off the event loop, and what each answers. One discriminated union, so the
 * pool, the worker and the routes agree on shapes at compile time. Everything here crosses a thread
 * boundary by structured clone: plain data and Uint8Arrays only (no classes, no functions).
 */
import type { AnnotateField, AnnotateReport, FieldDescription } from '../annotate/index.js';
import type { SignRequest } from '../sign/index.js';
import type { VerifyResult } from '../verify/index.js';
import type { MergeInput, MergeOptions, MergeResult } from '../merge/engine.js';
import type { ErrorCode, ErrorDetail } from '../errors.js';

export type PageSize = 'A4' | 'Letter';

export interface EngineTasks {
  /**
   * A large JSON request body, parsed off the request thread: the bounded scan and JSON.parse, and the
   * base64 of its `document` decoded to bytes (its string replaced by PREDECODED_DOCUMENT).
   */
  'http.parseJson': {
    input: { body: Uint8Array };
    output: { value: unknown; document?: Uint8Array };
  };
  /** Markdown or HTML (bytes as uploaded) → DOCX, with what it could not keep as it was (`X-Folio-Warnings`). */
  'convert.toDocx': {
    input: { from: 'md' | 'html'; bytes: Uint8Array; pageSize: PageSize };
    output: { docx: Uint8Array; warnings: string[] };
  };
  /**
   * DOCX → Markdown or HTML (src/docx/read and the writers in src/convert), with what could not be kept: UTF-8
   * bytes counted against `outputMaxBytes` while written (OUTPUT_MAX_MB; default: DEFAULT_OUTPUT_MAX_BYTES),
   * transferred back (worker.ts), never one string on the main thread.
   */
  'convert.fromDocx': {
    input: { to: 'md' | 'html'; bytes: Uint8Array; images: 'inline' | 'drop'; outputMaxBytes?: number };
    output: { bytes: Uint8Array; warnings: string[] };
  };
  'annotate.fill': {
    input: { template: Uint8Array; fields: AnnotateField[]; strict: boolean; flatten: boolean };
    output: { docx: Uint8Array; report: AnnotateReport };
  };
  'annotate.fields': {
    input: { template: Uint8Array };
    output: Array<FieldDescription & { occurrences: number }>;
  };
  /**
   * Seals a PDF. A DOCX is converted by the office engine on the way in (its supervised processes), so the
   * worker receives the original bytes for the audit record and the PDF made from them. The request is the
   * sign engine's own, checked and parsed where it came in (dates as Dates: they survive structured clone).
   */
  'sign.seal': {
    input: SignRequest;
    output: { pdf: Uint8Array; timestampSkipped?: string };
  };
  'verify.pdf': {
    input: { bytes: Uint8Array };
    output: VerifyResult;
  };
  /** The rendered size of preview pages, read before poppler runs (src/preview/page-sizes.ts); null: unknown. */
  'preview.pageSizes': {
    input: { pdf: Uint8Array; pages: number[] };
    output: Array<{ width: number; height: number } | null>;
  };
  /** PDFs (DOCX inputs already converted by the office engine) → one PDF, in order (src/merge). */
  'merge.pdfs': {
    input: { inputs: MergeInput[]; options: MergeOptions };
    output: MergeResult;
  };
}

export type TaskName = keyof EngineTasks;

export interface EngineJob<N extends TaskName = TaskName> {
  /** Announced on the pool's start channel when a thread begins the job: its time budget starts then. */
  jobId: number;
  task: N;
  input: EngineTasks[N]['input'];
}

/** A FolioError flattened for the trip back to the main thread (classes do not survive structured clone). */
export interface SerializedError {
  code: ErrorCode;
  message: string;
  status?: number;
  details?: ErrorDetail[];
  retryAfter?: number;
}

export type JobOutcome<N extends TaskName = TaskName> =
  { ok: true; value: EngineTasks[N]['output'] } | { ok: false; error: SerializedError; internal?: { name: string; stack?: string } };

/** What every worker is given once at start: enough to rebuild the engines' dependencies locally. */
export interface EngineWorkerData {
  /** Name of the BroadcastChannel on which a worker announces each job it starts. */
  startChannel: string;
  /** Name of the BroadcastChannel on which the main thread starts native children for jobs (src/native/runner.ts). */
  nativeChannel?: string;
  /** Load the engine modules when the thread starts (engine threads), not on first use (the body thread). */
  preloadEngines: boolean;
  /** Convert the built-in warm-up documents before the thread counts as ready (API engine threads). */
  warmUp?: boolean;
  signing?: {
    privateKeyPem: string;
    keyAlgorithm: 'RSA' | 'ECDSA';
    chainDer: Uint8Array[];
    certificatePem: string;
    rootCertificatePem?: string;
    /** The generated CA (B-LT revocation data made in-process). */
    ca?: { privateKeyPem: string; certificateDer: Uint8Array };
  };
  trust: { rootCertificatePem?: string; certificatePem?: string; trustAnchorsPath?: string };
  urlFetchAllowlist: string[];
  tsaUrl?: string;
  tsaOptional: boolean;
}
