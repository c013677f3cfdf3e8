/**
 * Issue 23's merge cases, measured against a real server (test/adversarial/server.ts's FolioProcess): for
 * each case the input size, the answer (status, size), its wall time, the peak RSS of the process tree
 * while it ran (sampled every 50 ms), the tree's RSS a second after, and the slowest /v1/health answer
 * (polled every 50 ms from another thread). The inputs come from test/merge/hostile.ts.
 *
 *   node --import tsx bench/merge-budgets.ts [--root DIR] [case …]
 *
 * `--root` runs another checkout's server (e.g. a pre-change one for "before" figures: its own
 * test/adversarial/server.ts and build are used; the inputs are still made here). Cases: inherited,
 * inherited-3000, million-flat, million-tree, repeated, slow-docx (50 slow DOCX; set REQUEST_TIMEOUT_MS
 * in the environment to give the server a shorter request budget). Without cases, all but slow-docx.
 */
import path from 'node:path';
import { flatMillionPagePdf, inheritedResourcePdf, millionPagePdf, repeatedPagePdf, slowDocx } from '../test/merge/hostile.js';

interface Case {
  files: () => Array<{ bytes: Uint8Array; name: string }>;
  what: string;
}

const CASES: Record<string, Case> = {
  inherited: {
    what: '4 × a PDF of 1,000 pages inheriting an ~80 KB /Resources (in an object stream)',
    files: () => {
      const pdf = inheritedResourcePdf({ pages: 1_000, widths: 20_000, packed: true });
      return [0, 1, 2, 3].map((i) => ({ bytes: pdf, name: `inherits-${i}.pdf` }));
    },
  },
  'inherited-3000': {
    what: '2 × the same with 3,000 pages',
    files: () => {
      const pdf = inheritedResourcePdf({ pages: 3_000, widths: 20_000, packed: true });
      return [0, 1].map((i) => ({ bytes: pdf, name: `inherits-${i}.pdf` }));
    },
  },
  'million-flat': {
    what: '2 × a 9.5 MB PDF of a million page objects',
    files: () => {
      const pdf = flatMillionPagePdf();
      return [0, 1].map((i) => ({ bytes: pdf, name: `million-${i}.pdf` }));
    },
  },
  'million-tree': {
    what: '2 × a 1.5 KB page tree of shared nodes claiming a million pages',
    files: () => [0, 1].map((i) => ({ bytes: millionPagePdf(), name: `tree-${i}.pdf` })),
  },
  repeated: {
    what: '2 × a PDF listing one page object 5 times',
    files: () => [0, 1].map((i) => ({ bytes: repeatedPagePdf(5), name: `repeated-${i}.pdf` })),
  },
  'slow-docx': {
    what: '50 × a 1.4 KB DOCX of 70 nested tables (~1-5 s of LibreOffice each, by load)',
    files: () => {
      const docx = slowDocx();
      return Array.from({ length: 50 }, (_, i) => ({ bytes: docx, name: `slow-${i}.docx` }));
    },
  },
};

const args = process.argv.slice(2);
const rootAt = args.indexOf('--root');
const root = rootAt >= 0 ? path.resolve(args[rootAt + 1]!) : path.resolve(import.meta.dirname, '..');
const names = args.filter((a, i) => a !== '--root' && i !== rootAt + 1);
const chosen = names.length > 0 ? names : Object.keys(CASES).filter((n) => n !== 'slow-docx');

type Harness = typeof import('../test/adversarial/server.js');
const { FolioProcess, HealthPoller, descendants, MB } = (await import(path.join(root, 'test/adversarial/server.ts'))) as Harness;

const env: Record<string, string> = { OFFICE_WORKERS: '1', ENGINE_WORKERS: '2', ENGINE_MEMORY_MB: '512' };
if (process.env.REQUEST_TIMEOUT_MS) env.REQUEST_TIMEOUT_MS = process.env.REQUEST_TIMEOUT_MS;
const srv = await FolioProcess.start(env);
const key = await srv.newKey();
const poller = new HealthPoller(srv.url, 50);
const treeRss = () => (srv.rss() ?? 0) + descendants(srv.pid).reduce((s, d) => s + d.rss, 0);
console.log(`server: ${root} (${srv.entry}), REQUEST_TIMEOUT_MS=${env.REQUEST_TIMEOUT_MS ?? 'default'}`);

try {
  for (const name of chosen) {
    const c = CASES[name];
    if (!c) throw new Error(`unknown case ${name}; cases: ${Object.keys(CASES).join(', ')}`);
    const files = c.files();
    const form = new FormData();
    for (const f of files) form.append('files', new Blob([new Uint8Array(f.bytes)]), f.name);
    const inBytes = files.reduce((n, f) => n + f.bytes.length, 0);
    let peak = treeRss();
    const sampler = setInterval(() => (peak = Math.max(peak, treeRss())), 50);
    const from = Date.now();
    const t0 = performance.now();
    const r = await fetch(`${srv.url}/v1/merge`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
      signal: AbortSignal.timeout(600_000),
    });
    const body = Buffer.from(await r.arrayBuffer());
    const ms = performance.now() - t0;
    clearInterval(sampler);
    const health = await poller.window(from, Date.now());
    await new Promise((res) => setTimeout(res, 1000));
    const code = r.status === 200 ? '' : ` ${(JSON.parse(body.toString()) as { code: string }).code}`;
    console.log(
      `${name}: ${c.what}\n  in ${(inBytes / 1024).toFixed(0)} KB → ${r.status}${code}, out ${(body.length / 1024).toFixed(0)} KB, ` +
        `${(ms / 1000).toFixed(1)} s, peak RSS ${(peak / MB).toFixed(0)} MB (after ${(treeRss() / MB).toFixed(0)} MB), ` +
        `health max ${Math.max(0, ...health.map((s) => (s.status === 200 ? s.ms : Infinity))).toFixed(0)} ms`,
    );
  }
} finally {
  await poller.stop();
  await srv.stop();
}
