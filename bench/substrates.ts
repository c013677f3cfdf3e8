/**
 * Issue 13 (shared OOXML/PDF layers): docx→pdf and md→docx over HTTP, before and after, in one run.
 * `npm run bench -- substrates`; `BASELINE_REF=<commit>` adds a baseline: that commit checked out with
 * `git worktree add` into a temporary folder (this checkout's node_modules symlinked, no `npm ci`), compiled
 * with tsc and started on its own port beside the current tree, so both are measured side by side, request
 * by request in turn. Without it only the current tree is measured. `BENCH_RUNS` (default 5) raises the
 * number of timed requests per input.
 *
 * The current tree runs as the adversarial suite runs it (test/adversarial/server.ts: its compiled build,
 * an API key through register → outbox → verify). Inputs: 2–3 corpus DOCX files (skipped when absent), a
 * generated ~11 KB report-like Markdown and a generated 1 MB one; pandoc (`pandoc -f markdown -t docx`,
 * process start included) on the same two Markdown files. Figures are printed, never asserted; the exit
 * status is 1 only when a server fails to start or to give a key.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { docxProblem, pdfProblem, type RequestSpec } from '../test/adversarial/generators.js';
import { FolioProcess, ROOT, freePort, percentile, serverEnv, type SendResult } from '../test/adversarial/server.js';
import { CORPUS_DOCX as FIXTURE_DOCX } from '../test/helpers/corpus.js';
import { reportMarkdown } from './support.js';

const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 5));
const WARMUP_REQUESTS = 3;
const BASELINE_REF = process.env.BASELINE_REF?.trim() || undefined;
// The external corpus when this machine has it, else the copy the tests read (test/fixtures/corpus).
const CORPUS_DOCX = fs.existsSync('/work/shared/corpus/docx') ? '/work/shared/corpus/docx' : FIXTURE_DOCX;
const DOCX_FILES = ['mammoth--simple-list.docx', 'docx4j--tables.docx', 'pandoc--comments.docx'];
// The adversarial suite's server set-up, with budgets no valid input here reaches and the server's default heap
// ceiling per engine thread (the 1 MB report is a large job, not a hostile one).
const ENV = { ...serverEnv({ engineTimeoutMs: 120_000, officeTimeoutMs: 120_000, engineWorkers: 1 }), ENGINE_MEMORY_MB: '1024' };
const DEADLINE_MS = 180_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const p50 = (xs: number[]) => percentile(xs, 50);
const p90 = (xs: number[]) => percentile(xs, 90);

// ─── inputs ───

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-bench-substrates-'));
const smallMd = reportMarkdown(11 * 1024);
const bigMd = reportMarkdown(1024 * 1024);
fs.writeFileSync(path.join(tmp, 'report-11k.md'), smallMd);
fs.writeFileSync(path.join(tmp, 'report-1m.md'), bigMd);

interface Input {
  label: string;
  bytes: number;
  spec: RequestSpec;
  check: (b: Uint8Array) => string | undefined;
  runs: number;
  /** The Markdown file pandoc converts, for the md→docx inputs. */
  mdFile?: string;
}
const convert = (from: string, to: string, name: string, bytes: Uint8Array): RequestSpec => ({
  method: 'POST',
  path: `/v1/convert?from=${from}&to=${to}`,
  file: { name, bytes },
});
const inputs: Input[] = [];
for (const f of DOCX_FILES) {
  const p = path.join(CORPUS_DOCX, f);
  if (!fs.existsSync(p)) {
    console.log(`skipped (absent): ${p}`);
    continue;
  }
  const bytes = fs.readFileSync(p);
  inputs.push({ label: `docx→pdf ${f}`, bytes: bytes.length, spec: convert('docx', 'pdf', f, bytes), check: pdfProblem, runs: RUNS });
}
inputs.push({
  label: 'md→docx 11 KB report',
  bytes: Buffer.byteLength(smallMd),
  spec: convert('md', 'docx', 'report.md', Buffer.from(smallMd)),
  check: docxProblem,
  runs: RUNS * 2,
  mdFile: path.join(tmp, 'report-11k.md'),
});
inputs.push({
  label: 'md→docx 1 MB report',
  bytes: Buffer.byteLength(bigMd),
  spec: convert('md', 'docx', 'report.md', Buffer.from(bigMd)),
  check: docxProblem,
  runs: RUNS,
  mdFile: path.join(tmp, 'report-1m.md'),
});

