/**
 * Capacity under pressure (issue 24): `npm run bench -- pressure` (≈ 5–8 minutes; on demand only).
 *
 * For two set-ups — this machine as it is (the in-flight budget derived from the host's memory) and a pod
 * of the Kubernetes manifests' size (MEMORY_LIMIT_MB=3584, two LibreOffice workers at OFFICE_MEMORY_MB=1024,
 * two engine threads at ENGINE_MEMORY_MB=512, as deploy/kubernetes/configmap.yaml) — the compiled API runs
 * as a child process and takes bursts of honest 24 MB uploads (an unsigned 24 MB PDF to /v1/verify, 200)
 * from up to ten keys, 10 per key at most (the per-key limit), growing until one fails. Per burst size:
 * - first try: how many were served at once and how many were told 503 + Retry-After;
 * - with retries as @folio/client does them (503/429 honoured after Retry-After, within 3 minutes): whether
 *   every upload was served, the answers other than 200/503 (a 5xx other than 503 ends the run), the peak
 *   RSS of the process tree (API + LibreOffice) against the limit, and /v1/health p99 during the burst
 *   (polled every 50 ms from its own thread);
 * then, after the largest burst, the time the tree's RSS takes to come back within 100 MB of idle.
 *
 * "Absorbed" = every upload served (first try or after Retry-After), no 5xx but 503, RSS under the limit.
 * PRESSURE_SIZES (default 10,20,50,100) and PRESSURE_KIND (multipart|json, default multipart) change the run;
 * PRESSURE_SETUPS=pod runs only the pod.
 */
import os from 'node:os';
import { loadConfig } from '../src/modules/config.js';
import { FolioProcess, HealthPoller, MB, descendants, percentile, rssOf, serverEntry } from '../test/adversarial/server.js';
import { bigPdf, prepareBody, settleRss, statusCounts, treeRss, upload, type BodyKind, type UploadResult } from '../test/chaos/upload-load.js';

const SIZES = (process.env.PRESSURE_SIZES ?? '10,20,50,100').split(',').map(Number);
const KIND = (process.env.PRESSURE_KIND ?? 'multipart') as BodyKind;
const SETUPS = (process.env.PRESSURE_SETUPS ?? 'host,pod').split(',');
const RETRY_WITHIN_MS = 180_000;
const SETTLE_WITHIN_MS = 120_000;
const POD_LIMIT_MB = 3584;

interface Setup {
  name: string;
  env: Record<string, string>;
  /** Tree RSS an upload burst must stay under (the pod's limit; the host's memory otherwise). */
  limitBytes: number;
}

const common = {
  ENGINE_TIMEOUT_MS: '30000',
  OFFICE_TIMEOUT_MS: '60000',
  ENGINE_MEMORY_MB: '512',
  // As the container and `npm start` run it (docs/operations.md, "Memory after a burst").
  MALLOC_ARENA_MAX: '2',
  MALLOC_MMAP_THRESHOLD_: '131072',
};
const setups: Setup[] = [
  {
    name: `this machine (${Math.round(os.totalmem() / MB)} MB, ${os.availableParallelism()} CPUs)`,
    env: { ...common, OFFICE_WORKERS: '1' },
    limitBytes: os.totalmem(),
  },
  {
    name: `pod (${POD_LIMIT_MB} MiB, 2 CPUs)`,
    env: { ...common, MEMORY_LIMIT_MB: String(POD_LIMIT_MB), OFFICE_WORKERS: '2', OFFICE_MEMORY_MB: '1024', ENGINE_WORKERS: '2' },
    limitBytes: POD_LIMIT_MB * MB,
  },
].filter((s) => SETUPS.some((k) => s.name.startsWith(k === 'host' ? 'this machine' : k)));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One upload retried after each 503/429's Retry-After (plus jitter) until served or out of time. */
async function uploadWithRetries(
  server: FolioProcess,
  key: string,
  body: ReturnType<typeof prepareBody>,
): Promise<{ first: UploadResult; last: UploadResult; tries: number }> {
  const until = performance.now() + RETRY_WITHIN_MS;
  const first = await upload(server.url, '/v1/verify', key, body);
  let last = first;
  let tries = 1;
  while ((last.status === 503 || last.status === 429) && performance.now() < until) {
    await sleep(Number(last.retryAfter ?? 1) * 1000 * (0.5 + Math.random()));
    last = await upload(server.url, '/v1/verify', key, body);
    tries++;
  }
  return { first, last, tries };
}

