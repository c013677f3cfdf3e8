/**
 * POST /v1/merge within its budgets (issue 23), against the compiled API as a child process
 * (test/adversarial/server.ts): a small file whose pages inherit a large resource, repeated as inputs (1 GB
 * of output before), a 9.5 MB file with a million pages (a 504 after the whole 30 s before), 50 slow DOCX
 * files (288 s before), and an output past OUTPUT_MAX_MB. Each case checks the answer, the server's health
 * while it ran (polled from another thread) and, for the amplifying ones, the RSS of the process tree.
 *
 * One server with small budgets so every case ends in seconds: REQUEST_TIMEOUT_MS=8000, OUTPUT_MAX_MB=1.
 * The DOCX case needs LibreOffice and is skipped, saying so, without it.
 */
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FolioProcess, HealthPoller, MB, descendants, serverEnv } from '../adversarial/server.js';
import { taggedPdf } from '../merge/helpers.js';
import { flatMillionPagePdf, inheritedResourcePdf, slowDocx } from '../merge/hostile.js';

const REQUEST_TIMEOUT_MS = 8_000;
const HEALTH_MAX_MS = 1_000;
/** Generous: the amplified merge this bounds took the tree to 4.2 GB before; honest work here needs ~100 MB. */
const RSS_GROWTH_BOUND = 600 * MB;
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const hasOffice = spawnSync('soffice', ['--version'], { stdio: 'ignore', timeout: 30_000 }).status === 0;

interface Answer {
  status: number;
  body: Buffer;
  ms: number;
  headers: Headers;
}

