/**
 * The messages between an engine worker thread that needs a native child (remote.ts) and the main thread's
 * runner (runner.ts). They cross threads on BroadcastChannels by structured clone: plain data only.
 *
 * One request channel per pool (its name reaches the threads in workerData), listened to by the main thread
 * only: a thread opens it to post and closes it again, so no thread receives another's input bytes. Each
 * answer goes to a channel named after its request, which only the asking thread listens to.
 */
import type { BoundedRunOptions, BoundedRunResult } from './bounded-child.js';

/** What the runner needs to start the child: everything of runBounded but the signal (the job's end is it). */
export type NativeLimits = Omit<BoundedRunOptions, 'input' | 'signal'>;

export type NativeRequest =
  | {
      type: 'run';
      /** Unique per request: names the answer's channel. */
      id: string;
      /** The pool's job the thread is running: the child is killed when that job ends, however it ends. */
      jobId: number;
      command: string;
      args: string[];
      input: Uint8Array;
      limits: NativeLimits;
    }
  /** The thread's own signal fired (the engine gave up on the work): kill that one child. */
  | { type: 'cancel'; id: string };

export type NativeReply =
  | { id: string; ok: true; result: Omit<BoundedRunResult, 'stdout'> & { stdout: Uint8Array } }
  /** `code` set: a FolioError to rethrow as one; absent: the child could not be started (ENOENT and the like). */
  | { id: string; ok: false; error: { message: string; code?: 'SERVICE_UNAVAILABLE'; retryAfter?: number } };

/** The channel on which the answer to request `id` is posted. */
export function replyChannel(requestChannel: string, id: string): string {
  return `${requestChannel}:${id}`;
}
