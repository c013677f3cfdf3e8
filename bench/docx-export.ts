/**
 * DOCX → Markdown and DOCX → HTML speed over the shared DOCX corpus (every readable file), Folio's exporter
 * (`docxToMarkdown`, `docxToHtml`, in this process, after up to three warm-up calls per file) against pandoc 2.17
 * (`pandoc -f docx -t gfm` / `-t html`, one process per call, start-up included, as a caller would run it) on
 * the same files, in one run. Then the same files over HTTP (`POST /v1/convert?to=md|html`, multipart, one
 * request at a time, against the real API started by bench/servers/foundation.ts), when this build accepts them. Per file the median of several runs (Folio at least BENCH_RUNS, default 5, up to 30 within ~0.5 s; pandoc 3,
 * or 1 when its first run takes over a second); the total is the sum of the per-file medians, and the ratio is
 * pandoc's total over Folio's (the goal: ≥ 10×). CPU time is measured too (Folio: process.cpuUsage
 * around each run; pandoc: the children's user + system time from /proc/self/stat, 10 ms ticks) and totalled
 * the same way: on a shared, loaded machine it is the steadier of the two ratios.
 *
 *   npm run bench -- docx-export          (BENCH_ONLY=substring keeps the files whose name contains it)
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { docxToHtml, docxToMarkdown } from '../src/convert/index.js';
import { CORPUS_DOCX, PANDOC_ARGS, corpusFiles, hasPandoc } from '../test/convert/docx-export-measure.js';
import { startBenchServer } from './support.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/**
 * Median of at least RUNS runs, more (up to 30, within ~0.5 s) for fast files: on a shared 2-core machine one
 * descheduled run is tens of milliseconds, which a median of five small-file runs does not absorb.
 */
/** User + system CPU milliseconds of this process's waited-for children (Linux; undefined elsewhere). */
function childrenCpu(): number | undefined {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 16 and 17 of proc(5) (cutime, cstime), counted from field 3 here; clock ticks of 10 ms.
    return (Number(f[13]) + Number(f[14])) * 10;
  } catch {
    return undefined;
  }
}

const cpuNow = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

/** Wall and CPU medians of the last timeFolio / timePandoc call, in ms. */
interface Timing {
  wall: number;
  cpu: number | undefined;
}

function timeFolio(fn: () => unknown): Timing {
  // Warm-up as a long-running server is warm: the JIT needs a few calls on a big document (on
  // docx4j--headers_footers.docx the first calls take 5× the later ones). Up to 3 calls within ~2 s.
  const warm = performance.now();
  for (let i = 0; i < 3 && (i === 0 || performance.now() - warm < 2000); i++) fn();
  const xs: number[] = [];
  const cs: number[] = [];
  const start = performance.now();
  while (xs.length < RUNS || (xs.length < 30 && performance.now() - start < 500)) {
    const c = cpuNow();
    const t = performance.now();
    fn();
    xs.push(performance.now() - t);
    cs.push(cpuNow() - c);
  }
  return { wall: median(xs), cpu: median(cs) };
}

function timePandoc(file: string, to: 'md' | 'html'): Timing | undefined {
  if (!hasPandoc) return undefined;
  const xs: number[] = [];
  const cs: number[] = [];
  for (let i = 0; i < 3; i++) {
    const c = childrenCpu();
    const t = performance.now();
    const r = spawnSync('pandoc', [...PANDOC_ARGS[to], file], { stdio: 'ignore', timeout: 300_000 });
    if (r.status !== 0) return undefined;
    xs.push(performance.now() - t);
    const c2 = childrenCpu();
    if (c !== undefined && c2 !== undefined) cs.push(c2 - c);
    if (xs[0]! > 1000) break; // a slow file: one run is figure enough, and the corpus stays within minutes
  }
  return { wall: median(xs), cpu: cs.length === xs.length ? median(cs) : undefined };
}

const only = process.env.BENCH_ONLY;
const files = corpusFiles().filter((f) => !only || f.includes(only));
console.log(
  `DOCX → Markdown/HTML over ${files.length} corpus files: Folio in-process (median of ≥ ${RUNS} runs after up to 3 warm-up calls) vs pandoc ${hasPandoc ? spawnSync('pandoc', ['--version']).stdout.toString().split('\n')[0]!.replace('pandoc ', '') : '(absent)'} (process per call); load average ${os.loadavg()[0]!.toFixed(1)} at start\n`,
);
const head = ['file', 'KB', 'Folio md', 'pandoc gfm', '×', 'Folio html', 'pandoc html', '×'];
console.log(
  `${head[0]!.padEnd(58)}${head[1]!.padStart(6)}${head
    .slice(2)
    .map((h) => h.padStart(12))
    .join('')}`,
);

