/**
 * The number of CPUs this process may actually use. In a container the host's CPU count (what
 * `os.availableParallelism()` reports) is not what the scheduler grants: a pod limited to 2 CPUs on a
 * 64-core node would otherwise start 64 LibreOffice workers and 64 engine threads. The quota is read from
 * the cgroup:
 *
 * - cgroup v2: `cpu.max` holds `"<quota> <period>"` or `"max <period>"` (no limit). It is read in the
 *   process's own cgroup (from `/proc/self/cgroup`, `0::/path`) and every ancestor up to `<root>`, and the
 *   smallest quota wins, as the kernel applies them all (inside a container's cgroup namespace the path is
 *   `/`, so this is `<root>/cpu.max`);
 * - cgroup v1: `<root>/cpu/cpu.cfs_quota_us` (-1 = no limit) and `<root>/cpu/cpu.cfs_period_us`
 *   (also tried as `<root>/cpu,cpuacct/…` and `<root>/cpu.cfs_quota_us` for single-hierarchy mounts).
 *
 * The result is floor(quota / period), at least 1, and never more than `os.availableParallelism()` (a
 * quota above the CPUs the process may run on does not make more of them). No quota, unreadable files or
 * malformed content: `os.availableParallelism()`.
 */
import { positiveInt, readTrimmed, smallestUpTheTree } from './cgroup.js';
import os from 'node:os';
import path from 'node:path';

export interface CpuQuotaOptions {
  /** Where the cgroup filesystem is mounted (default `/sys/fs/cgroup`); tests point it at fake files. */
  cgroupRoot?: string;
  /** The process's cgroup membership file (default `/proc/self/cgroup`). */
  procSelfCgroup?: string;
  /** CPUs the process may run on without a quota (default `os.availableParallelism()`). */
  available?: number;
}

export interface CpuQuota {
  /** Usable CPUs: floor(quota / period) capped by `available`, at least 1. */
  cpus: number;
  /** The quota in CPUs as read (fractional), or undefined when there is none. */
  quota?: number;
  source: 'cgroup2' | 'cgroup1' | 'host';
}

/** One cgroup v2 `cpu.max`: the quota in CPUs, `null` for "max" (no limit), undefined if absent or malformed. */
function cpuMax(dir: string): number | null | undefined {
  const raw = readTrimmed(path.join(dir, 'cpu.max'));
  if (raw === undefined) return undefined;
  const [quota, period = '100000'] = raw.split(/\s+/);
  if (quota === 'max') return null;
  const q = positiveInt(quota);
  const p = positiveInt(period);
  return q !== undefined && p !== undefined ? q / p : undefined;
}

/**
 * cgroup v2: the smallest quota from the process's cgroup up to the root, `null` when `cpu.max` exists
 * but says "max" everywhere, undefined when there is no `cpu.max` at all (not cgroup v2, or no cpu controller).
 */
function cgroup2(root: string, procSelfCgroup: string): number | null | undefined {
  return smallestUpTheTree(root, procSelfCgroup, cpuMax);
}

/** cgroup v1 CFS quota: the quota in CPUs, `null` for -1 (no limit), undefined if absent. */
function cgroup1(root: string): number | null | undefined {
  for (const dir of ['cpu', 'cpu,cpuacct', 'cpuacct,cpu', '.']) {
    const quota = readTrimmed(path.join(root, dir, 'cpu.cfs_quota_us'));
    if (quota === undefined) continue;
    if (quota === '-1') return null;
    const q = positiveInt(quota);
    const p = positiveInt(readTrimmed(path.join(root, dir, 'cpu.cfs_period_us')));
    return q !== undefined && p !== undefined ? q / p : undefined;
  }
  return undefined;
}

function hostCpus(): number {
  return Math.max(1, os.availableParallelism?.() ?? os.cpus().length);
}

export function readCpuQuota(options: CpuQuotaOptions = {}): CpuQuota {
  const root = options.cgroupRoot ?? '/sys/fs/cgroup';
  const available = Math.max(1, Math.floor(options.available ?? hostCpus()));
  const v2 = cgroup2(root, options.procSelfCgroup ?? '/proc/self/cgroup');
  const v1 = v2 === undefined ? cgroup1(root) : undefined;
  const quota = v2 ?? v1;
  if (quota === undefined || quota === null) return { cpus: available, source: 'host' };
  return {
    cpus: Math.max(1, Math.min(available, Math.floor(quota))),
    quota,
    source: v2 !== undefined ? 'cgroup2' : 'cgroup1',
  };
}

/** Usable CPUs (see `readCpuQuota`): the default size of the office pool and of the engine pool. */
export function usableCpus(options?: CpuQuotaOptions): number {
  return readCpuQuota(options).cpus;
}
