/**
 * Native work from wherever the caller runs. On the main thread (page previews, the CLI's in-process mode)
 * the child is started here; on an engine worker thread it is started and reaped by the main thread's
 * runner (runner.ts), tied to the pool's job: a thread terminated mid-job (timeout, deadline, client gone)
 * then leaves neither a running child nor a zombie behind.
 */
import { randomUUID } from 'node:crypto';
import { BroadcastChannel, isMainThread } from 'node:worker_threads';
import { FolioError } from '../errors.js';
import { runBounded, type BoundedRunOptions, type BoundedRunResult } from './bounded-child.js';
import { replyChannel, type NativeReply, type NativeRequest } from './protocol.js';

/** Set once by an engine worker thread (workerData.nativeChannel); absent: children are started here. */
let requestChannel: string | undefined;
/** The pool's job this thread is running (one at a time: concurrentTasksPerWorker is 1). */
let currentJob: number | undefined;

/** Engine worker threads: native children go to the runner listening on `channel`. */
export function useNativeRunner(channel: string | undefined): void {
  requestChannel = channel;
}

/** Engine worker threads: the job now running (undefined between jobs). */
export function setNativeJob(jobId: number | undefined): void {
  currentJob = jobId;
}

/** runBounded, with the child started by the main thread when called from an engine worker thread. */
export function runNative(command: string, args: string[], opts: BoundedRunOptions): Promise<BoundedRunResult> {
  if (isMainThread || requestChannel === undefined || currentJob === undefined) return runBounded(command, args, opts);
  return runOnRunner(requestChannel, currentJob, command, args, opts);
}

function post(channel: string, msg: NativeRequest): void {
  // Opened to post and closed again: a thread that kept it open would receive every other thread's input.
  const out = new BroadcastChannel(channel);
  out.postMessage(msg);
  out.close();
}

/** One child started by the runner on `channel` for job `jobId`; resolves and rejects as runBounded does. */
export function runOnRunner(channel: string, jobId: number, command: string, args: string[], opts: BoundedRunOptions): Promise<BoundedRunResult> {
  const { input, signal, ...limits } = opts;
  if (signal?.aborted) return Promise.resolve({ stdout: Buffer.alloc(0), stderr: '', code: null, signal: null, stopped: 'aborted' });
  const id = randomUUID();
  const answers = new BroadcastChannel(replyChannel(channel, id));
  return new Promise<BoundedRunResult>((resolve, reject) => {
    const onAbort = () => post(channel, { type: 'cancel', id });
    signal?.addEventListener('abort', onAbort, { once: true });
    answers.onmessage = (event) => {
      const reply = (event as unknown as { data: NativeReply }).data;
      signal?.removeEventListener('abort', onAbort);
      answers.close();
      if (reply.ok) {
        const out = reply.result.stdout;
        resolve({ ...reply.result, stdout: Buffer.from(out.buffer, out.byteOffset, out.byteLength) });
      } else if (reply.error.code) {
        reject(new FolioError(reply.error.code, reply.error.message, { retryAfter: reply.error.retryAfter }));
      } else {
        reject(new Error(reply.error.message));
      }
    };
    post(channel, { type: 'run', id, jobId, command, args, input, limits });
  });
}
