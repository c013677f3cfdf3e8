/**
 * Issue 12, from the outside: hostile and oversized inputs for every engine against the real server process.
 * For each input: the answer is one the contract allows (status and envelope code; 200 only with valid
 * output), it came within its budget, /v1/health (polled every 25 ms from another thread) answered every
 * time and quickly, and the server is the same live process. Then: ten concurrent jobs overflow
 * ENGINE_QUEUE_SIZE (503 + Retry-After), a small job right after two threads were stopped at their budget is
 * served, a normal request of each kind still succeeds, and the server's RSS came back under a bound.
 * Each case prints one line (answer, time, health p99/max, the server's own longest event-loop delay, which
 * tells a blocked main thread from a host short of CPU) and afterAll prints the table again.
 *
 * A frozen server makes the case fail at its deadline (not hang the run); it is then killed and a fresh one
 * started so that the remaining cases still say something, and the final "same process" test fails.
 */
import fs from 'node:fs';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CORPUS_DOCX } from '../helpers/corpus.js';
import { HOSTILE, envelope, footnotesMarkdown, judge, validCases, type Budget } from './generators.js';
import { FolioProcess, HealthPoller, MB, descendants, percentile, serverEnv, type SendResult } from './server.js';

const ENGINE_TIMEOUT_MS = 8_000;
const OFFICE_TIMEOUT_MS = 15_000;
/**
 * A previous case may just have had the LibreOffice worker replaced (memory ceiling or budget); its cold start,
 * slow on a loaded 2-core box, is waiting time, not the conversion's budget.
 */
const OFFICE_RESTART_MS = 20_000;
/** Upload, base64 decoding, queueing behind the previous victim's replacement worker, a loaded 2-core box. */
const MARGIN_MS = 6_000;
/**
 * Longest health answer tolerated during one case. Before isolation these cases froze health for minutes;
 * 20 MB inputs still cost the event loop a few hundred ms in transit (upload, copies to and from threads),
 * so the bound is 1 s here and the p99 goal is measured by the soak benchmark.
 */
const HEALTH_MAX_MS = 1_000;
/**
 * Main thread + two engine threads + the body thread, each keeping some heap after a burst of hostile work
 * (V8 returns freed pages lazily); a leak of per-request memory over the ~50 cases would pass it quickly.
 * Raised from 700 MB when the engine threads began preloading merge (pdf-lib) and the ASN.1 schema
 * libraries and Markdown got its direct writer: fresh-clone CI runs ended at 845, 957 and 1,003 MB.
 * Measured since (bench/README.md, "API memory"): an idle engine thread cost ~83 MB when it preloaded every
 * engine (sign's pdf-lib and fonts 43 MB, convert 20, fetch 11, merge 9) and ~30 MB since it loads them per
 * task kind; after this suite a thread holds what its jobs loaded, and the rest is heap that threads
 * keep after the large cases that finish, so the figure depends on how many of them finish rather than time
 * out and get their thread replaced (601 and 375 MB at load 20-28, where many time out). A GC after large
 * jobs, MALLOC_ARENA_MAX=2 and a smaller young generation each changed nothing measurable. Raised from
 * 1,150 MB when the engine threads began warming up V8 at start (compiled code and feedback they keep): the
 * two fresh-clone CI runs since ended at 981 and 1,084 MB, too close to the old bound for a check that must
 * not flake. A per-request leak of 7 MB or more over the ~50 cases still crosses it from the lowest end seen.
 */
const RSS_BOUND = 1_300 * MB;

const ENGINE_WORKERS = 2;
/** Small, so that the saturation case can overflow it with ten requests. */
const ENGINE_QUEUE_SIZE = 4;
const ENV = serverEnv({
  engineTimeoutMs: ENGINE_TIMEOUT_MS,
  officeTimeoutMs: OFFICE_TIMEOUT_MS,
  engineWorkers: ENGINE_WORKERS,
  engineQueueSize: ENGINE_QUEUE_SIZE,
});

function budgetMs(b: Budget): number {
  const t = {
    engine: ENGINE_TIMEOUT_MS,
    office: OFFICE_TIMEOUT_MS + OFFICE_RESTART_MS,
    'engine+office': ENGINE_TIMEOUT_MS + OFFICE_TIMEOUT_MS + OFFICE_RESTART_MS,
    none: 2_000,
  }[b];
  return t + MARGIN_MS;
}

