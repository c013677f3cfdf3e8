/**
 * movableBuffers (src/http/body-buffer.ts): which buffers a route may move to an engine thread. Moving a
 * buffer of Node's shared pool would detach every other small Buffer in it, so only buffers a view covers
 * whole, or that readIntoBuffer allocated for one body or part, are listed — each once.
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { movableBuffers, readIntoBuffer } from '../../src/http/body-buffer.js';

describe('movableBuffers', () => {
  it('never lists a buffer of the shared pool, nor a view over part of someone else’s buffer', () => {
    const small = Buffer.from('a small pooled buffer');
    expect(small.buffer.byteLength).toBeGreaterThan(small.length);
    expect(movableBuffers(small)).toEqual([]);
    const big = new Uint8Array(100_000);
    expect(movableBuffers(big.subarray(10, 500))).toEqual([]);
    expect(movableBuffers(new Uint8Array(0))).toEqual([]);
  });

  it('lists a whole buffer once, however many views of it are passed', () => {
    const whole = new Uint8Array(50_000);
    expect(movableBuffers(whole, whole, undefined)).toEqual([whole.buffer]);
  });

  it('lists a part read into its request’s preallocated buffer (the view is shorter than the buffer)', async () => {
    const part = await readIntoBuffer(Readable.from([Buffer.from('%PDF-1.7 a small part')]), { capacity: 1000, limit: 10_000 });
    expect(part.buffer.byteLength).toBe(1000);
    expect(movableBuffers(part)).toEqual([part.buffer]);
    // Even a part of a few bytes: its buffer was allocated for it alone, outside the pool.
    const tiny = await readIntoBuffer(Readable.from([Buffer.from('x')]), { capacity: 10, limit: 100 });
    expect(movableBuffers(tiny)).toEqual([tiny.buffer]);
  });
});
