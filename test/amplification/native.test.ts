/**
 * Native work inside the request's budget (issue 23), against the compiled API as a child process
 * (test/adversarial/server.ts): poppler's pdftoppm and resvg are native code, which no thread termination
 * stops, so the server must bound them before they start (pixel budget), while they run (address-space cap,
 * the request's one deadline, SIGKILL) and after (a failed page is a 422, not a 1×1 image), and leave
 * nothing burning a core once the answer is out.
 *
 * One server, small budgets so every case ends in seconds: REQUEST_TIMEOUT_MS=5000, ENGINE_TIMEOUT_MS=3000,
 * PREVIEW_MAX_MEGAPIXELS=100, PREVIEW_MEMORY_MB=128 (a 80 MP page passes the pixel budget and fails inside
 * poppler's capped address space: the 1×1 case). The SVG cases go last: the last ends with SIGTERM.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelope } from '../adversarial/generators.js';
import { FolioProcess, HealthPoller, MB, cpuOf, descendants, serverEnv, type SendResult } from '../adversarial/server.js';
import { limitTools } from '../../src/native/bounded-child.js';
import { annotateSvgBody, heavySvg, slowPdf, tallPdf } from './native-inputs.js';
import { besidesOffice, svgChildren } from '../native/tree.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const REQUEST_TIMEOUT_MS = 5_000;
/** The address-space cap needs util-linux's prlimit (in every Debian image); without it those cases cannot hold. */
const capped = limitTools().prlimit !== undefined;
if (!capped) console.warn('native.test.ts: prlimit (util-linux) is not installed: the memory-cap cases are skipped');

