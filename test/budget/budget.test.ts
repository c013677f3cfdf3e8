/**
 * The request budgets' two primitives (src/budget): a deadline that every stage draws from, and an output
 * budget counted while output is produced. Their use by the engines is tested in each capability's suite
 * and in test/amplification; here, what they promise on their own.
 */
import { describe, expect, it } from 'vitest';
import { Deadline, OutputBudget } from '../../src/budget/index.js';
import { FolioError } from '../../src/errors.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Deadline', () => {
  it('gives each stage the smaller of its own ceiling and what is left, and nothing once spent', async () => {
    const d = Deadline.after(200);
    expect(d.cap(50)).toBe(50);
    expect(d.cap(10_000)).toBeLessThanOrEqual(200);
    expect(d.expired).toBe(false);
    expect(() => d.check('a stage')).not.toThrow();
    await sleep(250);
    expect(d.remainingMs()).toBe(0);
    expect(d.cap(50)).toBe(0);
    expect(d.expired).toBe(true);
  });

  it('aborts its signal when spent, with the 504 naming the budget as the reason', async () => {
    const d = Deadline.after(100);
    expect(d.signal.aborted).toBe(false);
    await new Promise<void>((resolve) => d.signal.addEventListener('abort', () => resolve(), { once: true }));
    const reason = d.signal.reason as FolioError;
    expect(reason).toBeInstanceOf(FolioError);
    expect(reason.code).toBe('CONVERSION_TIMEOUT');
    expect(reason.status).toBe(504);
    expect(reason.message).toMatch(/0\.1 s time budget/);
    expect(d.isReason(reason)).toBe(true);
    expect(d.isReason(new Error('other'))).toBe(false);
  });

  it('check() throws the 504 naming the stage once the budget is spent', async () => {
    const d = Deadline.after(0);
    await sleep(5);
    let thrown: unknown;
    try {
      d.check('page run 3');
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(FolioError);
    expect((thrown as FolioError).message).toMatch(/during page run 3/);
  });
});

describe('OutputBudget', () => {
  it('counts what is produced and throws the 422 naming the limit the moment the total passes it', () => {
    const b = new OutputBudget(1024 * 1024, 'HTML');
    b.add(1024 * 1024 - 10);
    expect(b.fits(10)).toBe(true);
    expect(b.fits(11)).toBe(false);
    b.add(10);
    expect(b.usedBytes).toBe(1024 * 1024);
    let thrown: unknown;
    try {
      b.add(1);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(FolioError);
    expect((thrown as FolioError).status).toBe(422);
    expect((thrown as FolioError).code).toBe('UNPROCESSABLE_DOCUMENT');
    expect((thrown as FolioError).message).toMatch(/HTML would be larger than the 1 MB one request may produce \(OUTPUT_MAX_MB\)/);
  });
});
