/**
 * A hit given back (`WindowLimiter.undo`, used for registers that failed with a 5xx) frees its place in the
 * client's window, in process and in Redis (the Lua script), and never goes below zero nor touches another
 * client. The chaos suite (test/chaos/edges.test.ts) shows the effect from outside during a database outage.
 */
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { Coordination } from '../../src/coordination/redis.js';
import { LocalWindowCounter, SharedWindowCounter, type WindowLimiter } from '../../src/coordination/window.js';
import { REDIS_URL, redisReachable } from '../support/redis.js';

const redisUp = await redisReachable('the shared window undo test');

async function checkUndo(limiter: WindowLimiter, limit: number) {
  const client = `c-${randomBytes(4).toString('hex')}`;
  for (let i = 0; i < limit; i++) expect(await limiter.hit(client)).toBe(0);
  expect(await limiter.hit(client)).toBeGreaterThan(0);
  await limiter.undo(client);
  await limiter.undo(client);
  // Two places freed (the refused hit above may have been counted too, in Redis: one more undo covers it).
  await limiter.undo(client);
  expect(await limiter.hit(client)).toBe(0);
  expect(await limiter.hit(client)).toBe(0);
  // Another client is untouched; undo on an empty window stays at zero.
  const other = `o-${randomBytes(4).toString('hex')}`;
  await limiter.undo(other);
  for (let i = 0; i < limit; i++) expect(await limiter.hit(other)).toBe(0);
  expect(await limiter.hit(other)).toBeGreaterThan(0);
}

describe('giving a window hit back', () => {
  it('in process', async () => {
    await checkUndo(new LocalWindowCounter(60_000, 3), 3);
  });

  describe.skipIf(!redisUp)('through Redis', () => {
    const coordination = new Coordination(REDIS_URL, pino({ level: 'silent' }), { keyPrefix: `folio-test-undo-${randomBytes(4).toString('hex')}:` });
    afterAll(async () => {
      await coordination.close();
    });

    it('shared by every instance', async () => {
      expect(await coordination.ready(3000)).toBe(true);
      await checkUndo(new SharedWindowCounter(coordination, 'register', 60_000, 3), 3);
    });
  });
});
