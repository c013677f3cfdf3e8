/**
 * Issue 12 soak: `npm run bench -- soak` (SOAK_SECONDS, default 600). Starts the real API as a child process,
 * runs 8 concurrent clients sending mixed valid traffic on every endpoint plus 5% hostile inputs (the
 * generators of test/adversarial/), samples the RSS of the server and of its child processes every 5 s, and
 * prints requests/s, p50/p99 per endpoint, answers by status and code, then PASS/FAIL lines for the goals:
 * no 5xx other than the 503/504 budget answers (and no request left unanswered), no process death, RSS flat
 * after warm-up. Engine worker threads live inside the server's pid, so "main RSS" includes them.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HOSTILE, envelope, judge, validCases, validTemplate, type Budget, type Endpoint, type RequestSpec } from '../test/adversarial/generators.js';
import { FolioProcess, MB, descendants, median, percentile, serverEnv } from '../test/adversarial/server.js';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 600);
const CLIENTS = Number(process.env.SOAK_CLIENTS ?? 8);
const HOSTILE_SHARE = 0.05;
const ENGINE_TIMEOUT_MS = 8_000;
const OFFICE_TIMEOUT_MS = 20_000;
const ENV = serverEnv({ engineTimeoutMs: ENGINE_TIMEOUT_MS, officeTimeoutMs: OFFICE_TIMEOUT_MS });
const deadline = (b: Budget) =>
  ({ engine: ENGINE_TIMEOUT_MS, office: OFFICE_TIMEOUT_MS, 'engine+office': ENGINE_TIMEOUT_MS + OFFICE_TIMEOUT_MS, none: 2_000 })[b] + 30_000;

// A real document for docx→pdf when the shared corpus is there; the generated template otherwise.
const CORPUS_DOCX = path.resolve(import.meta.dirname, '../../shared/corpus/docx/mammoth--simple-list.docx');
const docx = fs.existsSync(CORPUS_DOCX) ? fs.readFileSync(CORPUS_DOCX) : validTemplate();

console.log(
  `soak: ${SECONDS} s, ${CLIENTS} clients, ${HOSTILE_SHARE * 100}% hostile; ${Object.entries(ENV)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')}`,
);
// Budgets are wall-clock: on a host whose load is far above its cores, valid jobs can reach them too.
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
console.log(`host: ${os.availableParallelism()} CPUs, load average ${load()}`);
console.log(`docx→pdf input: ${fs.existsSync(CORPUS_DOCX) ? path.basename(CORPUS_DOCX) : 'generated template'}`);

const srv = await FolioProcess.start(ENV);
const firstPid = srv.pid;
let exitedAt: number | undefined;
srv.child.on('exit', () => (exitedAt = Date.now()));
const apiKey = await srv.newKey();

// Inputs are built once: the clients measure the server, not the generators.
const signedRes = await srv.send(
  validCases(
    () => docx,
    () => new Uint8Array(),
  )
    .find((v) => v.endpoint === 'sign')!
    .build(),
  apiKey,
  deadline('engine'),
);
if (signedRes.status !== 200) throw new Error(`could not sign the verify input: ${signedRes.status} ${signedRes.body.toString().slice(0, 300)}`);
const signedPdf = Buffer.from(JSON.parse(signedRes.body.toString()).document.base64, 'base64');
const valid = validCases(
  () => docx,
  () => signedPdf,
).map((v) => ({ ...v, spec: v.build() }));
const t = Date.now();
const hostile = HOSTILE.map((c) => ({ c, spec: c.build() as RequestSpec }));
console.log(`built ${valid.length} valid and ${hostile.length} hostile inputs in ${Date.now() - t} ms; server pid ${srv.pid}`);

interface Rec {
  endpoint: Endpoint;
  hostile: boolean;
  id: string;
  status: number;
  code: string;
  ms: number;
  /** For valid requests: why the answer is not a good one; for hostile ones: why the contract is broken. */
  bad?: string;
  at: number;
}
const recs: Rec[] = [];
const start = Date.now();
const end = start + SECONDS * 1000;

