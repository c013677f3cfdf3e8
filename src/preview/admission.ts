/**
 * Turns for page renders when no office pool shares its admission (an API started without LibreOffice, the
 * CLI's local mode): a counting semaphore with a FIFO queue. With an office pool, its acquireRenderSlot is
 * used instead, so renders and conversions together stay within OFFICE_WORKERS.
 */
import { AdmissionQueue, Semaphore, type Deadline } from '../budget/index.js';

export interface RenderAdmission {
  /** Resolves with the release of one turn (call it once, when the render's process has exited). */
  acquireRenderSlot(run?: { signal?: AbortSignal; deadline?: Deadline }): Promise<() => void>;
}

/** `slots` turns through the shared admission (src/budget/queue.ts); waiting is bounded by the deadline, not by a count. */
export function localAdmission(slots: number): RenderAdmission {
  const n = Math.max(1, slots);
  const turns = new Semaphore(n, new AdmissionQueue({ queueSize: Infinity, slots: n, initialJobMs: 1000, weight: 0.2 }));
  return {
    acquireRenderSlot: (run = {}) =>
      turns.acquire({ ...run, stage: 'waiting for a render slot', fullMessage: 'Too many renders are waiting; retry later' }),
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
