/**
 * Issue 2 / issue 14 benchmark: requests/s (autocannon, 50 connections) of GET /v1/health and of an
 * authenticated request against a bare Fastify hello-world, in one run.
 * Goals: health ≥ 0.8× bare, authenticated ≥ 0.6× bare.
 *
 * The authenticated target is `GET /v1/auth/keys` with `Authorization: Bearer`: a real operation of the
 * contract whose work besides authentication is one indexed read of the caller's keys (one row here) and
 * a small JSON answer; nothing in it is cached, so the listing stays exact. Authentication itself is the
 * in-process key cache (src/auth/key-cache.ts) after the first request. A second line shows the same
 * request with an unknown (well-formed) key: every one of those reaches the store (misses are never
 * cached), the worst case of the authenticated path.
 *
 * The machine is shared and its load moves during a run, so the targets are measured in interleaved rounds
 * (BENCH_ROUNDS, default 3, of BENCH_SECONDS each, default 4) and each figure is the median of its rounds;
 * the ratios are of medians. Beside req/s, the server's own CPU time per request (utime + stime of the
 * server process from /proc, Linux) is shown: it hardly depends on what else runs on the machine, and its
 * ratio (bare CPU per request / Folio CPU per request) is what req/s would give on an idle core. BENCH_REDIS_URL runs the API with Redis (shared limits, subscribed key cache).
 */
import fs from 'node:fs';
import autocannon from 'autocannon';
import { startBenchServer } from './support.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 4);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);

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

console.log(`autocannon, 50 connections, ${rounds} interleaved rounds of ${seconds} s per target (medians)`);
// Short warm-up so JIT and connection setup do not count.
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
    `${t.title.padEnd(38)} ${median(t.results).toFixed(0).padStart(8)} req/s   p99 ${String(median(t.p99)).padStart(4)} ms   ` +
      `server CPU ${median(t.cpuUs).toFixed(0).padStart(4)} µs/req   unexpected status/errors ${t.bad}   ` +
      `rounds ${t.results.map((x) => x.toFixed(0)).join(' ')}`,
  );
}
const [bare, health, authed, unknown] = targets.map((t) => median(t.results)) as [number, number, number, number];
console.log(`health / bare        = ${(health / bare).toFixed(2)}  (goal ≥ 0.80)`);
console.log(`authenticated / bare = ${(authed / bare).toFixed(2)}  (goal ≥ 0.60)`);
console.log(`unknown key / bare   = ${(unknown / bare).toFixed(2)}  (no goal: every one reads the store)`);
const [cBare, cHealth, cAuthed, cUnknown] = targets.map((t) => median(t.cpuUs)) as [number, number, number, number];
console.log(
  `by server CPU per request: health ${(cBare / cHealth).toFixed(2)}, authenticated ${(cBare / cAuthed).toFixed(2)}, ` +
    `unknown key ${(cBare / cUnknown).toFixed(2)} (× bare)`,
);
child.kill('SIGTERM');