async function client(n: number) {
  let i = n;
  while (Date.now() < end) {
    if (Math.random() < HOSTILE_SHARE) {
      const { c, spec } = hostile[Math.floor(Math.random() * hostile.length)]!;
      const r = await srv.send(spec, apiKey, deadline(c.budget));
      const code = r.status === 0 ? `no answer (${r.error})` : r.status === 200 ? 'OK' : (envelope(r).code ?? '?');
      recs.push({
        endpoint: c.endpoint,
        hostile: true,
        id: c.id,
        status: r.status,
        code,
        ms: r.ms,
        bad: r.status === 0 ? r.error : judge(c, r),
        at: Date.now(),
      });
    } else {
      const v = valid[i++ % valid.length]!;
      const r = await srv.send(v.spec, apiKey, deadline(v.endpoint === 'convert docx→pdf' ? 'engine+office' : 'engine'));
      // /v1/health answers its own body, also as a 503 ("unhealthy"), not the error envelope.
      const health =
        v.endpoint === 'health' && r.status !== 0
          ? `status ${(() => {
              try {
                return JSON.parse(r.body.toString()).status;
              } catch {
                return '?';
              }
            })()}`
          : undefined;
      const code = r.status === 0 ? `no answer (${r.error})` : r.status === 200 ? 'OK' : (health ?? envelope(r).code ?? '?');
      recs.push({
        endpoint: v.endpoint,
        hostile: false,
        id: v.endpoint,
        status: r.status,
        code,
        ms: r.ms,
        bad: r.status === 200 ? v.ok(r) : `status ${r.status} ${code}`,
        at: Date.now(),
      });
    }
  }
}

interface Sample {
  t: number;
  main: number;
  children: number;
  kids: string;
  /** The main thread's V8 heap; the rest of the main RSS is mostly the engine threads (and native memory). */
  heap: number;
  loopMax: number;
}
const samples: Sample[] = [];
const childPids = new Set<number>();
async function sample() {
  const m = await srv.metrics();
  const kids = descendants(srv.pid);
  for (const k of kids) childPids.add(k.pid);
  const s: Sample = {
    t: (Date.now() - start) / 1000,
    main: srv.rss() ?? 0,
    children: kids.reduce((a, k) => a + k.rss, 0),
    kids: kids
      .filter((k) => k.rss > 20 * MB)
      .map((k) => `${k.name}:${(k.rss / MB).toFixed(0)}`)
      .join(' '),
    heap: m.nodejs_heap_size_used_bytes ?? NaN,
    loopMax: (m.nodejs_eventloop_lag_max_seconds ?? NaN) * 1000,
  };
  samples.push(s);
  const done = recs.filter((r) => r.at > Date.now() - 5000).length;
  console.log(
    `t=${s.t.toFixed(0).padStart(4)}s  ${(done / 5).toFixed(1).padStart(5)} req/s  main RSS ${(s.main / MB).toFixed(0).padStart(5)} MB (main-thread heap ${(s.heap / MB).toFixed(0)} MB, event loop max ${s.loopMax.toFixed(0)} ms)  children ${(s.children / MB).toFixed(0).padStart(5)} MB (${kids.length})  ${s.kids}  engine timeouts ${m.folio_engine_timeouts ?? '-'} heap-ceiling ${m.folio_engine_memory_exceeded ?? '-'}`,
  );
}
await sample();
const sampler = setInterval(() => void sample(), 5000);
await Promise.all(Array.from({ length: CLIENTS }, (_, n) => client(n)));
clearInterval(sampler);
await sample();
const elapsed = (Date.now() - start) / 1000;

