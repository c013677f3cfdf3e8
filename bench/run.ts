/**
 * `npm run bench`: runs every benchmark in bench/ (one file per capability) in turn and prints its figures.
 * `npm run bench -- convert sign` runs only those. `soak` (10 minutes, SOAK_SECONDS to shorten) and
 * `capacity` (the capacity model of docs/operations.md, ~3 minutes) and `pressure` (bursts of 24 MB uploads against the
 * in-flight budget, this machine and a pod of the manifests' size, ~5–8 minutes) and `sign-compare` (two checkouts side by side,
 * BENCH_COMPARE_TREES) run only when named: `npm run bench -- soak`.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const dir = import.meta.dirname;
const wanted = process.argv.slice(2);
/** Benches too long for the default run; they run when named. */
const ON_DEMAND = ['soak', 'capacity', 'pressure', 'sign-compare'];
const files = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts')
  .filter((f) => (wanted.length === 0 ? !ON_DEMAND.includes(f.replace(/\.ts$/, '')) : wanted.includes(f.replace(/\.ts$/, ''))))
  .sort((a, b) => (a === 'foundation.ts' ? -1 : b === 'foundation.ts' ? 1 : a.localeCompare(b)));

let failed = 0;
for (const f of files) {
  console.log(`\n=== bench/${f} ===`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(dir, f)], { stdio: 'inherit', cwd: path.dirname(dir) });
  if (r.status !== 0) {
    failed++;
    console.log(`bench/${f} exited with ${r.status}`);
  }
}
process.exit(failed ? 1 : 0);
