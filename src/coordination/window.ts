/**
 * Fixed-window request counters per client (register and verify, docs/api.md § Getting a key: per-client rate limits → 429).
 * In-process by default; with REDIS_URL the window lives in Redis (one key per client and window, counted
 * and given its expiry atomically by a Lua script), so every instance shares it. While Redis is
 * unreachable the in-process counter takes over (each instance then counts alone), and Redis is used again
 * as soon as it answers.
 */
import type { Coordination } from './redis.js';

export interface WindowLimiter {
  /** Seconds to wait when the client is over the limit, else 0 (and the hit is counted). */
  hit(client: string): Promise<number>;
  /**
   * Gives back a hit counted in the client's current window, for an attempt that failed on the server's
   * side (a 5xx): an outage must not leave its clients rate-limited after it ends.
   */
  undo(client: string): Promise<void>;
}

/** Fixed-window counters per client, pruned as windows pass. */
export class LocalWindowCounter implements WindowLimiter {
  private readonly hits = new Map<string, { start: number; count: number }>();
  constructor(
    private readonly windowMs: number,
    private readonly limit: number,
    private readonly now: () => number = Date.now,
  ) {}

  async hit(client: string): Promise<number> {
    return this.hitSync(client, this.now());
  }

  hitSync(client: string, now: number): number {
    if (this.hits.size > 100_000) {
      for (const [k, v] of this.hits) if (now - v.start >= this.windowMs) this.hits.delete(k);
    }
    const cur = this.hits.get(client);
    if (!cur || now - cur.start >= this.windowMs) {
      this.hits.set(client, { start: now, count: 1 });
      return 0;
    }
    if (cur.count >= this.limit) return Math.max(1, Math.ceil((cur.start + this.windowMs - now) / 1000));
    cur.count++;
    return 0;
  }

  async undo(client: string): Promise<void> {
    const cur = this.hits.get(client);
    if (cur && this.now() - cur.start < this.windowMs && cur.count > 0) cur.count--;
  }
}

/**
 * KEYS[1] = window key, ARGV[1] = limit, ARGV[2] = window in ms. Returns 0 when counted within the limit,
 * else the milliseconds left in the window. A key without expiry (never expected) is given one.
 */
const WINDOW_HIT = `
local n = redis.call('INCR', KEYS[1])
local ttl
if n == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
else
  ttl = redis.call('PTTL', KEYS[1])
  if ttl < 0 then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    ttl = tonumber(ARGV[2])
  end
end
if n > tonumber(ARGV[1]) then return ttl end
return 0`;

/** KEYS[1] = window key: one hit fewer, never below zero, the expiry unchanged (a gone key stays gone). */
const WINDOW_UNDO = `
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n > 0 then redis.call('DECR', KEYS[1]) end
return 0`;

type WindowCommand = {
  folioWindowHit(key: string, limit: number, windowMs: number): Promise<number>;
  folioWindowUndo(key: string): Promise<number>;
};

export class SharedWindowCounter implements WindowLimiter {
  private readonly local: LocalWindowCounter;

  constructor(
    private readonly coordination: Coordination,
    /** Names the window in Redis keys (`<prefix>window:<name>:<client>`). */
    private readonly name: string,
    private readonly windowMs: number,
    private readonly limit: number,
    now: () => number = Date.now,
  ) {
    this.local = new LocalWindowCounter(windowMs, limit, now);
    if (!(coordination.redis as unknown as Partial<WindowCommand>).folioWindowHit) {
      coordination.redis.defineCommand('folioWindowHit', { numberOfKeys: 1, lua: WINDOW_HIT });
    }
    if (!(coordination.redis as unknown as Partial<WindowCommand>).folioWindowUndo) {
      coordination.redis.defineCommand('folioWindowUndo', { numberOfKeys: 1, lua: WINDOW_UNDO });
    }
  }

  async hit(client: string): Promise<number> {
    if (this.coordination.available) {
      try {
        const ms = await (this.coordination.redis as unknown as WindowCommand).folioWindowHit(
          `${this.coordination.prefix}window:${this.name}:${client}`,
          this.limit,
          this.windowMs,
        );
        return ms > 0 ? Math.max(1, Math.ceil(ms / 1000)) : 0;
      } catch (err) {
        this.coordination.commandFailed(err);
      }
    }
    return this.local.hit(client);
  }

  async undo(client: string): Promise<void> {
    if (this.coordination.available) {
      try {
        await (this.coordination.redis as unknown as WindowCommand).folioWindowUndo(`${this.coordination.prefix}window:${this.name}:${client}`);
        return;
      } catch (err) {
        this.coordination.commandFailed(err);
      }
    }
    await this.local.undo(client);
  }
}
