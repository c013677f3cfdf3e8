/**
 * The memory limit from a container's cgroup (src/config/memory-limit.ts), against fake cgroup trees, and
 * the in-flight byte budget derived from it (INFLIGHT_BYTES_MB's default, MEMORY_LIMIT_MB).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { fakeCgroups } from './fake-cgroup.js';
import { MIN_IN_FLIGHT_BYTES, PROCESS_BASELINE_BYTES, defaultInFlightBytes, readMemoryLimit } from '../../src/config/memory-limit.js';
import { loadConfig } from '../../src/modules/config.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const cgroups = fakeCgroups('folio-memcg-');
afterAll(() => cgroups.remove());
const fake = cgroups.fake;

describe('cgroup v2 memory.max', () => {
  it('a byte count is the limit', () => {
    expect(readMemoryLimit({ ...fake({ 'memory.max': `${3584 * MiB}\n` }), total: 64 * GiB })).toEqual({ bytes: 3584 * MiB, source: 'cgroup2' });
  });
  it('"max" is no limit: the host memory', () => {
    expect(readMemoryLimit({ ...fake({ 'memory.max': 'max\n' }), total: 8 * GiB })).toEqual({ bytes: 8 * GiB, source: 'host' });
  });
  it('the smallest limit from the own cgroup up to the root wins', () => {
    const f = fake({ 'memory.max': 'max', 'kubepods/memory.max': `${4 * GiB}`, 'kubepods/pod1/memory.max': `${2 * GiB}` }, '0::/kubepods/pod1\n');
    expect(readMemoryLimit({ ...f, total: 64 * GiB })).toEqual({ bytes: 2 * GiB, source: 'cgroup2' });
  });
  it('a limit above the host memory is none', () => {
    expect(readMemoryLimit({ ...fake({ 'memory.max': `${128 * GiB}` }), total: 16 * GiB })).toEqual({ bytes: 16 * GiB, source: 'host' });
  });
  it('malformed content is ignored', () => {
    expect(readMemoryLimit({ ...fake({ 'memory.max': 'lots' }), total: 16 * GiB })).toEqual({ bytes: 16 * GiB, source: 'host' });
  });
});

describe('cgroup v1 memory.limit_in_bytes', () => {
  it('a byte count is the limit', () => {
    expect(readMemoryLimit({ ...fake({ 'memory/memory.limit_in_bytes': `${3 * GiB}\n` }, ''), total: 64 * GiB })).toEqual({
      bytes: 3 * GiB,
      source: 'cgroup1',
    });
  });
  it('the "unlimited" value (about 2^63) is no limit', () => {
    expect(readMemoryLimit({ ...fake({ 'memory/memory.limit_in_bytes': '9223372036854771712\n' }, ''), total: 24 * GiB })).toEqual({
      bytes: 24 * GiB,
      source: 'host',
    });
  });
  it('no cgroup files at all: the host memory', () => {
    expect(readMemoryLimit({ ...fake({}, ''), total: 24 * GiB })).toEqual({ bytes: 24 * GiB, source: 'host' });
  });
});

describe('the in-flight byte budget', () => {
  it("is half of what the idle process and the office workers' ceilings leave of a limit", () => {
    const pod = defaultInFlightBytes({ limitBytes: 3584 * MiB, limited: true, officeWorkers: 2, officeMemoryBytes: 1024 * MiB });
    expect(pod).toBe(Math.floor((3584 * MiB - PROCESS_BASELINE_BYTES - 2 * 1024 * MiB) / 2));
  });
  it('is a quarter of it without a limit (host memory is shared)', () => {
    const host = defaultInFlightBytes({ limitBytes: 24 * GiB, limited: false, officeWorkers: 2, officeMemoryBytes: 1536 * MiB });
    expect(host).toBe(Math.floor((24 * GiB - PROCESS_BASELINE_BYTES - 2 * 1536 * MiB) / 4));
  });
  it('never goes below the floor, even when the office ceilings take the whole limit', () => {
    expect(defaultInFlightBytes({ limitBytes: 2 * GiB, limited: true, officeWorkers: 4, officeMemoryBytes: 1024 * MiB })).toBe(MIN_IN_FLIGHT_BYTES);
  });
  it('INFLIGHT_BYTES_MB overrides it; MEMORY_LIMIT_MB sets the limit it is derived from', () => {
    expect(loadConfig({ INFLIGHT_BYTES_MB: '300' }).inFlightBytes).toBe(300 * MiB);
    const c = loadConfig({ MEMORY_LIMIT_MB: '3584', OFFICE_WORKERS: '2', OFFICE_MEMORY_MB: '1024' });
    expect(c.memoryLimitBytes).toBe(3584 * MiB);
    // Whole MB, as the setting is.
    expect(c.inFlightBytes).toBe(Math.floor((3584 * MiB - PROCESS_BASELINE_BYTES - 2048 * MiB) / 2 / MiB) * MiB);
  });
  it('bad values name the variable', () => {
    expect(() => loadConfig({ INFLIGHT_BYTES_MB: 'lots' })).toThrow(/INFLIGHT_BYTES_MB/);
    expect(() => loadConfig({ MEMORY_LIMIT_MB: '12' })).toThrow(/MEMORY_LIMIT_MB/);
  });
});
