/**
 * Per-API-key concurrency limit across the document endpoints (docs/api.md § Common rules: at most 10 in flight per key).
 * In-process by default. With REDIS_URL, see RedisInFlightLimiter (shared across instances, in-process while
 * Redis is unreachable).
 */
import { randomBytes } from 'node:crypto';
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
 * The same limit shared by every instance through Redis (REDIS_URL). Each slot is a lease: a member of a
 * sorted set per key (`<prefix>slots:<key>`), named by the instance and a sequence number and scored by its
 * expiry in Redis's own clock (`TIME`, so instances' clocks do not matter). The admission script drops
 * expired members and admits only below the limit, atomically. Every instance renews the leases it holds
 * every `leaseMs / 3` in one pipelined round trip; a slot is given back by removing its member. So the
 * slots of an instance that died (SIGKILL, a lost node) are free again within `leaseMs` (10 s), and a
 * release or an admission lost to a Redis error costs a slot for at most that long, never longer.
 *
 * While Redis is unreachable (see src/coordination/redis.ts) slots are taken from an in-process limiter
 * instead, and each slot is given back where it was taken.
 */
const ACQUIRE = `
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

/** ARGV[1] = lease ms, ARGV[2..] = this instance's members of the key: pushed to now + lease if still there. */
const RENEW = `
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local expiry = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', expiry, ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1`;

const COUNT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')`;

type SlotCommands = {
  folioSlotAcquire(k: string, limit: number, leaseMs: number, member: string): Promise<number>;
  folioSlotRenew(k: string, leaseMs: number, ...members: string[]): Promise<number>;
  folioSlotCount(k: string): Promise<number>;
};

/** How long a slot outlives its instance's last renewal. */
export const SLOT_LEASE_MS = 10_000;

export class RedisInFlightLimiter implements InFlightLimiter {
  readonly coordination: Coordination;
  private readonly ownsCoordination: boolean;
  private readonly prefix: string;
  private readonly local: LocalInFlightLimiter;
  /** This instance's lease members in Redis, per key (the rest of its slots were taken locally). */
  private readonly held = new Map<string, string[]>();
  private readonly instance = randomBytes(8).toString('hex');
  private sequence = 0;
  private readonly heartbeat: NodeJS.Timeout;

  /** `source`: the instance's shared Coordination, or a Redis URL (the limiter then owns its connection). */
  constructor(
    source: Coordination | string,
    readonly limit: number,
    readonly leaseMs = SLOT_LEASE_MS,
  ) {
    if (typeof source === 'string') {
      this.coordination = new Coordination(source, pino({ level: 'warn' }));
      this.ownsCoordination = true;
    } else {
      this.coordination = source;
      this.ownsCoordination = false;
    }
    this.prefix = `${this.coordination.prefix}slots:`;
    this.local = new LocalInFlightLimiter(limit);
    const redis = this.coordination.redis as unknown as Partial<SlotCommands>;
    if (!redis.folioSlotAcquire) {
      this.coordination.redis.defineCommand('folioSlotAcquire', { numberOfKeys: 1, lua: ACQUIRE });
      this.coordination.redis.defineCommand('folioSlotRenew', { numberOfKeys: 1, lua: RENEW });
      this.coordination.redis.defineCommand('folioSlotCount', { numberOfKeys: 1, lua: COUNT });
    }
    this.heartbeat = setInterval(() => void this.renew(), Math.max(50, Math.floor(leaseMs / 3)));
    this.heartbeat.unref();
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
      const member = `${this.instance}:${++this.sequence}`;
      try {
        const ok = (await this.commands.folioSlotAcquire(this.prefix + key, this.limit, this.leaseMs, member)) === 1;
        if (ok) {
          const members = this.held.get(key);
          if (members) members.push(member);
          else this.held.set(key, [member]);
        }
        return ok;
      } catch (err) {
        // A timed-out admission may still have added the member: nobody renews it, so it lapses in leaseMs.
        this.coordination.commandFailed(err);
      }
    }
    return this.local.tryAcquire(key);
  }

  async release(key: string): Promise<void> {
    const members = this.held.get(key);
    const member = members?.pop();
    if (member === undefined) return this.local.release(key);
    if (members!.length === 0) this.held.delete(key);
    // No longer renewed from here on: if the removal fails (Redis down), the lease lapses on its own.
    if (!this.coordination.available) return;
    try {
      await this.coordination.redis.zrem(this.prefix + key, member);
    } catch (err) {
      this.coordination.commandFailed(err);
    }
  }

  async inFlight(key: string): Promise<number> {
    if (this.coordination.available) {
      try {
        return Number(await this.commands.folioSlotCount(this.prefix + key));
      } catch (err) {
        this.coordination.commandFailed(err);
      }
    }
    return this.local.inFlight(key);
  }

  async close(): Promise<void> {
    clearInterval(this.heartbeat);
    if (this.ownsCoordination) await this.coordination.close();
  }

  /** Pushes every lease this instance holds to now + leaseMs, in one pipelined round trip. */
  private async renew(): Promise<void> {
    if (this.held.size === 0 || !this.coordination.available) return;
    // On a pipeline a command only queues (it returns the pipeline); exec() answers for all of them.
    const pipeline = this.coordination.redis.pipeline() as unknown as {
      folioSlotRenew(k: string, leaseMs: number, ...members: string[]): unknown;
      exec(): Promise<Array<[Error | null, unknown]> | null>;
    };
    for (const [key, members] of this.held) pipeline.folioSlotRenew(this.prefix + key, this.leaseMs, ...members);
    try {
      const results = await pipeline.exec();
      const failed = results?.find(([err]) => err);
      if (failed) this.coordination.commandFailed(failed[0]);
    } catch (err) {
      this.coordination.commandFailed(err);
    }
  }
}
