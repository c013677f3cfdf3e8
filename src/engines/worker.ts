/**
 * Entry of one engine worker thread (run by piscina from pool.ts). Each job runs one engine call on its own
 * thread, so a slow or hostile document never holds the event loop that answers health checks; the pool
 * owns the time budget and the heap ceiling and replaces this thread when either is crossed.
 *
 * The thread knows no capability: workerData names, per task, the tasks file of the module that serves it
 * (src/modules/engine.ts, from the modules' descriptors). A file is imported when the first job of one of
 * its tasks comes, before that job is announced, so module loading never runs inside a job's time budget;
 * an idle thread holds only what it has used (the body thread loads only the JSON body parser). The files
 * marked for preloading (Markdown/HTML ↔ DOCX) load, and warm up, when an engine thread starts.
 */
import { BroadcastChannel, workerData } from 'node:worker_threads';
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { isFolioError } from '../errors.js';
import type { EngineJob, EngineWorkerData, JobOutcome, TaskContext, TaskFile, TaskName } from './tasks.js';
import { collectWhenIdle } from './idle-gc.js';
import { setNativeJob, useNativeRunner } from '../native/remote.js';

const data = workerData as EngineWorkerData;
const context: TaskContext = { data };

// The pool starts a job's time budget when this thread announces it, so a thread's own start-up (module
// loading after a replacement) never counts against the first job it runs.
const startChannel = new BroadcastChannel(data.startChannel);
startChannel.unref();
// Native children (resvg) are started and reaped by the main thread, tied to the job (src/native/runner.ts).
useNativeRunner(data.nativeChannel);

const files = new Map<string, Promise<TaskFile>>();

/** The tasks file at `url`, imported once per thread. */
function load(url: string): Promise<TaskFile> {
  let file = files.get(url);
  if (!file) files.set(url, (file = import(url) as Promise<TaskFile>));
  return file;
}

if (data.preloadEngines && data.preloadFiles?.length) {
  // Top-level await: piscina counts the thread ready only once this module has loaded, so the preloaded
  // engines and their warm-up never run inside a job's time budget.
  const preloaded = await Promise.all(data.preloadFiles.map(load));
  if (data.warmUp) {
    for (const file of preloaded) {
      try {
        file.warmUp?.();
      } catch {
        /* a cold thread still works */
      }
    }
  }
}

function transferred(task: TaskName, file: TaskFile, outcome: JobOutcome): JobOutcome {
  const buffersOf = file.transfer?.[task] as ((output: unknown) => ArrayBuffer[]) | undefined;
  if (!buffersOf || !outcome.ok) return outcome;
  const buffers = buffersOf(outcome.value);
  if (buffers.length === 0) return outcome;
  // piscina's Transferable: the value sent, and the list of what to move with it.
  return move({ [transferableSymbol]: buffers, [valueSymbol]: outcome }) as unknown as JobOutcome;
}

export default async function runJob(job: EngineJob): Promise<JobOutcome> {
  const url = data.taskFiles[job.task];
  if (!url) {
    startChannel.postMessage(job.jobId);
    return { ok: false, error: { code: 'INTERNAL_ERROR', message: `Unknown engine task ${String(job.task)}` } };
  }
  try {
    // The task's file first (the first job of a kind on this thread), then the announcement that starts
    // the job's time budget.
    const file = await load(url);
    const handler = file.handlers[job.task] as ((input: unknown, context: TaskContext) => unknown) | undefined;
    startChannel.postMessage(job.jobId);
    if (!handler) throw new Error(`${url} has no handler for ${job.task}`);
    setNativeJob(job.jobId);
    const value = await handler(job.input, context);
    // Copied back by structured clone (piscina moves only a bare top-level value); at the 25 MB upload
    // limit the copy costs milliseconds. Output bytes as large as OUTPUT_MAX_MB are moved instead (`transfer`).
    return transferred(job.task, file, { ok: true, value: value as never });
  } catch (e) {
    if (isFolioError(e)) {
      return {
        ok: false,
        error: { code: e.code, message: e.message, status: e.status, details: e.details, retryAfter: e.retryAfter },
      };
    }
    if (e instanceof RangeError && /call stack/i.test(e.message)) {
      // Recursion deeper than the thread's stack: the document nests too deeply, not a fault of ours.
      return { ok: false, error: { code: 'UNPROCESSABLE_DOCUMENT', message: 'The document is too deeply nested to process' } };
    }
    // A stack trace names code, never document content; the main thread logs it with the request id.
    const err = e as Error;
    return { ok: false, error: { code: 'INTERNAL_ERROR', message: 'Internal error' }, internal: { name: err?.name ?? 'Error', stack: err?.stack } };
  } finally {
    setNativeJob(undefined);
    // Once this thread has had nothing to do for a second, its jobs' garbage goes back (idle-gc.ts: a thread
    // that goes idle after a burst would otherwise keep it for minutes).
    collectWhenIdle();
  }
}
