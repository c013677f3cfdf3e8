/**
 * The jobs the engine pool runs off the event loop, and what each answers. Each module declares its own
 * tasks beside their handlers (src/<module>/tasks.ts) by declaration merging into `EngineTasks`, so the
 * pool, the worker, the handlers and the routes agree on shapes at compile time while this file names no
 * capability:
 *
 *   declare module '../engines/tasks.js' { interface EngineTasks { 'verify.pdf': { input: …; output: … } } }
 *
 * Everything here crosses a thread boundary by structured clone: plain data and Uint8Arrays only (no
 * classes, no functions).
 */
import type { ErrorCode, ErrorDetail } from '../errors.js';

export type PageSize = 'A4' | 'Letter';

/** Task name → `{ input; output }`, filled by the modules (src/modules/index.ts checks each is served). */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging from each module's tasks.ts
export interface EngineTasks {}

export type TaskName = keyof EngineTasks;

/** What a handler is given besides its input: the thread's workerData (each module rebuilds what it needs from it once). */
export interface TaskContext {
  data: TaskData;
}

/** The part of workerData the tasks read (also given to a task run on the calling thread: src/modules/engine.ts). */
export type TaskData = Omit<EngineWorkerData, 'startChannel' | 'nativeChannel' | 'preloadEngines' | 'warmUp'>;

export type TaskHandler<N extends TaskName> = (
  input: EngineTasks[N]['input'],
  context: TaskContext,
) => EngineTasks[N]['output'] | Promise<EngineTasks[N]['output']>;

export type TaskHandlers<N extends TaskName> = { [K in N]: TaskHandler<K> };

/** What a module's tasks file exports (the file named by its descriptor's `tasks.file`). */
export interface TaskFile<N extends TaskName = TaskName> {
  handlers: TaskHandlers<N>;
  /**
   * Buffers of an answer moved to the main thread instead of copied, per task: answers as large as the output
   * budget (a copy would double the memory of the largest answers). Only buffers the thread keeps no view of.
   */
  transfer?: { [K in N]?: (output: EngineTasks[K]['output']) => ArrayBuffer[] };
  /** Run once after the file is loaded on a thread that warms up (src/engines/warm-up.ts); must not throw. */
  warmUp?(): void;
}

/**
 * The buffer behind `bytes` when `bytes` is all of it (what a writer made for the answer alone), for a
 * `transfer` entry; nothing when it is a view into a larger buffer the thread may still use.
 */
export function wholeBuffer(bytes: Uint8Array): ArrayBuffer[] {
  return bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? [bytes.buffer] : [];
}

/** The task names a tasks file serves (`typeof import('./tasks.js')`), for a module descriptor's `tasks.names`. */
export type TaskNamesOf<F> = F extends { handlers: infer H } ? ReadonlyArray<Extract<keyof H, TaskName>> : never;

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

/**
 * What every worker is given once at start: where each task's handlers are, and enough to rebuild the
 * engines' dependencies locally. Modules add the data their tasks need by declaration merging (the signing
 * identity, the trust anchors), built by their descriptor's `workerData`.
 */
export interface EngineWorkerData {
  /** Name of the BroadcastChannel on which a worker announces each job it starts. */
  startChannel: string;
  /** Name of the BroadcastChannel on which the main thread starts native children for jobs (src/native/runner.ts). */
  nativeChannel?: string;
  /** Task name → URL of the tasks file with its handler (src/modules/engine.ts `engineTasks`, from the modules' descriptors). */
  taskFiles: Record<string, string>;
  /** Tasks files loaded when an engine thread starts rather than on first use (the common path: Markdown/HTML → DOCX). */
  preloadFiles?: string[];
  /** Load `preloadFiles` when the thread starts (engine threads), not on first use (the body thread). */
  preloadEngines: boolean;
  /** Run the preloaded files' warm-up before the thread counts as ready (API engine threads). */
  warmUp?: boolean;
  /** URL_FETCH_ALLOWLIST, for the fetchers tasks build (annotate's images, sign's and verify's revocation data). */
  urlFetchAllowlist: string[];
}
