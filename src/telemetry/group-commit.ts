/**
 * Group commit: requests that arrive while a commit is running (or within the same event-loop turn) are
 * written together in the next single transaction. One fsync then acknowledges many events, which is what
 * makes durable-before-202 affordable at thousands of requests per second. Every waiter learns the outcome
 * of the transaction that carried its items.
 *
 * One request's rows must never fail another's: when a batch fails with an error that `splittable` says
 * belongs to the rows (not to the store: an outage fails the whole batch with 503, as retrying would only
 * fail again), the batch is split in halves and each half written again, down to single items, and each
 * waiter learns the outcome of the smallest write that carried it. Halving rather than one write per item
 * finds one bad item among n in about 2·log2(n) writes instead of n, so a poisoned batch of 2,000 costs
 * some twenty transactions, not 2,000. Retrying is safe because the store's writes are idempotent per item
 * (store.ts: uid columns with ON CONFLICT DO NOTHING), so nothing of a failed write is counted twice.
 */
export class GroupCommitter<T> {
  private pending: Array<{ item: T; resolve: () => void; reject: (e: unknown) => void }> = [];
  private running = 0;
  private scheduled = false;
  /** Number of transactions committed so far (exported as a metric; shows the batching at work). */
  commits = 0;

  constructor(
    private readonly write: (items: T[]) => Promise<unknown>,
    private readonly maxBatch = 2000,
    private readonly onCommit?: (size: number) => void,
    /** Transactions allowed in flight at once: 1 for SQLite's single writer, a few for a PostgreSQL pool. */
    private readonly maxInFlight = 1,
    /** True when a failed write's error is about its items (retry them in smaller writes), not the store. */
    private readonly splittable: (e: unknown) => boolean = () => false,
  ) {}

  submit(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.running >= this.maxInFlight || this.scheduled) return;
    this.scheduled = true;
    // setImmediate: let the requests already parsed in this turn join the batch.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.running >= this.maxInFlight || this.pending.length === 0) return;
    this.running++;
    const batch = this.pending.splice(0, this.maxBatch);
    // Room for another transaction (maxInFlight > 1) and items left beyond maxBatch: start it too.
    if (this.pending.length > 0) this.schedule();
    try {
      await this.writeSplitting(batch);
    } finally {
      this.running--;
      if (this.pending.length > 0) this.schedule();
    }
  }

  /** Writes `batch`; on a splittable failure, its halves in turn; settles every waiter. */
  private async writeSplitting(batch: Array<{ item: T; resolve: () => void; reject: (e: unknown) => void }>): Promise<void> {
    try {
      await this.write(batch.map((b) => b.item));
      this.commits++;
      this.onCommit?.(batch.length);
      for (const b of batch) b.resolve();
    } catch (e) {
      if (batch.length > 1 && this.splittable(e)) {
        const half = Math.ceil(batch.length / 2);
        await this.writeSplitting(batch.slice(0, half));
        await this.writeSplitting(batch.slice(half));
        return;
      }
      for (const b of batch) b.reject(e);
    }
  }

  /** Resolves once everything submitted so far has been written (or failed). */
  async drain(): Promise<void> {
    while (this.pending.length > 0 || this.running > 0 || this.scheduled) {
      await new Promise((r) => setTimeout(r, 5));
    }
  }
}
