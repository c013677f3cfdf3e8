/**
 * Issue 13: CPU time of one md→docx conversion of the generated 1 MB report (bench/substrates.ts's input), in
 * process, so that the figure does not depend on how loaded the host is the way wall time does: user + system
 * time from `process.cpuUsage` (all threads, GC included) around `markdownToDocx`, 3 warm-up runs, then
 * `BENCH_RUNS` (default 10) timed ones; median and minimum. It also prints the SHA-256 of the package's
 * word/document.xml, which a change meant to keep the output must leave as it is.
 *
 * `BASELINE_REF=<commit>` adds that commit's src/ (extracted with `git archive` into a temporary folder, this
 * checkout's node_modules linked): the two run in separate processes, in turn, `BENCH_ROUNDS` (default 3)
 * times each, so the host's load falls on both alike. Both run under tsx, as this script does.
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readZipDirectory } from '../src/docx/zip-reader.js';
import { reportMarkdown, ROOT } from './support.js';
import zlib from 'node:zlib';

const RUNS = Number(process.env.BENCH_RUNS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

interface Result {
  median: number;
  min: number;
  sha: string;
}

/** Child mode: `--src <dir>` measures that src/ tree and prints one JSON line. */
async function measure(src: string): Promise<Result> {
  const { markdownToDocx } = (await import(path.join(src, 'convert/index.ts'))) as { markdownToDocx: (md: string) => Uint8Array };
  const md = reportMarkdown(1024 * 1024);
  let out: Uint8Array = new Uint8Array(0);
  for (let i = 0; i < 3; i++) out = markdownToDocx(md);
  const cpu: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const c0 = process.cpuUsage();
    out = markdownToDocx(md);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  cpu.sort((a, b) => a - b);
  const entry = readZipDirectory(out).find((e) => e.name === 'word/document.xml')!;
  const data = out.subarray(entry.dataStart, entry.dataStart + entry.compressedSize);
  const xml = entry.method === 8 ? zlib.inflateRawSync(data) : data;
  return { median: cpu[cpu.length >> 1]!, min: cpu[0]!, sha: crypto.createHash('sha256').update(xml).digest('hex') };
}

const srcArg = process.argv.indexOf('--src');
if (srcArg >= 0) {
  console.log(JSON.stringify(await measure(process.argv[srcArg + 1]!)));
} else {
  const trees: Array<{ label: string; src: string }> = [{ label: 'current', src: path.join(ROOT, 'src') }];
  const base = process.env.BASELINE_REF;
  let tmp: string | undefined;
  if (base) {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-bench-mdcpu-'));
    const archive = spawnSync('git', ['archive', base, 'src'], { cwd: ROOT, maxBuffer: 1 << 30 });
    if (archive.status !== 0) throw new Error(`git archive ${base} failed`);
    spawnSync('tar', ['-x', '-C', tmp], { input: archive.stdout });
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(tmp, 'node_modules'));
    trees.unshift({ label: base, src: path.join(tmp, 'src') });
  }
  const results = new Map<string, Result[]>(trees.map((t) => [t.label, []]));
  try {
    for (let r = 0; r < (base ? ROUNDS : 1); r++) {
      for (const t of trees) {
        const child = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/markdown-cpu.ts'), '--src', t.src], {
          cwd: ROOT,
          encoding: 'utf8',
          env: process.env,
        });
        if (child.status !== 0) throw new Error(`${t.label}: ${child.stderr}`);
        results.get(t.label)!.push(JSON.parse(child.stdout.trim().split('\n').pop()!) as Result);
      }
    }
  } finally {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  }
  console.log(`1 MB Markdown → DOCX, CPU ms per conversion (process.cpuUsage, ${RUNS} runs after 3 warm-up, per process):`);
  for (const [label, rs] of results) {
    const fmt = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(' / ');
    console.log(
      `  ${label}: median ${fmt(rs.map((r) => r.median))}, min ${fmt(rs.map((r) => r.min))}; document.xml sha256 ${[...new Set(rs.map((r) => r.sha.slice(0, 16)))].join(', ')}`,
    );
  }
}
