/**
 * Per-API-key concurrency limit across the document endpoints (CONTRACT §0: at most 10 in flight per key).
 * In-process by default. With REDIS_URL, see RedisInFlightLimiter (shared across instances, in-process while
 * Redis is unreachable).
 */
import pino from 'pino';
import { Coordination } from '../coordination/redis.js';

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
 *
 * While Redis is unreachable (see src/coordination/redis.ts) slots are taken from an in-process limiter
 * instead, and each slot is given back where it was taken. A Redis slot whose release failed is released
 * again when Redis is back (the script never lets a counter go below zero), so an outage leaks no slot.
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

type SlotCommands = {
  folioAcquire(k: string, l: number, t: number): Promise<number>;
  folioRelease(k: string): Promise<number>;
};

/** Releases kept for a Redis that comes back; beyond this many the counters' expiry takes care of them. */
const MAX_PENDING_RELEASES = 10_000;

export class RedisInFlightLimiter implements InFlightLimiter {
  readonly coordination: Coordination;
  private readonly ownsCoordination: boolean;
  private readonly prefix: string;
  private readonly local: LocalInFlightLimiter;
  /** Slots of each key taken in Redis by this instance (the rest were taken locally). */
  private readonly redisHeld = new Map<string, number>();
  private readonly pendingReleases: string[] = [];
  private readonly unsubscribe: () => void;

  /** `source`: the instance's shared Coordination, or a Redis URL (the limiter then owns its connection). */
  constructor(
    source: Coordination | string,
    readonly limit: number,
    private readonly ttlMs = 10 * 60_000,
  ) {
    if (typeof source === 'string') {
      this.coordination = new Coordination(source, pino({ level: 'warn' }));
      this.ownsCoordination = true;
    } else {
      this.coordination = source;
      this.ownsCoordination = false;
    }
    this.prefix = `${this.coordination.prefix}inflight:`;
    this.local = new LocalInFlightLimiter(limit);
    const redis = this.coordination.redis as unknown as Partial<SlotCommands>;
    if (!redis.folioAcquire) {
      this.coordination.redis.defineCommand('folioAcquire', { numberOfKeys: 1, lua: ACQUIRE });
      this.coordination.redis.defineCommand('folioRelease', { numberOfKeys: 1, lua: RELEASE });
    }
    this.unsubscribe = this.coordination.onStateChange((up) => {
      if (up) void this.flushPendingReleases();
    });
  }

  private get commands(): SlotCommands {
    return this.coordination.redis as unknown as SlotCommands;
  }

  /** Resolves once Redis is usable (tests and start-up); false after `timeoutMs`. */
  ready(timeoutMs = 5000): Promise<boolean> {
    return this.coordination.ready(timeoutMs);
  }

  async tryAcquire(key: string): Promise<boolean> {
    if (this.coordination.available) {
      try {
        const ok = (await this.commands.folioAcquire(this.prefix + key, this.limit, this.ttlMs)) === 1;
        if (ok) this.redisHeld.set(key, (this.redisHeld.get(key) ?? 0) + 1);
        return ok;
      } catch (err) {
        // A timed-out INCR may still have counted in Redis: its counter expires after ttlMs at worst.
        this.coordination.commandFailed(err);
      }
    }
    return this.local.tryAcquire(key);
  }

  async release(key: string): Promise<void> {
    const held = this.redisHeld.get(key) ?? 0;
    if (held === 0) return this.local.release(key);
    if (held === 1) this.redisHeld.delete(key);
    else this.redisHeld.set(key, held - 1);
    if (!this.coordination.available) {
      this.keepRelease(key);
      return;
    }
    try {
      await this.commands.folioRelease(this.prefix + key);
    } catch (err) {
      this.coordination.commandFailed(err);
      this.keepRelease(key);
    }
  }

  async inFlight(key: string): Promise<number> {
    if (this.coordination.available) {
      try {
        return Number((await this.coordination.redis.get(this.prefix + key)) ?? 0);
      } catch (err) {
        this.coordination.commandFailed(err);
      }
    }
    return this.local.inFlight(key);
  }

  async close(): Promise<void> {
    this.unsubscribe();
    if (this.ownsCoordination) await this.coordination.close();
  }

  private keepRelease(key: string): void {
    if (this.pendingReleases.length < MAX_PENDING_RELEASES) this.pendingReleases.push(key);
  }

  private async flushPendingReleases(): Promise<void> {
    while (this.pendingReleases.length > 0 && this.coordination.available) {
      const key = this.pendingReleases[0]!;
      try {
        await this.commands.folioRelease(this.prefix + key);
        this.pendingReleases.shift();
      } catch (err) {
        this.coordination.commandFailed(err);
        return;
      }
    }
  }
}
