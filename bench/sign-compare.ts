/**
 * Issue 26: the server CPU of one POST /v1/sign, compared between two checkouts on one machine, steadily enough to
 * tell a few per cent apart. bench/sign.ts's figure (utime + stime of 15 requests in 10 ms clock ticks, one run)
 * moved by ±20% between runs of one tree: a full GC of an engine thread falls in one run's window and not in the
 * next. Here each request's CPU is read from every thread's schedstat (nanoseconds: main thread, engine threads,
 * V8's GC helpers), the trees take turns (ROUNDS rounds, each a fresh server), and the figure is the median of
 * each round's per-request median, with the mean beside it (the mean keeps the GC cost the median leaves out).
 * Then 8 clients at once for CONCURRENT_SECONDS (default 5) on the 1-page PDF: requests/s and server CPU per
 * request. (A load run's in-flight requests are cut when it stops, which aborts their jobs and replaces their
 * engine threads, so it comes last in each round, after a sequential warm-up, never before a measurement.)
 *
 *   BENCH_COMPARE_TREES=/tmp/before,. npm run bench -- sign-compare
 *
 * A tree is any checkout of Folio with bench/sign.ts (it serves with `--server file`); both are given the same
 * PDFs (bench/support.ts of this tree). ROUNDS (default 6), RUNS (100-page requests per round, default 100).
 */
import { spawn } from 'node:child_process';
import autocannon from 'autocannon';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { contractPdf } from './support.js';

const trees = (process.env.BENCH_COMPARE_TREES ?? '.').split(',').map((t) => path.resolve(t));
const rounds = Number(process.env.ROUNDS ?? 6);
const runs = Number(process.env.RUNS ?? 100);

/** CPU time of every thread of `pid` so far, in milliseconds (threads that ended in between are lost; none do here). */
function threadCpuMs(pid: number): number {
  let ns = 0;
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      /* the thread ended */
    }
  }
  return ns / 1e6;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

function body(pdf: Uint8Array): string {
  return JSON.stringify({
    document: { base64: Buffer.from(pdf).toString('base64') },
    signer: { name: 'Ada Lovelace', email: 'ada@example.com', ip: '203.0.113.7', userAgent: 'Mozilla/5.0' },
    auditTrail: [{ type: 'document.signed', timestamp: '2026-11-20T09:16:30Z' }],
  });
}

interface Round {
  one: number[];
  hundred: number[];
  perSecond: number;
  concurrentCpu: number;
}

async function round(tree: string, one: string, hundred: string): Promise<Round> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(tree, 'bench/sign.ts'), '--server', 'file'], {
    cwd: tree,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  try {
    const info = await new Promise<{ port: number; apiKey: string }>((resolve, reject) => {
      let buf = '';
      child.stderr.on('data', (d) => {
        buf += d;
        const line = buf.split('\n').find((l) => l.startsWith('{'));
        if (line) resolve(JSON.parse(line) as { port: number; apiKey: string });
      });
      child.on('exit', (c) => reject(new Error(`${tree}: server exited ${c}: ${buf}`)));
    });
    const url = `http://127.0.0.1:${info.port}/v1/sign`;
    const headers = { authorization: `Bearer ${info.apiKey}`, 'content-type': 'application/json' };
    const post = async (payload: string) => {
      const res = await fetch(url, { method: 'POST', headers, body: payload });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`${tree}: HTTP ${res.status}`);
    };
    const measure = async (payload: string, n: number) => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) {
        const before = threadCpuMs(child.pid!);
        await post(payload);
        // The answer is sent before the engine thread's job has fully unwound: a moment for it to finish.
        await new Promise((r) => setTimeout(r, 5));
        out.push(threadCpuMs(child.pid!) - before);
      }
      return out;
    };
    for (let i = 0; i < 40; i++) await post(one); // warm-up: modules, JIT, both engine threads
    for (let i = 0; i < 3; i++) await post(hundred);
    const measured = { one: await measure(one, Math.ceil(runs / 2)), hundred: await measure(hundred, runs) };
    const cpuBefore = threadCpuMs(child.pid!);
    const load = await autocannon({ url, method: 'POST', headers, body: one, connections: 8, duration: Number(process.env.CONCURRENT_SECONDS ?? 5) });
    const concurrentCpu = (threadCpuMs(child.pid!) - cpuBefore) / load.requests.total;
    return { ...measured, perSecond: load.requests.average, concurrentCpu };
  } finally {
    child.kill('SIGTERM');
  }
}

const one = body(await contractPdf(1));
const hundred = body(await contractPdf(100));
console.log(
  `POST /v1/sign server CPU per request (all threads, schedstat), ${rounds} rounds taking turns, ${runs} 100-page and ` +
    `${Math.ceil(runs / 2)} 1-page requests per round; ${os.cpus().length} CPUs, load ${os.loadavg()[0]!.toFixed(2)}`,
);
const results = new Map(
  trees.map((t) => [
    t,
    {
      one: [] as number[],
      hundred: [] as number[],
      oneMean: [] as number[],
      hundredMean: [] as number[],
      perSecond: [] as number[],
      concurrentCpu: [] as number[],
    },
  ]),
);
for (let r = 0; r < rounds; r++) {
  for (const tree of trees) {
    const got = await round(tree, one, hundred);
    const acc = results.get(tree)!;
    acc.one.push(median(got.one));
    acc.hundred.push(median(got.hundred));
    acc.oneMean.push(mean(got.one));
    acc.hundredMean.push(mean(got.hundred));
    acc.perSecond.push(got.perSecond);
    acc.concurrentCpu.push(got.concurrentCpu);
    console.log(
      `  round ${r + 1} ${tree}: 1 page ${median(got.one).toFixed(1)} ms, 100 pages ${median(got.hundred).toFixed(1)} ms (medians); ` +
        `8 clients ${got.perSecond.toFixed(1)} req/s, ${got.concurrentCpu.toFixed(1)} ms/request`,
    );
  }
}
for (const [tree, acc] of results) {
  console.log(
    `${tree}: 1-page median ${median(acc.one).toFixed(1)} ms (mean ${mean(acc.oneMean).toFixed(1)})   ` +
      `100-page median ${median(acc.hundred).toFixed(1)} ms (mean ${mean(acc.hundredMean).toFixed(1)})   ` +
      `8 clients ${median(acc.perSecond).toFixed(1)} req/s (median), ${median(acc.concurrentCpu).toFixed(1)} ms/request`,
  );
}