const SIMPLE_LIST_DOCX = `${CORPUS_DOCX}/mammoth--simple-list.docx`;

interface Row {
  id: string;
  klass: string;
  status: number;
  code: string;
  ms: number;
  healthP99: number;
  healthMax: number;
  healthMissed: number;
  /** Health answers other than 200 (503 "unhealthy" while an engine has no live worker). */
  healthNot200: number;
  /** Longest event-loop delay inside the server during the case (its own metrics). */
  loopMax: number;
  verdict: string;
}

describe.sequential('adversarial inputs against the running server', () => {
  let srv: FolioProcess | undefined;
  let poller: HealthPoller;
  let apiKey = '';
  let firstPid = 0;
  const restarts: string[] = [];
  const rows: Row[] = [];
  const allHealth: number[] = [];

  async function startServer() {
    srv = await FolioProcess.start(ENV);
    apiKey = await srv.newKey();
    poller?.setUrl(srv.url);
  }

  /** A dead or frozen server (from a previous case) is replaced, so the next case is judged on its own. */
  async function ensureServer(why: string) {
    const responsive =
      srv?.alive() &&
      (await fetch(`${srv.url}/v1/health`, { signal: AbortSignal.timeout(3000) }).then(
        () => true,
        () => false,
      ));
    if (responsive) return;
    restarts.push(`${why}: ${srv?.alive() ? 'frozen' : `dead ${JSON.stringify(srv?.exitInfo())}`}`);
    srv?.kill();
    await srv?.stop(0);
    await startServer();
  }

  beforeAll(async () => {
    await startServer();
    firstPid = srv!.pid;
    poller = new HealthPoller(srv!.url);
  }, 180_000);

  afterAll(async () => {
    const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : '-');
    console.log(`\nadversarial results against ${srv?.entry} (ms; health p99/max over the case; longest event-loop delay in the server):`);
    for (const r of rows) {
      console.log(
        `${r.verdict === 'ok' ? 'ok  ' : 'FAIL'} ${r.id.padEnd(42)} ${String(r.status).padStart(3)} ${r.code.padEnd(24)} ${fmt(r.ms).padStart(6)} ms  health p99 ${fmt(r.healthP99)} max ${fmt(r.healthMax)} missed ${r.healthMissed}${r.healthNot200 ? ` not-200 ${r.healthNot200}` : ''} loop ${fmt(r.loopMax)}${r.verdict === 'ok' ? '' : `  — ${r.verdict}`}`,
      );
    }
    console.log(
      `host: ${os.availableParallelism()} CPUs, load average at the end ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    console.log(
      `health over the whole run: ${allHealth.length} probes, p99 ${fmt(percentile(allHealth, 99))} ms, max ${fmt(Math.max(...allHealth))} ms`,
    );
    if (restarts.length) console.log(`server restarts: ${restarts.join('; ')}`);
    await poller?.stop();
    await srv?.stop();
  }, 60_000);

  for (const c of HOSTILE) {
    const budget = budgetMs(c.budget);
    it(
      c.id,
      async () => {
        await ensureServer(`before ${c.id}`);
        const server = srv!;
        const pid = server.pid;
        const spec = c.build();
        await server.loopDelayMax(); // resets the server's event-loop delay histogram
        const t0 = Date.now();
        let res: SendResult = await server.send(spec, apiKey, budget + 2_000);
        if (res.status === 429 && envelope(res).code === 'RATE_LIMIT_ERROR') {
          // Slots held by earlier abandoned requests are another issue's bug; report it, then go on with a new key.
          restarts.push(`${c.id}: 429 on a sequential client (leaked in-flight slots); new key`);
          apiKey = await server.newKey();
          res = await server.send(spec, apiKey, budget + 2_000);
        }
        const t1 = Date.now();
        const health = await poller.window(t0, t1);
        const loopMax = await server.loopDelayMax();
        const lat = health.filter((s) => s.status !== 0).map((s) => s.ms);
        allHealth.push(...lat);
        const problems: string[] = [];
        if (res.status === 0) problems.push(`no answer within ${budget + 2_000} ms (${res.error})`);
        else {
          const why = judge(c, res);
          if (why) problems.push(why);
          if (res.ms > budget) problems.push(`answered after ${res.ms.toFixed(0)} ms, budget ${budget} ms`);
        }
        const missed = health.filter((s) => s.status === 0).length;
        if (missed) problems.push(`/v1/health did not answer ${missed} of ${health.length} probes`);
        const hMax = lat.length ? Math.max(...lat) : NaN;
        if (hMax > HEALTH_MAX_MS) problems.push(`/v1/health took up to ${hMax.toFixed(0)} ms`);
        if (!server.alive()) problems.push(`server died: ${JSON.stringify(server.exitInfo())} ${server.logTail().slice(-600)}`);
        if (server.pid !== pid) problems.push('server pid changed');
        const e = res.status && res.status !== 200 ? envelope(res) : {};
        rows.push({
          id: c.id,
          klass: c.klass,
          status: res.status,
          code: e.code ?? (res.status === 200 ? 'OK' : (res.error ?? '')).slice(0, 24),
          ms: res.ms,
          healthP99: percentile(lat, 99),
          healthMax: hMax,
          healthMissed: missed,
          healthNot200: health.filter((s) => s.status !== 0 && s.status !== 200).length,
          loopMax,
          verdict: problems.length ? problems.join('; ') : 'ok',
        });
        const r = rows[rows.length - 1]!;
        // One line per case as it happens (the table in afterAll repeats them), so a long run shows progress.
        console.log(
          `${r.verdict === 'ok' ? 'ok  ' : 'FAIL'} ${c.id} → ${r.status} ${r.code} in ${r.ms.toFixed(0)} ms; health p99 ${r.healthP99.toFixed(0)} max ${r.healthMax.toFixed(0)} ms, event loop max ${r.loopMax.toFixed(0)} ms${r.healthNot200 ? `, health answered non-200 ${r.healthNot200}×` : ''}${r.verdict === 'ok' ? '' : ` — ${r.verdict}`}`,
        );
        expect(problems, `${c.klass} → ${res.status} ${e.code ?? ''} ${e.message ?? ''}`).toEqual([]);
      },
      budget + 150_000,
    );
  }

  it('saturated: beyond ENGINE_QUEUE_SIZE the answer is 503 with Retry-After, and health keeps answering', async () => {
    await ensureServer('before saturation');
    const server = srv!;
    const heavy = HOSTILE.find((c) => c.id === 'md.footnotes-20k@convert')!;
    const spec = heavy.build();
    // A queued job may wait for every job ahead of it on its thread, each up to its own budget.
    const budget = Math.ceil(ENGINE_QUEUE_SIZE / ENGINE_WORKERS + 1) * ENGINE_TIMEOUT_MS + MARGIN_MS;
    await server.loopDelayMax();
    const t0 = Date.now();
    const answers = await Promise.all(Array.from({ length: 10 }, () => server.send(spec, apiKey, budget + 2_000)));
    const health = await poller.window(t0, Date.now());
    const loopMax = await server.loopDelayMax();
    const lat = health.filter((s) => s.status !== 0).map((s) => s.ms);
    const problems: string[] = [];
    for (const a of answers) {
      if (a.status === 0) problems.push(`no answer within ${budget + 2_000} ms`);
      else if (a.status === 503) {
        if (envelope(a).code !== 'SERVICE_UNAVAILABLE') problems.push(`503 with code ${envelope(a).code}`);
        if (!a.retryAfter || !/^\d+$/.test(a.retryAfter)) problems.push(`503 without a Retry-After (${a.retryAfter})`);
      } else {
        const why = judge(heavy, a);
        if (why) problems.push(why);
      }
      if (a.ms > budget) problems.push(`answered after ${a.ms.toFixed(0)} ms, budget ${budget} ms`);
    }
    const n503 = answers.filter((a) => a.status === 503).length;
    if (n503 === 0) problems.push(`ten concurrent jobs for ${ENGINE_WORKERS} threads + ${ENGINE_QUEUE_SIZE} queued got no 503`);
    if (health.some((s) => s.status === 0)) problems.push('/v1/health missed probes');
    if (Math.max(...lat) > HEALTH_MAX_MS) problems.push(`/v1/health took up to ${Math.max(...lat).toFixed(0)} ms`);
    console.log(
      `saturation: health non-200 ${health.filter((h) => h.status !== 0 && h.status !== 200).length}×; ${answers.map((a) => `${a.status}${a.retryAfter ? `(Retry-After ${a.retryAfter})` : ''}`).join(' ')} in ${(Date.now() - t0).toFixed(0)} ms; health p99 ${percentile(lat, 99).toFixed(0)} max ${Math.max(...lat).toFixed(0)} ms, event loop max ${loopMax.toFixed(0)} ms`,
    );
    expect(problems).toEqual([]);
    expect(server.alive()).toBe(true);
  }, 180_000);

  it('serves a valid request right after both engine threads were stopped at their time budget', async () => {
    await ensureServer('before the replacement case');
    const server = srv!;
    const slow = {
      method: 'POST' as const,
      path: '/v1/convert?from=md&to=docx',
      file: { name: 'notes.md', bytes: Buffer.from(footnotesMarkdown(60_000)) },
    };
    const small = validCases(
      () => new Uint8Array(),
      () => new Uint8Array(),
    ).find((v) => v.endpoint === 'convert md→docx')!;
    await server.loopDelayMax();
    const t0 = Date.now();
    const victims = await Promise.all([0, 1].map(() => server.send(slow, apiKey, budgetMs('engine') + 2_000)));
    const win = await poller.window(t0, Date.now());
    const lat = win.map((h) => h.ms);
    console.log(
      `replacement: health non-200 ${win.filter((h) => h.status !== 0 && h.status !== 200).length}×; two slow jobs → ${victims.map((v) => `${v.status} in ${v.ms.toFixed(0)} ms`).join(', ')}; health max ${Math.max(...lat).toFixed(0)} ms, event loop max ${(await server.loopDelayMax()).toFixed(0)} ms`,
    );
    if (!victims.every((v) => v.status === 504)) return; // nothing was stopped (a cap answered first): nothing to test
    // The threads are being replaced now; a tiny job must not be charged for their start-up.
    const r = await server.send(small.build(), apiKey, budgetMs('engine') + 2_000);
    const after = await poller.window(t0, Date.now());
    console.log(
      `replacement: the next small md→docx → ${r.status} in ${r.ms.toFixed(0)} ms; health non-200 from the victims to here ${after.filter((h) => h.status !== 0 && h.status !== 200).length}× of ${after.length}`,
    );
    expect(`${r.status} ${r.status === 200 ? '' : r.body.toString('utf8').slice(0, 160)}`).toBe('200 ');
    expect(small.ok(r)).toBeUndefined();
  }, 120_000);

  it('still answers a normal request of each kind after the hostile run', async () => {
    await ensureServer('before the normal requests');
    const server = srv!;
    const docx = fs.readFileSync(SIMPLE_LIST_DOCX);
    let signed: Uint8Array | undefined;
    const failures: string[] = [];
    for (const v of validCases(
      () => docx,
      () => signed!,
    )) {
      const res = await server.send(v.build(), apiKey, budgetMs(v.endpoint === 'convert docx→pdf' ? 'engine+office' : 'engine'));
      const why = res.status === 200 ? v.ok(res) : `status ${res.status} ${res.body.toString('utf8').slice(0, 200)}`;
      if (why) failures.push(`${v.endpoint}: ${why}`);
      if (v.endpoint === 'sign' && res.status === 200) signed = Buffer.from(JSON.parse(res.body.toString('utf8')).document.base64, 'base64');
      if (v.endpoint === 'verify' && res.status === 200 && JSON.parse(res.body.toString('utf8')).signatureCount < 1)
        failures.push('verify: found no signature in the signed PDF');
    }
    expect(failures).toEqual([]);
  }, 180_000);

  it('is the same live process as at the start, and its memory came back under the bound', async () => {
    const server = srv!;
    // Give V8 and the pool a moment to shrink after the last victim.
    let rss = server.rss() ?? Infinity;
    const deadline = Date.now() + 20_000;
    while (rss > RSS_BOUND && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      rss = server.rss() ?? Infinity;
    }
    const kids = descendants(server.pid);
    console.log(
      `server pid ${server.pid} RSS ${(rss / MB).toFixed(0)} MB; children: ${kids.map((k) => `${k.name}(${k.pid}) ${(k.rss / MB).toFixed(0)} MB`).join(', ') || 'none'}`,
    );
    expect(restarts, 'the server had to be replaced or a key was locked out').toEqual([]);
    expect(server.pid).toBe(firstPid);
    expect(server.alive()).toBe(true);
    expect(rss).toBeLessThan(RSS_BOUND);
  }, 60_000);
});