function cmdline(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

describe('native work inside the request budget (compiled server)', () => {
  let srv: FolioProcess;
  let key: string;
  let poller: HealthPoller;

  beforeAll(async () => {
    srv = await FolioProcess.start({
      ...serverEnv({ engineTimeoutMs: 3_000, officeTimeoutMs: 60_000 }),
      OFFICE_WORKERS: '2',
      REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      PREVIEW_MAX_MEGAPIXELS: '100',
      PREVIEW_MEMORY_MB: '128',
    });
    key = await srv.newKey();
    poller = new HealthPoller(srv.url, 100);
  }, 180_000);
  afterAll(async () => {
    await poller?.stop();
    await srv?.stop();
  });

  const preview = (pdf: Buffer, query: string, deadlineMs = 60_000): Promise<SendResult> =>
    srv.send({ method: 'POST', path: `/v1/convert?${query}`, file: { name: 'in.pdf', bytes: pdf } }, key, deadlineMs);
  const treeRss = () => (srv.rss() ?? 0) + descendants(srv.pid).reduce((s, d) => s + d.rss, 0);
  const renderers = () => descendants(srv.pid).filter((d) => d.name === 'pdftoppm' && d.rss > 0);

  it('a page whose image would pass the pixel budget is a 422 naming the limit, before any render', async () => {
    const r = await preview(tallPdf(200, 8800), 'to=png&width=4000');
    expect(r.status).toBe(422);
    const env = envelope(r);
    expect(env.code).toBe('UNPROCESSABLE_DOCUMENT');
    expect(env.message).toMatch(/Page 1 would be 4000 × 176000 px .* at most 100 megapixels \(PREVIEW_MAX_MEGAPIXELS\)/);
    // Generous: the render it replaces took 38 s and 3.4 GB (bench/README.md).
    expect(r.ms).toBeLessThan(10_000);
    // The same page at a width within the budget renders: 100 × 4400 px.
    const small = await preview(tallPdf(200, 8800), 'to=png&width=100');
    expect(small.status).toBe(200);
    expect([small.body.readUInt32BE(16), small.body.readUInt32BE(20)]).toEqual([100, 4400]);
  }, 60_000);

  it.skipIf(!capped)(
    'a page poppler cannot allocate (a 1×1 image with exit status 0) is a 422, never a 200',
    async () => {
      // 4000 × 20000 px = 80 MP: within the 100 MP budget, but 240 MB of bitmap in a 128 MB address space.
      const r = await preview(tallPdf(200, 1000), 'to=png&width=4000');
      expect(r.status).toBe(422);
      expect(envelope(r).message).toMatch(/Page 1 could not be rendered at width 4000 within the renderer's memory limit/);
    },
    60_000,
  );

  it.skipIf(!capped)(
    'three such renders at once keep the process tree within a generous bound',
    async () => {
      const base = treeRss();
      let peak = base;
      const from = Date.now();
      const timer = setInterval(() => (peak = Math.max(peak, treeRss())), 50);
      const answers = await Promise.all([1, 2, 3].map(() => preview(tallPdf(200, 1000), 'to=png&width=4000')));
      clearInterval(timer);
      expect(answers.map((a) => a.status)).toEqual([422, 422, 422]);
      // Before the caps, three tall pages took 8.1 GB; now each pdftoppm is capped at 128 MB of address space.
      console.log(`three tall pages at once: peak tree RSS ${Math.round(peak / MB)} MB (idle ${Math.round(base / MB)} MB)`);
      expect(peak - base).toBeLessThan(600 * MB);
      // Health answered throughout (generous: 2 s, the poller's own deadline).
      const samples = await poller.window(from, Date.now());
      expect(samples.every((h) => h.status === 200)).toBe(true);
    },
    60_000,
  );

  it(`six runs of slow pages answer 504 at the request deadline (${REQUEST_TIMEOUT_MS / 1000} s), not after six run limits`, async () => {
    const r = await preview(slowPdf(12, 1000), 'to=png&pages=1,3,5,7,9,11', 120_000);
    expect(r.status).toBe(504);
    const env = envelope(r);
    expect(env.code).toBe('CONVERSION_TIMEOUT');
    expect(env.message).toMatch(/time budget \(during rendering page previews\)/);
    // Generous bound over the 5 s deadline on a loaded machine; six slow runs take 20 s and more.
    expect(r.ms).toBeLessThan(REQUEST_TIMEOUT_MS + 8_000);
    // The run that was cut short is killed, not left rendering.
    await sleep(500);
    expect(renderers()).toEqual([]);
  }, 120_000);

  it('20 heavy-SVG annotate requests abandoned by the client leave no zombie and no child besides LibreOffice', async () => {
    // Each request is hung up on as soon as its SVG child runs (so its job really is on a thread, and the
    // pool terminates that thread). A request that waited out its deadline for a replaced thread to start
    // never had a child: it is sent again (bounded).
    const body = annotateSvgBody(heavySvg());
    const seen = new Set<number>();
    for (let attempt = 0; seen.size < 20 && attempt < 60; attempt++) {
      const hangUp = new AbortController();
      let answered = false;
      const answer = fetch(`${srv.url}/v1/annotate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body,
        signal: hangUp.signal,
      })
        .then((r) => r.arrayBuffer())
        .catch(() => undefined)
        .finally(() => (answered = true));
      for (let t = 0; t < 300 && !answered; t++) {
        const fresh = svgChildren(srv.pid).filter((p) => !seen.has(p));
        if (fresh.length > 0) {
          fresh.forEach((p) => seen.add(p));
          break;
        }
        await sleep(50);
      }
      hangUp.abort();
      await answer;
    }
    expect(seen.size).toBe(20);
    // Killed and reaped by the server's main thread (generous bound for a busy machine). Before: all 20
    // stayed zombies until the server exited (test/native/abandon-measure.ts).
    let left = besidesOffice(srv.pid);
    for (let i = 0; i < 50 && left.length > 0; i++) {
      await sleep(100);
      left = besidesOffice(srv.pid);
    }
    expect(left).toEqual([]);
    // The replaced engine threads warm up for at most 5 s (src/engines/warm-up.ts); then an honest SVG draws.
    await sleep(6_000);
    const circle = '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><circle cx="10" cy="10" r="8"/></svg>';
    const ok = await srv.send({ method: 'POST', path: '/v1/annotate', json: annotateSvgBody(circle) }, key, 60_000);
    expect(ok.status).toBe(200);
    expect(besidesOffice(srv.pid)).toEqual([]);
  }, 300_000);

  it('a filter-heavy SVG in annotate: 504, then no thread or process keeps burning CPU, and SIGTERM stops the server', async () => {
    // An honest SVG is drawn by the same capped child: 200.
    const circle = '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><circle cx="10" cy="10" r="8"/></svg>';
    const ok = await srv.send({ method: 'POST', path: '/v1/annotate', json: annotateSvgBody(circle) }, key, 60_000);
    expect(ok.status).toBe(200);
    const r = await srv.send({ method: 'POST', path: '/v1/annotate', json: annotateSvgBody(heavySvg()) }, key, 60_000);
    expect(r.status).toBe(504);
    expect(envelope(r).code).toBe('CONVERSION_TIMEOUT');
    // The replaced engine thread warms up for at most 5 s (src/engines/warm-up.ts); after that the tree is idle.
    await sleep(6_000);
    const tree = () => [srv.pid, ...descendants(srv.pid).map((d) => d.pid)].reduce((s, p) => s + cpuOf(p), 0);
    const c0 = tree();
    await sleep(1_500);
    const burned = tree() - c0;
    // Before: resvg kept a core busy on the terminated thread for minutes (1.5 s of CPU per 1.5 s here).
    expect(burned).toBeLessThan(0.5);
    // No SVG child left (a killed one is at most a zombie: no memory, no CPU).
    expect(descendants(srv.pid).filter((d) => d.rss > 0 && cmdline(d.pid).includes('svg-raster-child'))).toEqual([]);
    const health = await fetch(`${srv.url}/v1/health`).then((h) => h.json() as Promise<{ status: string }>);
    expect(health.status).not.toBe('unhealthy');
    process.kill(srv.pid, 'SIGTERM');
    for (let i = 0; i < 150 && srv.alive(); i++) await sleep(100);
    expect(srv.alive()).toBe(false);
  }, 120_000);
});
