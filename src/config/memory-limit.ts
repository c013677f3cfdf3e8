/**
 * The memory this process tree may use. In a container the host's memory (`os.totalmem()`) is not what the
 * kernel grants: a pod limited to 3.5 GiB on a 64 GiB node is OOM-killed at 3.5 GiB, every request in it.
 * The limit is read from the cgroup, the same way as the CPU quota (cpu-quota.ts):
 *
 * - cgroup v2: `memory.max` holds a byte count or `"max"` (no limit), read in the process's own cgroup (from
 *   `/proc/self/cgroup`, `0::/path`) and every ancestor up to `<root>`; the smallest wins, as the kernel
 *   applies them all;
 * - cgroup v1: `<root>/memory/memory.limit_in_bytes` (also tried as `<root>/memory.limit_in_bytes`); "no
 *   limit" is a huge number there (PAGE_COUNTER_MAX × page size, about 2^63), so anything at or above the
 *   host's memory counts as none.
 *
 * A limit above the host's memory is no limit either (the host runs out first). No limit, unreadable files
 * or malformed content: the host's memory, with `source: 'host'`.
 */
import { positiveInt, readTrimmed, smallestUpTheTree } from './cgroup.js';
import os from 'node:os';
import path from 'node:path';

export interface MemoryLimitOptions {
  /** Where the cgroup filesystem is mounted (default `/sys/fs/cgroup`); tests point it at fake files. */
  cgroupRoot?: string;
  /** The process's cgroup membership file (default `/proc/self/cgroup`). */
  procSelfCgroup?: string;
  /** The host's memory in bytes (default `os.totalmem()`). */
  total?: number;
}

export interface MemoryLimit {
  /** Bytes the process tree may use: the cgroup limit, or the host's memory without one. */
  bytes: number;
  source: 'cgroup2' | 'cgroup1' | 'host';
}

/**
 * cgroup v2: the smallest `memory.max` from the process's cgroup up to the root; `null` when the files exist
 * but say "max" everywhere, undefined when there is none (not cgroup v2, or no memory controller).
 */
function cgroup2(root: string, procSelfCgroup: string): number | null | undefined {
  return smallestUpTheTree(root, procSelfCgroup, (dir) => {
    const raw = readTrimmed(path.join(dir, 'memory.max'));
    return raw === 'max' ? null : positiveInt(raw);
  });
}

/** cgroup v1: `memory.limit_in_bytes`, undefined when absent or malformed. */
function cgroup1(root: string): number | undefined {
  for (const dir of ['memory', '.']) {
    const n = positiveInt(readTrimmed(path.join(root, dir, 'memory.limit_in_bytes')));
    if (n !== undefined) return n;
  }
  return undefined;
}

export function readMemoryLimit(options: MemoryLimitOptions = {}): MemoryLimit {
  const root = options.cgroupRoot ?? '/sys/fs/cgroup';
  const total = options.total ?? os.totalmem();
  const v2 = cgroup2(root, options.procSelfCgroup ?? '/proc/self/cgroup');
  if (typeof v2 === 'number' && v2 < total) return { bytes: v2, source: 'cgroup2' };
  if (v2 === undefined) {
    const v1 = cgroup1(root);
    if (v1 !== undefined && v1 < total) return { bytes: v1, source: 'cgroup1' };
  }
  return { bytes: total, source: 'host' };
}

/**
 * RSS of the API process with its threads idle (main thread, ENGINE_WORKERS engine threads warmed up, the
 * body thread), measured 330–470 MB on Node 20 (bench/capacity.ts, bench/pressure.ts): what the in-flight
 * budget cannot hand out.
 */
export const PROCESS_BASELINE_BYTES = 450 * 1024 * 1024;
/** The budget never goes below this: two 25 MB multipart documents (×3) at a time even in a tiny container. */
export const MIN_IN_FLIGHT_BYTES = 160 * 1024 * 1024;

export interface InFlightDefaultInput {
  /** The memory the process tree may use (MEMORY_LIMIT_MB, else the cgroup limit, else the host's memory). */
  limitBytes: number;
  /** Whether that is a real limit (container or setting) or only the host's memory, shared with others. */
  limited: boolean;
  officeWorkers: number;
  /** One LibreOffice worker's RSS ceiling (OFFICE_MEMORY_MB). */
  officeMemoryBytes: number;
}

/**
 * The default budget of request bytes in flight (INFLIGHT_BYTES_MB, src/http/admission.ts): half of what is
 * left of the limit once the idle process and every LibreOffice worker at its ceiling are counted, a
 * quarter of it without a limit (the host's memory is shared with everything else on it). The other half
 * is headroom for what a reservation does not see: V8 heap growth on the main and engine threads under
 * load, allocator fragmentation, answers being sent. For the Kubernetes pod (3,584 MiB, two office workers
 * at 1,024 MiB): (3,584 − 450 − 2,048) / 2 = 543 MiB, seven 24 MB uploads processed at once at 3× each.
 */
export function defaultInFlightBytes(input: InFlightDefaultInput): number {
  const spare = input.limitBytes - PROCESS_BASELINE_BYTES - input.officeWorkers * input.officeMemoryBytes;
  return Math.max(MIN_IN_FLIGHT_BYTES, Math.floor(spare * (input.limited ? 0.5 : 0.25)));
}
