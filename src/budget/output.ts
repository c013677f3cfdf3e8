/**
 * What one request may produce (OUTPUT_MAX_MB): counted while the output is written, not measured after, so
 * an amplifying document (one picture referenced a thousand times, pages inheriting a large resource) is
 * stopped at the limit with a 422 instead of building a gigabyte answer. The limit crosses thread boundaries
 * as a plain number; each engine builds its own OutputBudget from it.
 */
import { FolioError } from '../errors.js';

export class OutputBudget {
  private used = 0;

  /** `what` names the output in the error ("HTML", "merged PDF", "page images"). */
  constructor(
    readonly limitBytes: number,
    readonly what = 'output',
  ) {}

  /** Bytes counted so far. */
  get usedBytes(): number {
    return this.used;
  }

  /** Counts `n` more bytes; throws the 422 when the total passes the limit. */
  add(n: number): void {
    this.used += n;
    if (this.used > this.limitBytes) throw outputTooLarge(this.limitBytes, this.what);
  }

  /** Whether `n` more bytes would still fit (nothing is counted). */
  fits(n: number): boolean {
    return this.used + n <= this.limitBytes;
  }
}

/** 422 UNPROCESSABLE_DOCUMENT naming the limit: the same answer from every engine. */
export function outputTooLarge(limitBytes: number, what = 'output'): FolioError {
  const mb = Math.round((limitBytes / (1024 * 1024)) * 10) / 10;
  return new FolioError('UNPROCESSABLE_DOCUMENT', `The ${what} would be larger than the ${mb} MB one request may produce (OUTPUT_MAX_MB)`, {
    details: [{ field: 'file', issue: `output over ${mb} MB` }],
  });
}