const sum = { fm: 0, pm: 0, fh: 0, ph: 0 };
/** CPU-time totals over the same files (undefined once a pandoc CPU figure is missing). */
const cpu: Record<keyof typeof sum, number | undefined> = { fm: 0, pm: 0, fh: 0, ph: 0 };
const ratios: { md: number[]; html: number[] } = { md: [], html: [] };
const ms = (x: number | undefined) => (x === undefined ? 'failed' : x.toFixed(x < 10 ? 2 : 1));
const addCpu = (k: keyof typeof sum, t: Timing) => {
  const v = cpu[k];
  cpu[k] = v === undefined || t.cpu === undefined ? undefined : v + t.cpu;
};
for (const f of files) {
  const full = path.join(CORPUS_DOCX, f);
  const bytes = new Uint8Array(fs.readFileSync(full));
  let fmT: Timing | undefined;
  let fhT: Timing | undefined;
  try {
    fmT = timeFolio(() => docxToMarkdown(bytes));
    fhT = timeFolio(() => docxToHtml(bytes));
  } catch {
    /* reported as failed below */
  }
  const pmT = timePandoc(full, 'md');
  const phT = timePandoc(full, 'html');
  if (fmT && pmT) {
    addCpu('fm', fmT);
    addCpu('pm', pmT);
  }
  if (fhT && phT) {
    addCpu('fh', fhT);
    addCpu('ph', phT);
  }
  const [fm, fh, pm, ph] = [fmT?.wall, fhT?.wall, pmT?.wall, phT?.wall];
  // Totals over the files both sides convert, so a failure on either side does not skew the ratio.
  if (fm !== undefined && pm !== undefined) {
    sum.fm += fm;
    sum.pm += pm;
    ratios.md.push(pm / fm);
  }
  if (fh !== undefined && ph !== undefined) {
    sum.fh += fh;
    sum.ph += ph;
    ratios.html.push(ph / fh);
  }
  const ratio = (p: number | undefined, q: number | undefined) => (p !== undefined && q !== undefined ? `${(p / q).toFixed(0)}×` : '–');
  console.log(
    `${f.padEnd(58)}${(bytes.length / 1024).toFixed(0).padStart(6)}${[ms(fm), ms(pm), ratio(pm, fm), ms(fh), ms(ph), ratio(ph, fh)].map((c) => c.padStart(12)).join('')}`,
  );
}
console.log('');
console.log(`total (sum of per-file medians, files both convert):`);
console.log(
  `  docx→md:   Folio ${sum.fm.toFixed(0)} ms, pandoc -t gfm ${sum.pm.toFixed(0)} ms: ${(sum.pm / sum.fm).toFixed(1)}× (median per-file ratio ${median(ratios.md).toFixed(0)}×)`,
);
console.log(
  `  docx→html: Folio ${sum.fh.toFixed(0)} ms, pandoc -t html ${sum.ph.toFixed(0)} ms: ${(sum.ph / sum.fh).toFixed(1)}× (median per-file ratio ${median(ratios.html).toFixed(0)}×)`,
);
const cpuRatio = (p: number | undefined, q: number | undefined) =>
  p === undefined || q === undefined ? 'n/a' : `Folio ${q.toFixed(0)} ms, pandoc ${p.toFixed(0)} ms: ${(p / q).toFixed(1)}×`;
console.log(`CPU time (user + system, sums of per-file medians): docx→md ${cpuRatio(cpu.pm, cpu.fm)}; docx→html ${cpuRatio(cpu.ph, cpu.fh)}`);
console.log(
  `goal ≥ 10× pandoc: ${sum.pm / sum.fm >= 10 && sum.ph / sum.fh >= 10 ? 'met' : 'NOT met'}; load average ${os.loadavg()[0]!.toFixed(1)} at the end`,
);

// ---- over HTTP ------------------------------------------------------------------------------------------------

interface ServerInfo {
  api: number;
  apiKey: string;
}
const pandocTotals = { md: sum.pm, html: sum.ph };
const server = await startBenchServer<ServerInfo>('bench/servers/foundation.ts');
try {
  const { api, apiKey } = server.info;
  const post = async (bytes: Uint8Array, name: string, to: 'md' | 'html') => {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(bytes)]), name);
    const r = await fetch(`http://127.0.0.1:${api}/v1/convert?to=${to}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}` },
      body: form,
    });
    await r.arrayBuffer();
    return r.status;
  };
  const probe = new Uint8Array(fs.readFileSync(path.join(CORPUS_DOCX, files[0]!)));
  const status = await Promise.all([post(probe, files[0]!, 'md'), post(probe, files[0]!, 'html')]);
  if (status.some((x) => x !== 200)) {
    console.log(`\nHTTP: skipped, this build answers ${status.join('/')} to POST /v1/convert?to=md|html`);
  } else {
    console.log('\nHTTP (POST /v1/convert, multipart, one request at a time; median of 3 per file):');
    for (const to of ['md', 'html'] as const) {
      let total = 0;
      let failed = 0;
      for (const f of files) {
        const bytes = new Uint8Array(fs.readFileSync(path.join(CORPUS_DOCX, f)));
        const xs: number[] = [];
        for (let i = 0; i < 3; i++) {
          const t = performance.now();
          if ((await post(bytes, f, to)) !== 200) failed++;
          xs.push(performance.now() - t);
        }
        total += median(xs);
      }
      console.log(
        `  docx→${to}: ${total.toFixed(0)} ms over ${files.length} files (${failed} non-200 answers); pandoc's total above (same files) ${pandocTotals[to].toFixed(0)} ms: ${(pandocTotals[to] / total).toFixed(1)}×`,
      );
    }
  }
} finally {
  server.child.kill();
}