// ─── report ───
console.log(`\nhost load average at the end: ${load()}`);
console.log(
  `${recs.length} requests in ${elapsed.toFixed(0)} s = ${(recs.length / elapsed).toFixed(1)} req/s (${recs.filter((r) => r.hostile).length} hostile)`,
);
console.log('endpoint                  n      p50 ms   p99 ms  answers');
const endpoints = [...new Set(recs.map((r) => `${r.endpoint}${r.hostile ? ' (hostile)' : ''}`))].sort();
for (const ep of endpoints) {
  const rs = recs.filter((r) => `${r.endpoint}${r.hostile ? ' (hostile)' : ''}` === ep);
  const ms = rs.map((r) => r.ms);
  const by = new Map<string, number>();
  for (const r of rs) by.set(`${r.status} ${r.code}`, (by.get(`${r.status} ${r.code}`) ?? 0) + 1);
  console.log(
    `${ep.padEnd(26)}${String(rs.length).padStart(5)} ${percentile(ms, 50).toFixed(0).padStart(8)} ${percentile(ms, 99).toFixed(0).padStart(8)}  ${[...by].map(([k, n]) => `${k}×${n}`).join(', ')}`,
  );
}
const errors = new Map<string, number>();
for (const r of recs) if (r.status !== 200) errors.set(`${r.status} ${r.code}`, (errors.get(`${r.status} ${r.code}`) ?? 0) + 1);
console.log(`errors by code: ${[...errors].map(([k, n]) => `${k}×${n}`).join(', ') || 'none'}`);
const wrong = recs.filter((r) => r.bad && r.hostile);
if (wrong.length)
  console.log(
    `hostile answers outside the contract: ${[...new Set(wrong.map((r) => `${r.id} → ${r.status} ${r.code}: ${r.bad}`))].slice(0, 20).join('\n  ')}`,
  );
const validBad = recs.filter((r) => r.bad && !r.hostile);
if (validBad.length)
  console.log(
    `valid requests not served: ${validBad.length} (${[...new Set(validBad.map((r) => `${r.endpoint}: ${r.bad}`))].slice(0, 10).join('; ')})`,
  );
const endMetrics = await srv.metrics();
console.log(
  `main-thread event loop: max ${Math.max(...samples.map((x) => x.loopMax).filter(Number.isFinite)).toFixed(0)} ms over the run, median of the 5 s maxima ${median(samples.map((x) => x.loopMax).filter(Number.isFinite)).toFixed(0)} ms; engine jobs ${endMetrics.folio_engine_jobs_completed ?? '-'}, stopped at the time budget ${endMetrics.folio_engine_timeouts ?? '-'}, at the heap ceiling ${endMetrics.folio_engine_memory_exceeded ?? '-'}`,
);
console.log(
  `distinct child processes seen: ${childPids.size} (LibreOffice workers replaced: ${Math.max(0, childPids.size - (descendants(srv.pid).length || 0))})`,
);

// RSS flat: the median of the first window (warm-up included) against the last. A window is a minute, or a
// third of a shorter run so that the two do not overlap.
const win = Math.min(60, elapsed / 3);
const first = median(samples.filter((s) => s.t <= win).map((s) => s.main));
const last = median(samples.filter((s) => s.t >= elapsed - win).map((s) => s.main));
const firstKids = median(samples.filter((s) => s.t <= win).map((s) => s.children));
const lastKids = median(samples.filter((s) => s.t >= elapsed - win).map((s) => s.children));
const flat = last <= first * 1.2 + 32 * MB;

const fiveXX = recs.filter((r) => r.status >= 500 && r.status !== 503 && r.status !== 504);
const unanswered = recs.filter((r) => r.status === 0);
const alive = srv.alive() && srv.pid === firstPid && exitedAt === undefined;
const line = (ok: boolean, text: string) => console.log(`${ok ? 'PASS' : 'FAIL'} ${text}`);
console.log('');
line(
  fiveXX.length === 0,
  `no 5xx other than 503/504: ${fiveXX.length}${fiveXX.length ? ` (${[...new Set(fiveXX.map((r) => `${r.id} ${r.status} ${r.code}`))].join(', ')})` : ''}`,
);
line(unanswered.length === 0, `every request answered: ${unanswered.length} without an answer`);
line(alive, `no process death: server pid ${firstPid} ${alive ? 'alive throughout' : `gone (${JSON.stringify(srv.exitInfo())})`}`);
line(
  flat,
  `main RSS flat after warm-up: first ${win.toFixed(0)} s median ${(first / MB).toFixed(0)} MB, last ${win.toFixed(0)} s median ${(last / MB).toFixed(0)} MB (bound ×1.2 + 32 MB); children ${(firstKids / MB).toFixed(0)} → ${(lastKids / MB).toFixed(0)} MB`,
);
line(validBad.length === 0, `valid requests all served: ${validBad.length} not`);
await srv.stop();
process.exit(fiveXX.length || unanswered.length || !alive || !flat ? 1 : 0);
