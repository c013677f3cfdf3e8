/** GroupCommitter: what is submitted while a write is in flight goes into the next single write. */
import { describe, expect, it } from 'vitest';
import { GroupCommitter } from '../../src/telemetry/group-commit.js';

/** A write whose completion the test controls. */
function controlledWriter() {
  const batches: number[][] = [];
  const pending: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];
  const write = (items: number[]) =>
    new Promise<void>((resolve, reject) => {
      batches.push(items);
      pending.push({ resolve, reject });
    });
  return { batches, pending, write };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('GroupCommitter', () => {
  it('writes what arrives in one turn together, and what arrives during a write in the next one', async () => {
    const w = controlledWriter();
    const sizes: number[] = [];
    const c = new GroupCommitter<number>(w.write, 100, (n) => sizes.push(n));
    const first = [1, 2, 3].map((i) => c.submit(i));
    await tick();
    expect(w.batches).toEqual([[1, 2, 3]]);
    const second = [4, 5, 6, 7].map((i) => c.submit(i));
    await tick();
    expect(w.batches).toHaveLength(1); // single flight: nothing more until the first commit ends
    w.pending[0]!.resolve();
    await Promise.all(first);
    await tick();
    expect(w.batches).toEqual([
      [1, 2, 3],
      [4, 5, 6, 7],
    ]);
    w.pending[1]!.resolve();
    await Promise.all(second);
    expect(c.commits).toBe(2);
    expect(sizes).toEqual([3, 4]);
  });

  it('settles each waiter with its own batch: a failed write rejects only that batch', async () => {
    const w = controlledWriter();
    const c = new GroupCommitter<number>(w.write);
    const a = c.submit(1);
    await tick();
    const b = c.submit(2);
    w.pending[0]!.reject(new Error('disk full'));
    await expect(a).rejects.toThrow('disk full');
    await tick();
    w.pending[1]!.resolve();
    await expect(b).resolves.toBeUndefined();
    expect(c.commits).toBe(1);
  });

  it('caps a batch at maxBatch and allows maxInFlight writes at once', async () => {
    const w = controlledWriter();
    const c = new GroupCommitter<number>(w.write, 2, undefined, 2);
    const all = [1, 2, 3, 4, 5].map((i) => c.submit(i));
    await tick();
    await tick();
    expect(w.batches).toEqual([
      [1, 2],
      [3, 4],
    ]);
    w.pending[0]!.resolve();
    await tick();
    await tick();
    expect(w.batches).toEqual([[1, 2], [3, 4], [5]]);
    w.pending[1]!.resolve();
    w.pending[2]!.resolve();
    await Promise.all(all);
    await c.drain();
    expect(c.commits).toBe(3);
  });

  it('retries a batch refused for its items in halves: only the bad item fails, every other one is written', async () => {
    class Refused extends Error {}
    const written: number[][] = [];
    // A store that refuses any write holding 13, as PostgreSQL refuses a whole batch for one bad value.
    const write = async (items: number[]) => {
      if (items.includes(13)) throw new Refused('value 13 refused');
      written.push(items);
    };
    const c = new GroupCommitter<number>(write, 100, undefined, 1, (e) => e instanceof Refused);
    const results = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => c.submit(i)));
    expect(results.filter((r) => r.status === 'rejected').length).toBe(1);
    expect(results[13]!.status).toBe('rejected');
    expect(written.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i).filter((i) => i !== 13));
    // Halving: about 2·log2(40) writes, not one per item.
    expect(written.length).toBeLessThanOrEqual(12);
  });

  it("does not split a batch whose failure is the store's: every waiter gets the error", async () => {
    let writes = 0;
    const c = new GroupCommitter<number>(
      async () => {
        writes++;
        throw new Error('database unreachable');
      },
      100,
      undefined,
      1,
      () => false,
    );
    const results = await Promise.allSettled([1, 2, 3, 4].map((i) => c.submit(i)));
    expect(results.every((r) => r.status === 'rejected')).toBe(true);
    expect(writes).toBe(1);
  });
});
