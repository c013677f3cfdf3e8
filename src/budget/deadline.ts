/**
 * One deadline per request (REQUEST_TIMEOUT_MS): every stage of a document request — waiting for an engine
 * thread or an office worker, each conversion, each preview page run, each merge input — draws from the same
 * budget, so a request made of many slow stages cannot add their separate time limits up. Plain data and an
 * AbortSignal: engines and pools take it without knowing anything of HTTP.
 *
 * The stage limits that existed before (ENGINE_TIMEOUT_MS, OFFICE_TIMEOUT_MS, the preview's per-run limit)
 * stay as ceilings of one stage; a stage gets `deadline.cap(stageLimit)`, the smaller of the two.
 */
import { FolioError } from '../errors.js';

export class Deadline {
  /** Aborted when the budget is spent (reason: the CONVERSION_TIMEOUT FolioError). */
  readonly signal: AbortSignal;
  private readonly endsAt: number;

  private constructor(readonly totalMs: number) {
    this.endsAt = performance.now() + totalMs;
    const controller = new AbortController();
    this.signal = controller.signal;
    // unref'd: a deadline never keeps the process alive, and a finished request's timer costs nothing.
    const timer = setTimeout(() => controller.abort(this.error()), totalMs);
    timer.unref();
  }

  /** A deadline `ms` milliseconds from now. */
  static after(ms: number): Deadline {
    return new Deadline(Math.max(0, ms));
  }

  /** Milliseconds left (0 when spent). */
  remainingMs(): number {
    return Math.max(0, Math.floor(this.endsAt - performance.now()));
  }

  get expired(): boolean {
    return this.remainingMs() <= 0;
  }

  /** The time one stage may take: its own ceiling or what is left of the request, whichever is smaller. */
  cap(stageMs: number): number {
    return Math.min(stageMs, this.remainingMs());
  }

  /** Throws the request's 504 when the budget is spent; call it between stages. */
  check(stage?: string): void {
    if (this.expired) throw this.error(stage);
  }

  /** The answer for a spent budget: 504 CONVERSION_TIMEOUT naming the budget (and the stage when known). */
  error(stage?: string): FolioError {
    const where = stage ? ` (during ${stage})` : '';
    return new FolioError('CONVERSION_TIMEOUT', `The request did not finish within its ${formatSeconds(this.totalMs)} time budget${where}`);
  }

  /** True when `e` is this deadline's abort reason (so a caller can tell a spent budget from other aborts). */
  isReason(e: unknown): boolean {
    return this.signal.aborted && e === this.signal.reason;
  }
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
