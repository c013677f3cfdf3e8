/**
 * Turns for page renders when no office pool shares its admission (an API started without LibreOffice, the
 * CLI's local mode): a counting semaphore with a FIFO queue. With an office pool, its acquireRenderSlot is
 * used instead, so renders and conversions together stay within OFFICE_WORKERS.
 */
import type { Deadline } from '../budget/index.js';
import { FolioError } from '../errors.js';

export interface RenderAdmission {
  /** Resolves with the release of one turn (call it once, when the render's process has exited). */
  acquireRenderSlot(run?: { signal?: AbortSignal; deadline?: Deadline }): Promise<() => void>;
}

export function localAdmission(slots: number): RenderAdmission {
  let free = Math.max(1, slots);
  const waiters: Array<() => void> = [];
  const release = () => {
    const next = waiters.shift();
    if (next) next();
    else free++;
  };
  return {
    acquireRenderSlot(run = {}) {
      const once = () => {
        let done = false;
        return () => {
          if (done) return;
          done = true;
          release();
        };
      };
      if (free > 0) {
        free--;
        return Promise.resolve(once());
      }
      return new Promise((resolve, reject) => {
        const grant = () => {
          cleanup();
          resolve(once());
        };
        const fail = (e: Error) => {
          cleanup();
          const i = waiters.indexOf(grant);
          if (i >= 0) waiters.splice(i, 1);
          reject(e);
        };
        const onAbort = () => fail(new FolioError('SERVICE_UNAVAILABLE', 'The request was abandoned by the client', { retryAfter: 1 }));
        const onDeadline = () => fail(run.deadline!.error('waiting for a render slot'));
        const cleanup = () => {
          run.signal?.removeEventListener('abort', onAbort);
          run.deadline?.signal.removeEventListener('abort', onDeadline);
        };
        if (run.signal?.aborted) return onAbort();
        if (run.deadline?.expired) return onDeadline();
        run.signal?.addEventListener('abort', onAbort, { once: true });
        run.deadline?.signal.addEventListener('abort', onDeadline, { once: true });
        waiters.push(grant);
      });
    },
  };
}

const locals = new Map<number, RenderAdmission>();

/**
 * The admission renders take their turns from: the office pool's when there is one (shared with the
 * conversions), else one process-wide semaphore of `slots` turns.
 */
export function renderAdmission(office: Partial<RenderAdmission> | undefined, slots: number): RenderAdmission {
  if (office?.acquireRenderSlot) return office as RenderAdmission;
  let local = locals.get(slots);
  if (!local) locals.set(slots, (local = localAdmission(slots)));
  return local;
}
