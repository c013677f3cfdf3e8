/**
 * Issue 2 / issue 14 benchmark: requests/s (autocannon, 50 connections) of GET /v1/health and of
 * authenticated requests against a bare Fastify hello-world, in one run.
 * Goals: health ≥ 0.8× bare, an authenticated request ≥ 0.6× bare.
 *
 * Two authenticated rows, because "an authenticated request" is authentication plus whatever the endpoint
 * itself does:
 * - `GET /v1/verify/key` (Bearer): a real operation of the contract that does no storage work of its own
 *   (the service's signing certificate, described once per process), so the row measures Folio's request
 *   path with authentication: the hooks, the key cache hit, the request id, the log line, a 2 KB answer.
 * - `GET /v1/auth/keys` (Bearer): the caller's key listing, which is read from the store on every request
 *   (one indexed SQLite read here; never cached, so the listing stays exact) plus a small JSON answer.
 * Authentication itself is the in-process key cache (src/auth/key-cache.ts) after the first request. A last
 * row shows the listing with an unknown (well-formed) key: every one of those reaches the store (misses
 * are never cached), the worst case of the authenticated path.
 *
 * The machine is shared and its load moves during a run, so the targets are measured in interleaved rounds
 * (BENCH_ROUNDS, default 5, of BENCH_SECONDS each, default 4): each round runs bare, then each Folio target,
 * one after the other, and each ratio is computed within its round (Folio ÷ the bare run next to it); the
 * figures are the medians over rounds of those ratios. The load average is printed before and after.
 * Beside req/s, the server's own CPU time per request (utime + stime of the server process from /proc,
 * Linux) is shown: it depends less on what else runs on the machine, and its ratio (bare CPU per request /
 * Folio CPU per request) is what req/s would give on an idle core with a free client. BENCH_REDIS_URL runs
 * the API with Redis (shared limits, subscribed key cache). The API runs with the HTTP metrics, as
 * src/main.ts runs it; BENCH_METRICS=0 leaves them out.
 */
import fs from 'node:fs';
import os from 'node:os';
import autocannon from 'autocannon';
import { startBenchServer } from './support.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 4);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);

const { child, info } = await startBenchServer<{ bare: number; api: number; apiKey: string; unknownKey: string }>('bench/servers/foundation.ts');

interface Target {
  title: string;
  url: string;
  headers?: Record<string, string>;
  expectStatus?: number;
  results: number[];
  p99: number[];
  bad: number;
  cpuUs: number[];
}

const targets: Target[] = [
  { title: 'bare Fastify GET /hello', url: `http://127.0.0.1:${info.bare}/hello`, results: [], p99: [], bad: 0, cpuUs: [] },
  { title: 'Folio GET /v1/health', url: `http://127.0.0.1:${info.api}/v1/health`, results: [], p99: [], bad: 0, cpuUs: [] },
  {
    title: 'Folio GET /v1/verify/key (Bearer)',
    url: `http://127.0.0.1:${info.api}/v1/verify/key`,
    headers: { authorization: `Bearer ${info.apiKey}` },
    results: [],
    p99: [],
    bad: 0,
    cpuUs: [],
  },
  {
    title: 'Folio GET /v1/auth/keys (Bearer)',
    url: `http://127.0.0.1:${info.api}/v1/auth/keys`,
    headers: { authorization: `Bearer ${info.apiKey}` },
    results: [],
    p99: [],
    bad: 0,
    cpuUs: [],
  },
  {
    title: 'Folio GET /v1/auth/keys (unknown key)',
    url: `http://127.0.0.1:${info.api}/v1/auth/keys`,
    headers: { authorization: `Bearer ${info.unknownKey}` },
    expectStatus: 401,
    results: [],
    p99: [],
    bad: 0,
    cpuUs: [],
  },
];

const TICK_US = 1e6 / 100; // USER_HZ is 100 on Linux
/** CPU time used so far by the server process, in µs (undefined where /proc is not readable). */
function serverCpuUs(): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_US;
  } catch {
    return undefined;
  }
}

async function run(t: Target, duration: number) {
  const cpu0 = serverCpuUs();
  const r = await autocannon({ url: t.url, connections: 50, duration, headers: t.headers ?? {} });
  const wrong = t.expectStatus === undefined ? r.non2xx : r.requests.total - (r.statusCodeStats?.[String(t.expectStatus) as '401']?.count ?? 0);
  const cpu1 = serverCpuUs();
  const cpuPerRequest = cpu0 === undefined || cpu1 === undefined || r.requests.total === 0 ? NaN : (cpu1 - cpu0) / r.requests.total;
  return { rps: r.requests.average, p99: r.latency.p99, bad: Math.max(0, wrong) + r.errors, cpuPerRequest };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

const load = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');
console.log(`autocannon, 50 connections, ${rounds} interleaved rounds of ${seconds} s per target; load average ${load()} (1, 5, 15 min) at start`);
// The API's engine threads load their modules for a few seconds after the server reports itself: that CPU
// is the server process's too and would land in the first round. Wait until the server is idle (under 5 %
// of a core over half a second, 30 s at most), then a short warm-up so JIT and connection setup do not count.
for (let waited = 0; waited < 30_000; waited += 500) {
  const before = serverCpuUs();
  await new Promise((r) => setTimeout(r, 500));
  const after = serverCpuUs();
  if (before === undefined || after === undefined || after - before < 25_000) break;
}
for (const t of targets) await run(t, 1);
for (let round = 0; round < rounds; round++) {
  for (const t of targets) {
    const r = await run(t, seconds);
    t.results.push(r.rps);
    t.p99.push(r.p99);
    t.bad += r.bad;
    t.cpuUs.push(r.cpuPerRequest);
  }
}
for (const t of targets) {
  console.log(
    `${t.title.padEnd(40)} ${median(t.results).toFixed(0).padStart(8)} req/s   p99 ${String(median(t.p99)).padStart(4)} ms   ` +
      `server CPU ${median(t.cpuUs).toFixed(0).padStart(4)} µs/req   unexpected status/errors ${t.bad}   ` +
      `rounds ${t.results.map((x) => x.toFixed(0)).join(' ')}`,
  );
}
const [bare, health, verifyKey, keys, unknown] = targets as [Target, Target, Target, Target, Target];
/** Median over rounds of (target ÷ bare of the same round), and the per-round ratios. */
const ratio = (t: Target, of: (x: Target, i: number) => number, inverse = false) => {
  const rs = t.results.map((_, i) => (inverse ? of(bare, i) / of(t, i) : of(t, i) / of(bare, i)));
  return `${median(rs).toFixed(2)}  (rounds ${rs.map((x) => x.toFixed(2)).join(' ')})`;
};
const rps = (x: Target, i: number) => x.results[i]!;
const cpu = (x: Target, i: number) => x.cpuUs[i]!;
console.log(`health / bare                 = ${ratio(health, rps)}  goal ≥ 0.80`);
console.log(`authenticated (verify/key)    = ${ratio(verifyKey, rps)}  goal ≥ 0.60`);
console.log(`authenticated (auth/keys)     = ${ratio(keys, rps)}  goal ≥ 0.60 (includes a store read)`);
console.log(`unknown key / bare            = ${ratio(unknown, rps)}  no goal: every one reads the store`);
console.log(
  `by server CPU per request (bare ÷ Folio): health ${ratio(health, cpu, true)}, verify/key ${ratio(verifyKey, cpu, true)}, ` +
    `auth/keys ${ratio(keys, cpu, true)}, unknown key ${ratio(unknown, cpu, true)}`,
);
console.log(`load average ${load()} at the end`);
child.kill('SIGTERM');
