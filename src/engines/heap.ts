/**
 * Gives back the heap a large job grew. A worker thread's V8 heap stays at its high-water mark after a job:
 * nothing allocates on an idle thread, so no collection runs, and the pages (plus the young generation
 * grown to its cap) stay resident until the next job. With a heap ceiling of ENGINE_MEMORY_MB per thread,
 * a few large documents left each thread holding hundreds of MB for good (the API's RSS after the
 * adversarial suite: see bench/README.md). After a job whose heap crossed RELEASE_ABOVE_BYTES, one full
 * collection runs once the answer has been sent, while the thread is idle; small jobs never pay for it.
 *
 * `gc` is reached through V8's --expose-gc set at run time for this isolate (node:v8 setFlagsFromString
 * plus a fresh context) because Node offers no other API for it and the flag cannot be passed to threads
 * on its own.
 */
import v8 from 'node:v8';
import vm from 'node:vm';

/** A thread idles at about 50 MB of heap with the engines loaded; more than this is a large job's leftovers. */
export const RELEASE_ABOVE_BYTES = 160 * 1024 * 1024;

let fullGc: (() => void) | undefined;

function collector(): () => void {
  if (!fullGc) {
    v8.setFlagsFromString('--expose-gc');
    fullGc = vm.runInNewContext('gc') as () => void;
  }
  return fullGc;
}

/** After a job: schedules one full collection when the heap is larger than a thread needs at rest. */
export function releaseHeapWhenIdle(): void {
  setImmediate(() => {
    if (v8.getHeapStatistics().total_heap_size > RELEASE_ABOVE_BYTES) collector()();
  });
}