console.log(`pressure: bursts of ${SIZES.join(', ')} × 24 MB ${KIND} uploads to /v1/verify; server ${serverEntry().label}`);
console.log(
  `host: ${os.availableParallelism()} CPUs, load average ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}, ${new Date().toISOString()}`,
);
const pdf = bigPdf(24 * MB);
const body = prepareBody(KIND, pdf);

for (const setup of setups) {
  const server = await FolioProcess.start(setup.env);
  try {
    // The budget the server derived, as its own configuration computes it from the same environment.
    const budgetMb = Math.round(loadConfig({ ...process.env, ...setup.env }).inFlightBytes / MB);
    const keys: string[] = [];
    for (let i = 0; i < 10; i++) keys.push(await server.newKey());
    // Warm: one upload, then idle.
    await upload(server.url, '/v1/verify', keys[0]!, body);
    await sleep(3000);
    const idle = treeRss(server.pid);
    console.log(`\n${setup.name}: idle tree RSS ${Math.round(idle / MB)} MB, in-flight budget ${budgetMb} MB`);
    console.log('  burst | first try: 200 / 503 | after Retry-After: answers            | tries | peak RSS MB (limit) | health p99 / max ms | s');
    let largest = 0;
    for (const size of SIZES) {
      // A new connection per probe from the start of the burst, as Kubernetes probes and load balancers open
      // them (see test/chaos/uploads.test.ts).
      const poller = new HealthPoller(server.url, 50, { fresh: true });
      let peak = 0;
      const sampler = setInterval(() => (peak = Math.max(peak, treeRss(server.pid))), 50);
      const from = Date.now();
      const t0 = performance.now();
      const runs = await Promise.all(Array.from({ length: size }, (_, i) => uploadWithRetries(server, keys[i % keys.length]!, body)));
      const seconds = (performance.now() - t0) / 1000;
      clearInterval(sampler);
      await poller.stop();
      peak = Math.max(peak, treeRss(server.pid));
      const health = poller.samples.filter((s) => s.at >= from).map((s) => (s.status === 200 ? s.ms : 2000));
      const firstOk = runs.filter((r) => r.first.status === 200).length;
      const first503 = runs.filter((r) => r.first.status === 503).length;
      const finals = statusCounts(runs.map((r) => r.last));
      const bad5xx =
        runs.some((r) => r.first.status >= 500 && r.first.status !== 503) || runs.some((r) => r.last.status >= 500 && r.last.status !== 503);
      const noAnswer = runs.some((r) => r.first.status === 0 || r.last.status === 0);
      const allServed = runs.every((r) => r.last.status === 200);
      const overLimit = peak > setup.limitBytes;
      console.log(
        `  ${String(size).padStart(5)} | ${String(firstOk).padStart(9)} / ${String(first503).padEnd(3)} | ${JSON.stringify(finals).padEnd(36)} | ${String(Math.max(...runs.map((r) => r.tries))).padStart(5)} | ` +
          `${String(Math.round(peak / MB)).padStart(6)} (${Math.round(setup.limitBytes / MB)}) | ${String(Math.round(percentile(health, 99))).padStart(6)} / ${String(Math.round(Math.max(...health))).padEnd(6)} | ${seconds.toFixed(0)}`,
      );
      if (bad5xx || noAnswer || overLimit || !allServed || !server.alive()) {
        console.log(
          `  stopped: ${bad5xx ? '5xx other than 503; ' : ''}${noAnswer ? 'an upload got no answer; ' : ''}${overLimit ? 'RSS over the limit; ' : ''}${!allServed ? 'not every upload served; ' : ''}`,
        );
        break;
      }
      largest = size;
    }
    const settled = await settleRss(server.pid, idle + 100 * MB, SETTLE_WITHIN_MS);
    const m = await server.metrics();
    const parts = [
      `API ${Math.round((rssOf(server.pid) ?? 0) / MB)} MB`,
      ...descendants(server.pid).map((d) => `${d.name} ${Math.round(d.rss / MB)} MB`),
    ];
    console.log(
      `  after: ${parts.join(', ')}; API main thread heap ${Math.round((m.nodejs_heap_size_total_bytes ?? 0) / MB)} MB, external ${Math.round((m.nodejs_external_memory_bytes ?? 0) / MB)} MB`,
    );
    console.log(
      `  largest burst absorbed: ${largest} × 24 MB; RSS back within 100 MB of idle (${Math.round(idle / MB)} MB): ` +
        (settled.rss <= idle + 100 * MB
          ? `after ${(settled.ms / 1000).toFixed(0)} s`
          : `not within ${SETTLE_WITHIN_MS / 1000} s (${Math.round(settled.rss / MB)} MB)`),
    );
  } finally {
    await server.stop();
  }
}
