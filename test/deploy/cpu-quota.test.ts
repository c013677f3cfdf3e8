/**
 * The usable CPU count from a container's CPU quota (src/config/cpu-quota.ts), against fake cgroup trees.
 */
import os from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeCgroups } from './fake-cgroup.js';
import { readCpuQuota, usableCpus } from '../../src/config/cpu-quota.js';
import { loadConfig } from '../../src/modules/config.js';

const cgroups = fakeCgroups('folio-cgroup-');
afterAll(() => cgroups.remove());
const fake = cgroups.fake;

describe('cgroup v2 cpu.max', () => {
  it('"max 100000" is no limit: the available CPUs', () => {
    expect(readCpuQuota({ ...fake({ 'cpu.max': 'max 100000\n' }), available: 8 })).toEqual({ cpus: 8, source: 'host' });
  });
  it('"200000 100000" is 2 CPUs', () => {
    expect(readCpuQuota({ ...fake({ 'cpu.max': '200000 100000\n' }), available: 16 })).toEqual({
      cpus: 2,
      quota: 2,
      source: 'cgroup2',
    });
  });
  it('a fractional quota is floored, and never below 1', () => {
    expect(usableCpus({ ...fake({ 'cpu.max': '250000 100000' }), available: 16 })).toBe(2);
    expect(usableCpus({ ...fake({ 'cpu.max': '50000 100000' }), available: 16 })).toBe(1);
    expect(usableCpus({ ...fake({ 'cpu.max': '1000 100000' }), available: 16 })).toBe(1);
  });
  it('a quota above the available CPUs is capped by them', () => {
    expect(usableCpus({ ...fake({ 'cpu.max': '800000 100000' }), available: 2 })).toBe(2);
  });
  it('a period other than 100 ms is honoured', () => {
    expect(usableCpus({ ...fake({ 'cpu.max': '150000 50000' }), available: 16 })).toBe(3);
  });
  it("the process's own cgroup and its ancestors are read; the smallest quota wins", () => {
    const opts = fake(
      { 'cpu.max': 'max 100000', 'kubepods/cpu.max': '400000 100000', 'kubepods/pod1/cpu.max': '300000 100000' },
      '0::/kubepods/pod1\n',
    );
    expect(readCpuQuota({ ...opts, available: 32 })).toEqual({ cpus: 3, quota: 3, source: 'cgroup2' });
    const parentTighter = fake({ 'kubepods/cpu.max': '100000 100000', 'kubepods/pod1/cpu.max': 'max 100000' }, '0::/kubepods/pod1\n');
    expect(usableCpus({ ...parentTighter, available: 32 })).toBe(1);
  });
  it('malformed content falls back to the available CPUs', () => {
    for (const content of ['', 'abc 100000', '-5 100000', '200000 0', '1e5 100000']) {
      expect(usableCpus({ ...fake({ 'cpu.max': content }), available: 6 })).toBe(6);
    }
  });
  it('a path with .. in /proc/self/cgroup is not followed', () => {
    const opts = fake({ 'cpu.max': '200000 100000' }, '0::/../../etc\n');
    expect(usableCpus({ ...opts, available: 8 })).toBe(2);
  });
});

describe('cgroup v1 CFS quota', () => {
  it('cfs_quota_us / cfs_period_us', () => {
    const opts = fake({ 'cpu/cpu.cfs_quota_us': '300000\n', 'cpu/cpu.cfs_period_us': '100000\n' });
    expect(readCpuQuota({ ...opts, available: 8 })).toEqual({ cpus: 3, quota: 3, source: 'cgroup1' });
  });
  it('-1 is no limit', () => {
    const opts = fake({ 'cpu/cpu.cfs_quota_us': '-1\n', 'cpu/cpu.cfs_period_us': '100000\n' });
    expect(readCpuQuota({ ...opts, available: 4 })).toEqual({ cpus: 4, source: 'host' });
  });
  it('the combined cpu,cpuacct mount', () => {
    const opts = fake({ 'cpu,cpuacct/cpu.cfs_quota_us': '150000', 'cpu,cpuacct/cpu.cfs_period_us': '100000' });
    expect(usableCpus({ ...opts, available: 8 })).toBe(1);
  });
  it('v2 wins over v1 when both are present', () => {
    const opts = fake({
      'cpu.max': '400000 100000',
      'cpu/cpu.cfs_quota_us': '100000',
      'cpu/cpu.cfs_period_us': '100000',
    });
    expect(readCpuQuota({ ...opts, available: 8 }).source).toBe('cgroup2');
  });
});

describe('no cgroup files', () => {
  it('an empty or missing root gives the available CPUs', () => {
    expect(usableCpus({ ...fake({}), available: 5 })).toBe(5);
    expect(usableCpus({ cgroupRoot: '/nonexistent/folio-cgroup', procSelfCgroup: '/nonexistent/folio-cgroup-self', available: 3 })).toBe(3);
  });
  it('the default reads the real machine and gives at least 1, at most its CPUs', () => {
    const cpus = usableCpus();
    expect(cpus).toBeGreaterThanOrEqual(1);
    expect(cpus).toBeLessThanOrEqual(os.availableParallelism());
  });
});

describe('configuration defaults', () => {
  it('OFFICE_WORKERS and ENGINE_WORKERS default to the usable CPUs; explicit values win', () => {
    const config = loadConfig({});
    expect(config.officeWorkers).toBe(usableCpus());
    expect(config.engineWorkers).toBe(usableCpus());
    const set = loadConfig({ OFFICE_WORKERS: '3', ENGINE_WORKERS: '5' });
    expect([set.officeWorkers, set.engineWorkers]).toEqual([3, 5]);
  });
});
