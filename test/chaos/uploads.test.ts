/**
 * Issue 24, from the outside: 100 concurrent 24 MB uploads from 10 free keys (10 each, the per-key limit)
 * against the compiled API as a child process with its in-flight byte budget set (INFLIGHT_BYTES_MB).
 * Before the budget this burst drove the API to 2.6–2.9 GB (multipart) and 5.9 GB (JSON), health to
 * 2.4–7 s, and the process stayed at 3.8 GB afterwards. Asserted: the process tree's peak RSS stays under
 * its idle RSS + the budget + a fixed margin; every upload gets an answer, 2xx/4xx or 503 with Retry-After
 * (no 500, no reset); some uploads are served; /v1/health (polled from its own thread, a new connection per
 * probe from the start of the burst) answers with p99 under 1 s during the burst; and the tree's RSS is back
 * near idle within a minute.
 *
 * The documents are honest (an unsigned 24 MB PDF that verify reads: 200); one buffer serves every
 * upload, so this process holds ~60 MB, not 2.4 GB. About 1–2 minutes.
 */
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FolioProcess, HealthPoller, MB, descendants, percentile, rssOf, serverEnv } from '../adversarial/server.js';
import { bigPdf, burst, prepareBody, settleRss, statusCounts, treeRss, upload, type BodyKind, type BurstResult } from './upload-load.js';

/** The server's budget of request bytes in flight. */
const BUDGET_MB = 400;
/**
 * What the budget does not see: V8 heap the main and engine threads grow under load, allocator
 * bookkeeping, answers in transit. Measured peaks were 190–300 MB above idle with this 400 MB budget
 * (multipart and JSON, the reservation counts 3× the body where 2.0–2.6× was used); 350 MB over the budget
 * still catches a budget that is not applied (the same burst without one reached 4.1 and 5.9 GB).
 */
const MARGIN_MB = 350;
/** "Back near idle": within this of the RSS before the bursts, within a minute (measured: within 10 s). */
const SETTLE_MB = 100;
const SETTLE_MS = 60_000;
const HEALTH_P99_MS = 1_000;
const KEYS = 10;
const PER_KEY = 10;
const DOCUMENT_BYTES = 24 * MB;

let server: FolioProcess;
const keys: string[] = [];
let idleRss = 0;
const pdf = bigPdf(DOCUMENT_BYTES);

