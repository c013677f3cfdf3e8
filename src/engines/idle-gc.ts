/**
 * A full garbage collection once a thread has gone idle after large work, so the memory of a burst goes
 * back. V8 collects when a thread allocates; a thread that goes idle right after a burst (an engine thread
 * after its last 24 MB job, the body thread after its last 32 MB JSON body, the main thread after the last
 * upload) allocates nothing more and keeps that garbage — the document copies, their ArrayBuffers outside
 * the heap, the grown heap pages — for minutes: the API stayed at 3.8 GB for more than ten minutes after
 * a burst of uploads (issue 24). Measured in bench/pressure.ts and docs/operations.md ("Memory after a
 * burst").
 *
 * `gc` is not exposed without `--expose-gc`, which cannot be given to worker threads (execArgv refuses V8
 * options) and would have to be on every start command; it is turned on from here the documented way V8
 * flags are set at run time, once, and taken from a fresh context, where V8 installs it.
 */
import v8 from 'node:v8';
import vm from 'node:vm';

let gc: (() => void) | undefined;
let timer: NodeJS.Timeout | undefined;

function fullGc(): void {
  if (!gc) {
    v8.setFlagsFromString('--expose-gc');
    gc = vm.runInNewContext('gc') as () => void;
  }
  gc();
}

/**
 * Collects once this thread has been idle for `idleMs` (each call restarts the wait, so a busy thread is
 * never interrupted; it collects under its own allocation pressure anyway). The timer does not keep the
 * thread or process alive.
 */
export function collectWhenIdle(idleMs = 1000): void {
  if (timer) clearTimeout(timer);
  timer = setTimeout(() => {
    timer = undefined;
    fullGc();
  }, idleMs);
  timer.unref();
}