describe('POST /v1/merge within its budgets (compiled server)', () => {
  let srv: FolioProcess;
  let key: string;
  let poller: HealthPoller;

  beforeAll(async () => {
    srv = await FolioProcess.start({
      ...serverEnv({ engineTimeoutMs: 30_000, officeTimeoutMs: 60_000 }),
      REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      OUTPUT_MAX_MB: '1',
    });
    key = await srv.newKey();
    poller = new HealthPoller(srv.url, 50);
  }, 180_000);
  afterAll(async () => {
    await poller?.stop();
    await srv?.stop();
  });

  const treeRss = () => (srv.rss() ?? 0) + descendants(srv.pid).reduce((s, d) => s + d.rss, 0);

  /** One multipart merge; the peak RSS of the process tree while it ran and the slowest health answer. */
  async function merge(files: Array<{ bytes: Uint8Array; name: string; type?: string }>): Promise<Answer & { peakRss: number; healthMax: number }> {
    const form = new FormData();
    for (const f of files) form.append('files', new Blob([new Uint8Array(f.bytes)], { type: f.type ?? 'application/pdf' }), f.name);
    let peakRss = treeRss();
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, treeRss())), 50);
    const from = Date.now();
    const t0 = performance.now();
    try {
      const r = await fetch(`${srv.url}/v1/merge`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}` },
        body: form,
        signal: AbortSignal.timeout(120_000),
      });
      const body = Buffer.from(await r.arrayBuffer());
      const ms = performance.now() - t0;
      const health = await poller.window(from, Date.now());
      return {
        status: r.status,
        body,
        ms,
        headers: r.headers,
        peakRss,
        healthMax: Math.max(0, ...health.map((s) => (s.status === 200 ? s.ms : Infinity))),
      };
    } finally {
      clearInterval(sampler);
    }
  }
  const envelope = (a: Answer) =>
    JSON.parse(a.body.toString()) as { code: string; message: string; details?: Array<{ field: string; issue: string }> };

  it('pages inheriting a large resource, repeated as inputs, merge into a small file: the resource is written once per input', async () => {
    // 1,000 pages inheriting an ~80 KB /Resources dictionary, hidden in an object stream: 4 copies would
    // have written it 4,000 times (320 MB; the probe's 163 KB file gave 1 GB).
    const input = inheritedResourcePdf({ pages: 1_000, widths: 20_000, packed: true });
    const base = treeRss();
    const r = await merge([0, 1, 2, 3].map((i) => ({ bytes: input, name: `inherits-${i}.pdf` })));
    expect(r.status).toBe(200);
    expect(r.headers.get('x-folio-pages')).toBe('4000');
    expect(r.body.subarray(0, 5).toString()).toBe('%PDF-');
    expect(r.body.length).toBeLessThan(1 * MB);
    expect(r.peakRss - base).toBeLessThan(RSS_GROWTH_BOUND);
    console.log(
      `merge, 4 × 1,000 pages inheriting a resource: ${r.status} ${(r.body.length / MB).toFixed(2)} MB; peak tree RSS ${Math.round(r.peakRss / MB)} MB; health max ${Math.round(r.healthMax)} ms`,
    );
    expect(r.healthMax).toBeLessThan(HEALTH_MAX_MS);
  }, 60_000);

  it('an output past OUTPUT_MAX_MB is a 422 naming the limit', async () => {
    // Each input's one resource dictionary is ~800 KB: two inputs cannot share it, and pass 1 MB.
    const input = inheritedResourcePdf({ pages: 2, widths: 200_000, packed: true });
    const r = await merge([
      { bytes: input, name: 'a.pdf' },
      { bytes: input, name: 'b.pdf' },
    ]);
    expect(r.status).toBe(422);
    expect(envelope(r).code).toBe('UNPROCESSABLE_DOCUMENT');
    expect(envelope(r).message).toMatch(/merged PDF would be larger than the 1 MB one request may produce \(OUTPUT_MAX_MB\)/);
    expect(r.healthMax).toBeLessThan(HEALTH_MAX_MS);
  }, 60_000);

  it('a 9.5 MB file with a million pages is a 422 (not a 504 after the whole budget)', async () => {
    const million = flatMillionPagePdf();
    const base = treeRss();
    const r = await merge([
      { bytes: million, name: 'million.pdf' },
      { bytes: await taggedPdf('Tail', 1), name: 'tail.pdf' },
    ]);
    expect(r.status).toBe(422);
    const env = envelope(r);
    expect(env.code).toBe('UNPROCESSABLE_DOCUMENT');
    expect(env.details?.[0]?.field).toBe('documents.0');
    expect(env.details?.[0]?.issue).toMatch(/^million\.pdf: /);
    expect(r.peakRss - base).toBeLessThan(RSS_GROWTH_BOUND);
    console.log(
      `merge, a million pages: ${r.status} ${(r.body.length / MB).toFixed(2)} MB; peak tree RSS ${Math.round(r.peakRss / MB)} MB; health max ${Math.round(r.healthMax)} ms`,
    );
    expect(r.healthMax).toBeLessThan(HEALTH_MAX_MS);
  }, 60_000);

  it.skipIf(!hasOffice)(
    '50 slow DOCX files answer 504 at the request deadline, and the server serves the next merge',
    async () => {
      const docx = slowDocx();
      const r = await merge(Array.from({ length: 50 }, (_, i) => ({ bytes: docx, name: `slow-${i}.docx`, type: DOCX })));
      expect(r.status).toBe(504);
      expect(envelope(r).code).toBe('CONVERSION_TIMEOUT');
      expect(envelope(r).message).toMatch(/within its 8 s time budget/);
      // Generous: the deadline is 8 s; one conversion budget after another took 288 s before.
      expect(r.ms).toBeLessThan(45_000);
      expect(r.healthMax).toBeLessThan(HEALTH_MAX_MS);
      // The remaining conversions were not started: the server is free for the next request.
      const next = await merge([
        { bytes: await taggedPdf('After', 1), name: 'a.pdf' },
        { bytes: await taggedPdf('After', 2), name: 'b.pdf' },
      ]);
      expect(next.status).toBe(200);
      expect(next.headers.get('x-folio-pages')).toBe('3');
    },
    120_000,
  );
  if (!hasOffice) it('skips the slow-DOCX case: LibreOffice (soffice) is not installed', () => expect(hasOffice).toBe(false));
});
