/**
 * Issue 2 benchmark: requests/s (autocannon, 50 connections) of GET /v1/health and of the cheapest
 * authenticated request (GET /v1/auth/keys) against a bare Fastify hello-world, in one run.
 * Goals: health ≥ 0.8× bare, authenticated ≥ 0.6× bare.
 */
import autocannon from 'autocannon';
import { startBenchServer } from './support.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 8);

const { child, info } = await startBenchServer<{ bare: number; api: number; apiKey: string }>('bench/servers/foundation.ts');

async function run(title: string, url: string, headers: Record<string, string> = {}) {
  // Short warm-up so JIT and connection setup do not count.
  await autocannon({ url, connections: 50, duration: 1, headers });
  const r = await autocannon({ url, connections: 50, duration: seconds, headers });
  const non2xx = r.non2xx + r.errors;
  console.log(
    `${title.padEnd(34)} ${r.requests.average.toFixed(0).padStart(8)} req/s   p99 ${String(r.latency.p99).padStart(4)} ms   non-2xx/errors ${non2xx}`,
  );
  return r.requests.average;
}

console.log(`autocannon, 50 connections, ${seconds} s per target`);
const bare = await run('bare Fastify GET /hello', `http://127.0.0.1:${info.bare}/hello`);
const health = await run('Folio GET /v1/health', `http://127.0.0.1:${info.api}/v1/health`);
const authed = await run('Folio GET /v1/auth/keys (Bearer)', `http://127.0.0.1:${info.api}/v1/auth/keys`, {
  authorization: `Bearer ${info.apiKey}`,
});
console.log(`health / bare        = ${(health / bare).toFixed(2)}  (goal ≥ 0.80)`);
console.log(`authenticated / bare = ${(authed / bare).toFixed(2)}  (goal ≥ 0.60)`);
child.kill('SIGTERM');
