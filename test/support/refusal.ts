/** The FolioError a call throws (or a promise rejects with); the test fails when it succeeds or throws something else. */
import { expect } from 'vitest';
import { FolioError } from '../../src/errors.js';

export function refusal(fn: () => unknown): FolioError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(FolioError);
    return e as FolioError;
  }
  throw new Error('expected a FolioError');
}

/** `refusal` for asynchronous work: a promise, or a function that returns one (or throws). */
export async function rejection(p: Promise<unknown> | (() => unknown)): Promise<FolioError> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    expect(e).toBeInstanceOf(FolioError);
    return e as FolioError;
  }
  throw new Error('expected a FolioError');
}