// ─── servers ───

interface Target {
  name: 'baseline' | 'current';
  /** The API process: its CPU time (main thread and engine threads, not LibreOffice) is read per request. */
  pid: number;
  url: string;
  dataDir: string;
  key: string;
  stop: () => Promise<void>;
}

/** FolioProcess's request and key helpers only read `url` and `dataDir`; the baseline borrows them. */
const asProcess = (t: { url: string; dataDir: string }) => t as unknown as FolioProcess;

let worktree: string | undefined;
function removeWorktree(): void {
  if (!worktree) return;
  spawnSync('git', ['worktree', 'remove', '--force', worktree], { cwd: ROOT, stdio: 'ignore' });
  fs.rmSync(worktree, { recursive: true, force: true });
  spawnSync('git', ['worktree', 'prune'], { cwd: ROOT, stdio: 'ignore' });
  worktree = undefined;
}
let baselineChild: ChildProcess | undefined;
const killBaseline = () => {
  try {
    if (baselineChild?.pid) process.kill(-baselineChild.pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
};
process.once('exit', () => {
  killBaseline();
  removeWorktree();
  fs.rmSync(tmp, { recursive: true, force: true });
});
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => process.exit(130));

/** `git worktree add` of the ref, node_modules symlinked from this checkout, compiled with tsc, started. */
async function startBaseline(ref: string): Promise<Target> {
  const t0 = performance.now();
  const commit = execFileSync('git', ['rev-parse', '--short', `${ref}^{commit}`], { cwd: ROOT, encoding: 'utf8' }).trim();
  worktree = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-baseline-'));
  execFileSync('git', ['worktree', 'add', '--detach', worktree, commit], { cwd: ROOT, stdio: 'ignore' });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(worktree, 'node_modules'), 'dir');
  // `npm run build` minus the client bundle (the server does not load it): tsc with the project's config.
  // Type errors still emit JavaScript; only a missing entry is fatal.
  spawnSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: worktree, stdio: 'ignore' });
  const main = path.join(worktree, 'dist/src/main.js');
  if (!fs.existsSync(main)) throw new Error(`the baseline ${commit} did not compile (no ${main})`);
  console.log(`baseline ${commit}: worktree ${worktree}, compiled in ${((performance.now() - t0) / 1000).toFixed(0)} s`);

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-baseline-data-'));
  const port = await freePort();
  let log = '';
  let exited = false;
  const child = spawn(process.execPath, [main, 'api'], {
    cwd: worktree,
    detached: true, // its own process group, so its LibreOffice workers die with it
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      METRICS_PORT: String(await freePort()),
      ...ENV,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  baselineChild = child;
  const keep = (d: Buffer) => (log = (log + d.toString()).slice(-4000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  child.on('exit', () => (exited = true));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (exited) throw new Error(`the baseline server exited during start-up: ${log}`);
    if (Date.now() > deadline) throw new Error(`the baseline server did not become healthy in 120 s: ${log}`);
    const r = await fetch(`${url}/v1/health`, { signal: AbortSignal.timeout(2000) }).catch(() => undefined);
    if (r?.status === 200 && ((await r.json()) as { status: string }).status === 'healthy') break;
    await sleep(250);
  }
  const key = await FolioProcess.prototype.newKey.call(asProcess({ url, dataDir }));
  return {
    name: 'baseline',
    pid: child.pid!,
    url,
    dataDir,
    key,
    stop: async () => {
      if (!exited) child.kill('SIGTERM');
      for (let i = 0; i < 50 && !exited; i++) await sleep(100);
      killBaseline();
      // A loaded host can take a while to reap it: remove its data only once it can no longer write there.
      for (let i = 0; i < 50 && !exited; i++) await sleep(100);
      fs.rmSync(dataDir, { recursive: true, force: true, maxRetries: 5 });
    },
  };
}

async function startCurrent(): Promise<Target> {
  const srv = await FolioProcess.start(ENV);
  console.log(`current tree: ${srv.entry}`);
  return { name: 'current', pid: srv.pid, url: srv.url, dataDir: srv.dataDir, key: await srv.newKey(), stop: () => srv.stop() };
}

const host = () =>
  `${os.availableParallelism()} CPUs, load average ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`;
console.log(
  `substrates: ${RUNS} runs (BENCH_RUNS), 1 warm-up per input and server; ${Object.entries(ENV)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')}`,
);
console.log(`host: ${host()}`);

const targets: Target[] = [];
try {
  if (BASELINE_REF) targets.push(await startBaseline(BASELINE_REF));
  targets.push(await startCurrent());
} catch (e) {
  console.log(`server failed: ${(e as Error).message}`);
  for (const t of targets) await t.stop().catch(() => undefined);
  process.exit(1);
}

// ─── measure ───

interface Cell {
  ms: number[];
  /** The server process's CPU time per request (ms): what the work costs, whatever else the host runs. */
  cpuMs: number[];
  errors: string[];
}

/** User + system CPU time of a process so far, in ms (/proc/PID/stat, clock ticks of 10 ms). */
function cpuTimeMs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
const results = new Map<string, Map<Target['name'], Cell>>();
const send = (t: Target, spec: RequestSpec): Promise<SendResult> => FolioProcess.prototype.send.call(asProcess(t), spec, t.key, DEADLINE_MS);

for (const input of inputs) {
  const t0 = performance.now();
  const cells = new Map<Target['name'], Cell>(targets.map((t) => [t.name, { ms: [], cpuMs: [], errors: [] }]));
  results.set(input.label, cells);
  // Warm-up: a running server is warm, and one request leaves the engine thread's JIT cold for the small
  // inputs; three per server and input, as bench/docx-export.ts does.
  for (let w = 0; w < WARMUP_REQUESTS; w++) for (const t of targets) await send(t, input.spec);
  // Sequential requests, the servers in turn (the order alternating), so load on the host falls on both alike.
  for (let i = 0; i < input.runs; i++) {
    for (const t of i % 2 ? [...targets].reverse() : targets) {
      const cpu0 = cpuTimeMs(t.pid);
      const r = await send(t, input.spec);
      const cpu = cpuTimeMs(t.pid) - cpu0;
      const cell = cells.get(t.name)!;
      const problem = r.status === 200 ? input.check(r.body) : `status ${r.status} ${r.error ?? r.body.toString('utf8').slice(0, 200)}`;
      if (problem) cell.errors.push(problem);
      else {
        cell.ms.push(r.ms);
        cell.cpuMs.push(cpu);
      }
    }
  }
  console.log(`measured ${input.label} (${input.runs} runs per server) in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
}

for (const t of targets) await t.stop(); // pandoc runs on a quieter host

const pandoc = new Map<string, number[]>();
const hasPandoc = spawnSync('pandoc', ['--version'], { stdio: 'ignore' }).status === 0;
if (hasPandoc) {
  for (const input of inputs.filter((i) => i.mdFile)) {
    // pandoc takes tens of seconds on 1 MB: one run by default, more with BENCH_RUNS.
    const runs = input.bytes > 100_000 ? Math.max(1, Math.floor(RUNS / 5)) : input.runs;
    const xs: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      const r = spawnSync('pandoc', ['-f', 'markdown', '-t', 'docx', '-o', path.join(tmp, 'out.docx'), input.mdFile!], { stdio: 'ignore' });
      if (r.status === 0) xs.push(performance.now() - t0);
    }
    pandoc.set(input.label, xs);
  }
}

// ─── report ───

const fmt = (c: Cell | undefined) =>
  !c ? '—' : c.ms.length ? `${p50(c.ms).toFixed(0)} / ${p90(c.ms).toFixed(0)}` : `failed (${c.errors[0]?.slice(0, 40) ?? '?'})`;
console.log(`\nhost at the end: ${host()}`);
console.log('ms, median / p90 over HTTP (sequential requests)');
console.log(
  `${'input'.padEnd(42)}${'bytes'.padStart(9)}  ${'baseline'.padStart(14)}  ${'current'.padStart(14)}  ${'cur÷base'.padStart(8)}  ${'pandoc'.padStart(14)}`,
);
const ratios: Record<'docx→pdf' | 'md→docx', number[]> = { 'docx→pdf': [], 'md→docx': [] };
for (const input of inputs) {
  const cells = results.get(input.label)!;
  const base = cells.get('baseline');
  const cur = cells.get('current')!;
  const ratio = base?.ms.length && cur.ms.length ? p50(cur.ms) / p50(base.ms) : undefined;
  if (ratio !== undefined) ratios[input.label.startsWith('docx→pdf') ? 'docx→pdf' : 'md→docx'].push(ratio);
  const pd = pandoc.get(input.label);
  console.log(
    `${input.label.padEnd(42)}${String(input.bytes).padStart(9)}  ${fmt(base).padStart(14)}  ${fmt(cur).padStart(14)}  ${(ratio === undefined ? '—' : ratio.toFixed(2)).padStart(8)}  ${(pd?.length ? `${p50(pd).toFixed(0)} / ${p90(pd).toFixed(0)}` : '—').padStart(14)}`,
  );
  const cpu = [...cells].map(([name, c]) => `${name} ${c.cpuMs.length ? p50(c.cpuMs).toFixed(0) : '—'}`).join(', ');
  console.log(
    `  API process CPU ms per request, median: ${cpu}${input.label.startsWith('docx→pdf') ? ' (LibreOffice runs in child processes, not counted)' : ''}`,
  );
  for (const [name, c] of cells) if (c.errors.length) console.log(`  ${name}: ${c.errors.length} bad answers, e.g. ${c.errors[0]}`);
}

console.log('\ngoals (figures, not assertions):');
const big = results.get('md→docx 1 MB report')!.get('current')!;
console.log(
  `1 MB Markdown over HTTP: ${big.ms.length ? `${p50(big.ms).toFixed(0)} ms wall, ${p50(big.cpuMs).toFixed(0)} ms of the API process's CPU` : 'failed'} (goal < 500 ms)`,
);
const small = results.get('md→docx 11 KB report')!.get('current')!;
const pdSmall = pandoc.get('md→docx 11 KB report');
console.log(
  `11 KB report: pandoc ÷ Folio = ${small.ms.length && pdSmall?.length ? `${(p50(pdSmall) / p50(small.ms)).toFixed(1)}×` : 'n/a'} (goal ≥ 20×)`,
);
const geo = (xs: number[]) => (xs.length ? Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length).toFixed(2) : 'n/a');
console.log(
  BASELINE_REF
    ? `docx→pdf / md→docx current ÷ baseline: ${geo(ratios['docx→pdf'])} / ${geo(ratios['md→docx'])} (geometric means of the median ratios; goal ≤ 1.0 within noise)`
    : 'docx→pdf / md→docx current ÷ baseline: n/a (set BASELINE_REF, e.g. BASELINE_REF=d083190) (goal ≤ 1.0 within noise)',
);
process.exit(0);
