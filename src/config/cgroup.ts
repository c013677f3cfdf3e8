/**
 * Reading the container's limits from the cgroup filesystem, shared by the CPU quota (cpu-quota.ts) and the
 * memory limit (memory-limit.ts): the files, the process's own cgroup, and the walk up the tree, where the
 * tightest limit of any ancestor is the one that applies.
 */
import fs from 'node:fs';
import path from 'node:path';

export function readTrimmed(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** A positive decimal integer, or undefined (absent, malformed, zero, beyond 2^53). */
export function positiveInt(s: string | undefined): number | undefined {
  if (s === undefined || !/^\d+$/.test(s)) return undefined;
  const n = Number(s);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** The process's cgroup v2 path relative to the mount (`0::/a/b` → `a/b`), '' when unknown or outside. */
function ownCgroupPath(procSelfCgroup: string): string {
  const raw = readTrimmed(procSelfCgroup);
  const line = raw?.split('\n').find((l) => l.startsWith('0::'));
  const rel = line?.slice(3).replace(/^\/+/, '') ?? '';
  return rel.split('/').includes('..') ? '' : rel;
}

/**
 * cgroup v2: the smallest limit `readOne` finds from the process's cgroup up to the root; `null` when the
 * files exist but say "no limit" everywhere (`readOne` answers null), undefined when there is none at all.
 */
export function smallestUpTheTree(
  root: string,
  procSelfCgroup: string,
  readOne: (dir: string) => number | null | undefined,
): number | null | undefined {
  const parts = ownCgroupPath(procSelfCgroup).split('/').filter(Boolean);
  let found: number | null | undefined;
  for (let i = parts.length; i >= 0; i--) {
    const v = readOne(path.join(root, ...parts.slice(0, i)));
    if (v === undefined) continue;
    if (v === null) found ??= null;
    else found = found === null || found === undefined ? v : Math.min(found, v);
  }
  return found;
}
