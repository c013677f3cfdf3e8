/**
 * Per-API-key concurrency limit across the document endpoints (CONTRACT §0: at most 10 in flight per key).
 * In-process by default. With REDIS_URL, see RedisInFlightLimiter (shared across instances).
 */
export interface InFlightLimiter {
  /** Returns true and takes a slot when the key has one free. */
  tryAcquire(key: string): Promise<boolean>;
  release(key: string): Promise<void>;
  inFlight(key: string): Promise<number>;
  close(): Promise<void>;
}

export class LocalInFlightLimiter implements InFlightLimiter {
  private readonly counts = new Map<string, number>();
  constructor(readonly limit: number) {}

  async tryAcquire(key: string): Promise<boolean> {
    const n = this.counts.get(key) ?? 0;
    if (n >= this.limit) return false;
    this.counts.set(key, n + 1);
    return true;
  }

  async release(key: string): Promise<void> {
    const n = (this.counts.get(key) ?? 0) - 1;
    if (n <= 0) this.counts.delete(key);
    else this.counts.set(key, n);
  }

  async inFlight(key: string): Promise<number> {
    return this.counts.get(key) ?? 0;
  }

  async close(): Promise<void> {}
}