describe('100 concurrent 24 MB uploads from 10 keys under an in-flight byte budget', () => {
  beforeAll(async () => {
    server = await FolioProcess.start({
      ...serverEnv({ engineTimeoutMs: 30_000, officeTimeoutMs: 60_000 }),
      INFLIGHT_BYTES_MB: String(BUDGET_MB),
      // As the container and `npm start` run it (docs/operations.md, "Memory after a burst").
      MALLOC_ARENA_MAX: '2',
      MALLOC_MMAP_THRESHOLD_: '131072',
    });
    for (let i = 0; i < KEYS; i++) keys.push(await server.newKey());
    // One upload of each kind first, so that idle means "warm" (engine modules loaded, heaps grown once).
    for (const kind of ['multipart', 'json'] as BodyKind[]) {
      const r = await burst({ baseUrl: server.url, path: '/v1/verify', keys: [keys[0]!], perKey: 1, body: prepareBody(kind, pdf), pid: server.pid });
      expect(r.results[0]!.status, `warm-up ${kind}`).toBe(200);
    }
    await settleRss(server.pid, 0, 3_000);
    idleRss = treeRss(server.pid);
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
  });

  for (const kind of ['multipart', 'json'] as BodyKind[]) {
    it(`${kind}: bounded RSS, only 2xx/4xx or 503 + Retry-After, health p99 < 1 s`, { timeout: 120_000 }, async () => {
      await server.loopDelayMax(); // resets the server's own event-loop delay histogram
      // Every probe opens a new connection (as Kubernetes httpGet probes and most load balancers do), starting
      // with the burst: its connection waits in the accept queue behind the 100 uploads', which libuv accepts
      // one per loop iteration. When the refused bodies were all discarded at once that took 2–5 s (iterations
      // of 50–400 ms); src/http/body-discard.ts discards them two at a time.
      const from = Date.now();
      const poller = new HealthPoller(server.url, 50, { fresh: true });
      let result: BurstResult;
      try {
        result = await burst({
          baseUrl: server.url,
          path: '/v1/verify',
          keys,
          perKey: PER_KEY,
          body: prepareBody(kind, pdf),
          pid: server.pid,
          timeoutMs: 90_000,
        });
      } finally {
        await poller.stop();
      }
      const health = poller.samples.filter((s) => s.at >= from).map((s) => (s.status === 200 ? s.ms : Infinity));
      const counts = statusCounts(result.results);
      const p99 = percentile(health, 99);
      // The server's own longest event-loop delay tells a blocked main thread from a machine short of CPU.
      const loopMax = await server.loopDelayMax();
      const slow = poller.samples.filter((s) => s.at >= from && (s.status !== 200 || s.ms > HEALTH_P99_MS));
      if (slow.length > 0)
        console.log(
          `${kind}: slow or failed health probes (ms after the burst started): ${JSON.stringify(slow.map((s) => ({ after: s.at - from, ms: Math.round(s.ms), status: s.status })))}`,
        );
      console.log(
        `${kind}: ${JSON.stringify(counts)}; peak tree RSS ${Math.round(result.peakRss / MB)} MB (idle ${Math.round(idleRss / MB)} MB, ` +
          `budget ${BUDGET_MB} MB); health p99 ${Math.round(p99)} ms over ${health.length} probes (server loop delay max ${Math.round(loopMax)} ms, load ${os.loadavg()[0]!.toFixed(1)}); ${Math.round(result.ms)} ms`,
      );
      expect(server.alive(), server.logTail()).toBe(true);
      for (const r of result.results) {
        expect(r.status, `an answer, not ${r.error}`).not.toBe(0);
        expect(r.status === 503 || (r.status >= 200 && r.status < 500), `status ${r.status} (${r.code})`).toBe(true);
        if (r.status === 503) expect(r.retryAfter, '503 without Retry-After').toMatch(/^\d+$/);
      }
      expect(result.results.filter((r) => r.status === 200).length, 'some uploads are served').toBeGreaterThan(0);
      expect(result.peakRss).toBeLessThan(idleRss + (BUDGET_MB + MARGIN_MB) * MB);
      expect(health.length).toBeGreaterThan(0);
      expect(p99).toBeLessThan(HEALTH_P99_MS);
    });
  }

  for (const kind of ['multipart', 'json'] as BodyKind[]) {
    it(`${kind}: a chunked 24 MB upload (no Content-Length) is counted as it arrives and served`, { timeout: 60_000 }, async () => {
      const r = await upload(server.url, '/v1/verify', keys[1]!, prepareBody(kind, pdf), { timeoutMs: 50_000, chunked: true });
      expect(r.status, r.error ?? r.code).toBe(200);
    });
  }

  it('a refused upload on a Connection: close connection still reads its 503 (the body is discarded first)', { timeout: 60_000 }, async () => {
    // Six keep-alive uploads hold the 400 MB budget (6 × 24 MB × 3 > 400 MB) while six more close-connection
    // uploads arrive: the refused ones must get their answer, not a reset.
    const body = prepareBody('multipart', pdf);
    const results = await Promise.all([
      ...keys.slice(0, 6).map((k) => upload(server.url, '/v1/verify', k, body)),
      ...keys.slice(0, 6).map((k) => upload(server.url, '/v1/verify', k, body, { close: true })),
    ]);
    console.log(`Connection: close mix: ${JSON.stringify(statusCounts(results))}`);
    for (const r of results) expect([200, 503], `${r.status} ${r.error ?? ''}`).toContain(r.status);
    expect(results.filter((r) => r.status === 503).length).toBeGreaterThan(0);
  });

  it('a 5 MB JSON body outside a document endpoint is refused (413) without a key and without being stored', async () => {
    // Fastify parses the body of an unknown path before answering 404: only requests holding a share of the
    // byte budget may send document-sized bodies.
    const r = await upload(server.url, '/v1/no-such-path', 'not-a-key', prepareBody('json', pdf.subarray(0, 4 * MB)));
    expect(r.status).toBe(413);
    expect(r.code).toBe('FILE_TOO_LARGE');
  });

  it('the RSS is back near idle within a minute of the bursts', { timeout: SETTLE_MS + 10_000 }, async () => {
    const settled = await settleRss(server.pid, idleRss + SETTLE_MB * MB, SETTLE_MS);
    const parts = [
      `API ${Math.round((rssOf(server.pid) ?? 0) / MB)} MB`,
      ...descendants(server.pid).map((d) => `${d.name} ${Math.round(d.rss / MB)} MB`),
    ];
    console.log(
      `RSS ${Math.round(settled.rss / MB)} MB after ${Math.round(settled.ms / 1000)} s (idle ${Math.round(idleRss / MB)} MB): ${parts.join(', ')}`,
    );
    expect(settled.rss).toBeLessThanOrEqual(idleRss + SETTLE_MB * MB);
  });
});
