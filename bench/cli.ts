/**
 * Issue 15 benchmark: `folio convert` in local mode over the valid corpus DOCX files (117: the corpus
 * manifest's non-negative entries) to PDF, in documents/s, against a shell loop of
 * `soffice --headless --convert-to pdf` over the same files in the same run. Goal: ≥ 5×.
 *
 * Both sides are timed from the command's start to its exit, start-up included (the CLI boots its
 * LibreOffice pool; each soffice boots LibreOffice). soffice gets its own profile, created by one untimed
 * conversion first, so it neither pays the first-run profile set-up nor hands its work to another soffice
 * running on the machine. `BENCH_LIMIT=n` uses the first n files (by name); `BENCH_JOBS` sets `--jobs`
 * (default: the CLI's own default, one LibreOffice worker per CPU).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CORPUS_DOCX } from '../test/helpers/corpus.js';
import { ROOT } from './support.js';

// The external corpus when this machine has it, else the copy the tests read (test/fixtures/corpus).
const CORPUS = fs.existsSync('/work/shared/corpus/docx') ? '/work/shared/corpus/docx' : CORPUS_DOCX;
const manifest = JSON.parse(fs.readFileSync(path.join(CORPUS, 'manifest.json'), 'utf8')) as Array<{ file: string; negative: boolean }>;
const all = manifest
  .filter((m) => !m.negative)
  .map((m) => m.file)
  .sort();
const limit = process.env.BENCH_LIMIT ? Math.max(1, Number(process.env.BENCH_LIMIT)) : all.length;
const files = all.slice(0, limit).map((f) => path.join(CORPUS, f));
const cli = path.join(ROOT, 'dist/src/cli/main.js');
if (!fs.existsSync(cli)) throw new Error(`${cli} is missing: npm run build first (npm run bench does)`);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-bench-cli-'));
const pdfsIn = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir, { recursive: true }).filter((f) => String(f).endsWith('.pdf')).length : 0);

console.log(`${files.length} of ${all.length} valid corpus DOCX files → PDF; ${os.cpus().length} CPUs, load average ${os.loadavg()[0]!.toFixed(1)}`);

// --- folio convert (local mode) ------------------------------------------------------------------------------
const cliOut = path.join(tmp, 'folio');
const jobs = process.env.BENCH_JOBS ? ['--jobs', process.env.BENCH_JOBS] : [];
const loadAverage = () => os.loadavg()[0]!.toFixed(1);
let loadBefore = loadAverage();
let t = performance.now();
const folio = spawnSync(process.execPath, [cli, 'convert', ...files, '--out', cliOut, '--quiet', ...jobs], {
  cwd: tmp,
  encoding: 'utf8',
  env: { ...process.env, FOLIO_SERVER: '' },
});
const folioSeconds = (performance.now() - t) / 1000;
const folioPdfs = pdfsIn(cliOut);
console.log(
  `folio convert: ${folioPdfs}/${files.length} PDFs in ${folioSeconds.toFixed(1)} s (exit ${folio.status}; load average before: ${loadBefore}) — ${folio.stderr.trim().split('\n')[0]}`,
);
for (const line of folio.stderr.trim().split('\n').slice(1)) console.log(`  ${line}`);

// --- soffice --headless --convert-to pdf, one process per file (a shell loop) --------------------------------
const profile = path.join(tmp, 'soffice-profile');
const sofficeOut = path.join(tmp, 'soffice');
const userInstallation = `-env:UserInstallation=file://${profile}`;
// Untimed: creates the profile (first start of LibreOffice with a new profile is much slower).
spawnSync('soffice', [userInstallation, '--headless', '--convert-to', 'pdf', '--outdir', path.join(tmp, 'warm'), files[0]!], { stdio: 'ignore' });
loadBefore = loadAverage();
const loop = `for f in "$@"; do soffice '${userInstallation}' --headless --convert-to pdf --outdir '${sofficeOut}' "$f" >/dev/null 2>&1; done`;
t = performance.now();
const shell = spawnSync('bash', ['-c', loop, 'loop', ...files], { stdio: 'ignore' });
const sofficeSeconds = (performance.now() - t) / 1000;
const sofficePdfs = pdfsIn(sofficeOut);
console.log(
  `soffice loop:  ${sofficePdfs}/${files.length} PDFs in ${sofficeSeconds.toFixed(1)} s (exit ${shell.status}; load average before: ${loadBefore})`,
);

const folioRate = folioPdfs / folioSeconds;
const sofficeRate = sofficePdfs / sofficeSeconds;
const ratio = folioRate / sofficeRate;
console.log('');
console.log(`| tool | PDFs | seconds | documents/s |`);
console.log(`|---|---|---|---|`);
console.log(
  `| folio convert (local, ${process.env.BENCH_JOBS ?? 'default'} jobs) | ${folioPdfs} | ${folioSeconds.toFixed(1)} | ${folioRate.toFixed(2)} |`,
);
console.log(`| soffice --headless loop | ${sofficePdfs} | ${sofficeSeconds.toFixed(1)} | ${sofficeRate.toFixed(2)} |`);
console.log(`\nfolio / soffice: ${ratio.toFixed(1)}× (goal ≥ 5×): ${ratio >= 5 ? 'PASS' : 'FAIL'}`);
fs.rmSync(tmp, { recursive: true, force: true });
