/**
 * In-flight slots are leases (issue 14): a replica that holds slots keeps them for as long as it lives (its
 * heartbeat renews them past several lease periods), and when it is SIGKILLed its slots are free again
 * within the lease, not after the key's quiet expiry. The holder is a real separate process
 * (fixtures/hold-slots.ts) on the machine's Redis, under a prefix of this run's own.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { Coordination } from '../../src/coordination/redis.js';
import { RedisInFlightLimiter } from '../../src/http/in-flight.js';
import { REDIS_URL, redisReachable } from '../support/redis.js';

const redisUp = await redisReachable('the slot lease suite');
const LEASE_MS = 1500;
const prefix = `folio-test-leases-${process.pid}-${Date.now()}:`;

describe.skipIf(!redisUp)('in-flight slots: leases renewed by their holder, freed when it dies', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  function holder(key: string, count: number): Promise<{ child: ChildProcess; held: number }> {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(import.meta.dirname, 'fixtures/hold-slots.ts'), REDIS_URL, prefix, key, String(count), String(LEASE_MS)],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    cleanups.push(() => void child.kill('SIGKILL'));
    return new Promise((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d) => {
        out += d;
        const m = /held (\d+)/.exec(out);
        if (m) resolve({ child, held: Number(m[1]) });
      });
      child.once('exit', (code) => reject(new Error(`holder exited ${code}`)));
    });
  }

  it('a live holder keeps its slots; a SIGKILLed one loses them within the lease', async () => {
    const coordination = new Coordination(REDIS_URL, pino({ level: 'silent' }), { keyPrefix: prefix });
    const limiter = new RedisInFlightLimiter(coordination, 10, LEASE_MS);
    cleanups.push(async () => {
      await limiter.close();
      await coordination.close();
    });
    expect(await coordination.ready()).toBe(true);

    const { child, held } = await holder('busy-key', 10);
    expect(held).toBe(10);
    expect(await limiter.inFlight('busy-key')).toBe(10);
    expect(await limiter.tryAcquire('busy-key')).toBe(false);

    // Three lease periods later the live holder still has all ten: its heartbeat renewed them.
    await new Promise((r) => setTimeout(r, 3 * LEASE_MS));
    expect(await limiter.inFlight('busy-key')).toBe(10);
    expect(await limiter.tryAcquire('busy-key')).toBe(false);

    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    const killedAt = Date.now();
    let admitted = 0;
    while (admitted < 10 && Date.now() - killedAt < LEASE_MS + 3000) {
      if (await limiter.tryAcquire('busy-key')) admitted++;
      else await new Promise((r) => setTimeout(r, 50));
    }
    // All ten come back (the dead holder's leases lapsed), and not one more.
    expect(admitted).toBe(10);
    expect(Date.now() - killedAt).toBeLessThan(LEASE_MS + 3000);
    expect(await limiter.tryAcquire('busy-key')).toBe(false);
    for (let i = 0; i < 10; i++) await limiter.release('busy-key');
    expect(await limiter.inFlight('busy-key')).toBe(0);
  }, 30_000);

  it('a slot whose release was lost lapses after the lease instead of leaking', async () => {
    const coordination = new Coordination(REDIS_URL, pino({ level: 'silent' }), { keyPrefix: prefix });
    const limiter = new RedisInFlightLimiter(coordination, 2, LEASE_MS);
    cleanups.push(async () => {
      await limiter.close();
      await coordination.close();
    });
    expect(await coordination.ready()).toBe(true);
    expect(await limiter.tryAcquire('lost')).toBe(true);
    expect(await limiter.tryAcquire('lost')).toBe(true);
    // The member is forgotten locally (as when the ZREM fails) while still in Redis.
    const members = (limiter as unknown as { held: Map<string, string[]> }).held.get('lost')!;
    members.pop();
    expect(await limiter.tryAcquire('lost')).toBe(false);
    await new Promise((r) => setTimeout(r, LEASE_MS + 500));
    // The kept slot was renewed, the forgotten one lapsed: one slot free again.
    expect(await limiter.inFlight('lost')).toBe(1);
    expect(await limiter.tryAcquire('lost')).toBe(true);
    await limiter.release('lost');
    await limiter.release('lost');
    expect(await limiter.inFlight('lost')).toBe(0);
  }, 20_000);
});
