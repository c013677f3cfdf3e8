/**
 * Per-API-key concurrency limit across the document endpoints (CONTRACT §0: at most 10 in flight per key).
 * In-process by default. With REDIS_URL, see RedisInFlightLimiter (shared across instances).
 */
import { Redis } from 'ioredis';

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

/**
 * The same limit shared by every instance through Redis (REDIS_URL). A slot is a counter per key, taken and
 * given back atomically by Lua scripts. The counter expires when no request touched it for `ttlMs`, so
 * slots held by an instance that crashed come back on their own.
 */
const ACQUIRE = `
local n = redis.call('INCR', KEYS[1])
if n > tonumber(ARGV[1]) then
  redis.call('DECR', KEYS[1])
  return 0
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

const RELEASE = `
local n = redis.call('DECR', KEYS[1])
if n <= 0 then redis.call('DEL', KEYS[1]) end
return n`;

export class RedisInFlightLimiter implements InFlightLimiter {
  private readonly redis: Redis;

  constructor(
    url: string,
    readonly limit: number,
    private readonly ttlMs = 10 * 60_000,
    private readonly prefix = 'folio:inflight:',
  ) {
    this.redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: true });
    this.redis.defineCommand('folioAcquire', { numberOfKeys: 1, lua: ACQUIRE });
    this.redis.defineCommand('folioRelease', { numberOfKeys: 1, lua: RELEASE });
  }

  async tryAcquire(key: string): Promise<boolean> {
    const r = await (this.redis as unknown as { folioAcquire(k: string, l: number, t: number): Promise<number> }).folioAcquire(
      this.prefix + key,
      this.limit,
      this.ttlMs,
    );
    return r === 1;
  }

  async release(key: string): Promise<void> {
    await (this.redis as unknown as { folioRelease(k: string): Promise<number> }).folioRelease(this.prefix + key);
  }

  async inFlight(key: string): Promise<number> {
    return Number((await this.redis.get(this.prefix + key)) ?? 0);
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
