/**
 * Markdown/HTML → DOCX: Folio's native converter against pandoc 2.17 (`pandoc -f markdown -t docx`,
 * `pandoc -f html -t docx`, process start included, as a caller would run it) on the same inputs, in one run:
 * the corpus Markdown concatenated, a generated 1 MB Markdown file, a generated ~11 KB report, and the 20 HTML
 * files of the corpus.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { htmlToDocx, markdownToDocx } from '../src/convert/index.js';
import { CORPUS as FIXTURE_CORPUS } from '../test/helpers/corpus.js';

// The external corpus when this machine has it, else the copy the tests read (test/fixtures/corpus).
const CORPUS = fs.existsSync('/work/shared/corpus') ? '/work/shared/corpus' : FIXTURE_CORPUS;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

function timeNative(fn: () => Uint8Array, runs: number): number {
  for (let i = 0; i < 3; i++) fn(); // warm-up (JIT)
  const xs: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    fn();
    xs.push(performance.now() - t);
  }
  return median(xs);
}

const hasPandoc = spawnSync('pandoc', ['--version']).status === 0;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-bench-convert-'));
function timePandoc(from: string, file: string, runs: number): number | undefined {
  if (!hasPandoc) return undefined;
  const xs: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    execFileSync('pandoc', ['-f', from, '-t', 'docx', '-o', path.join(tmp, 'out.docx'), file], { stdio: 'ignore' });
    xs.push(performance.now() - t);
  }
  return median(xs);
}

function generatedMarkdown(bytes: number): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const block =
      `## Section ${i}\n\nThis is *paragraph* ${i} with **bold**, \`code\`, a [link](https://example.com/${i}) and ~~strike~~ text ` +
      `that runs on for a while so lines wrap as in a real report.[^n${i}]\n\n` +
      `- item one\n- item two\n  1. nested\n  2. nested again\n- [x] done\n\n` +
      `| Name | Value | Note |\n|:--|--:|:-:|\n| a${i} | ${i} | ok |\n| b${i} | ${i * 2} | fine |\n\n` +
      `> A quotation with _emphasis_.\n\n\`\`\`js\nconst x${i} = ${i};\nconsole.log(x${i});\n\`\`\`\n\n[^n${i}]: Footnote ${i}.\n\n`;
    parts.push(block);
    size += block.length;
  }
  return parts.join('');
}

/** A report-like document of about `bytes`: headings, paragraphs, lists, a table, code, a quote, footnotes. */
function reportMarkdown(bytes: number): string {
  const parts = [
    '# Quarterly engineering report\n\nThis report summarises the quarter: *delivery*, **reliability**, costs and the plan ahead.[^scope]\n\n',
  ];
  let size = parts[0]!.length;
  for (let i = 1; size < bytes - 200; i++) {
    const block =
      `## ${i}. Area ${i}\n\nDuring the quarter the team shipped ${i * 3} changes to area ${i}, with a median review time of ${i + 2} hours ` +
      `and no incident above severity two. See the [dashboard](https://example.com/area/${i}) for the figures; the \`p99\` latency ` +
      `stayed under ${100 + i} ms.[^a${i}]\n\n` +
      `Highlights:\n\n- Migrated the ${i}th service to the new queue\n- Cut build time by ${i * 4}%\n  1. cache warm-up\n  2. parallel tests\n- [x] Runbook updated\n\n` +
      `| Metric | Target | Actual |\n|:--|--:|--:|\n| Availability | 99.9% | 99.${90 + i}% |\n| Deploys | ${i * 10} | ${i * 11} |\n\n` +
      `> Customers noticed: "the export is faster" (support ticket ${1000 + i}).\n\n` +
      '```ts\n' +
      `export const limit${i} = ${i * 64};\n` +
      '```\n\n' +
      `[^a${i}]: Measured over ${i + 10} days, excluding planned maintenance.\n\n`;
    parts.push(block);
    size += block.length;
  }
  parts.push('[^scope]: All teams of the platform group.\n');
  return parts.join('');
}

const rows: Array<{ input: string; bytes: number; folio: number; pandoc?: number }> = [];

// 1. The corpus Markdown (CommonMark + GFM examples) concatenated into one document.
const examples: string[] = [];
for (const f of fs.readdirSync(path.join(CORPUS, 'markdown')).filter((f) => f.endsWith('.json'))) {
  for (const ex of JSON.parse(fs.readFileSync(path.join(CORPUS, 'markdown', f), 'utf8')) as Array<{ markdown: string }>) examples.push(ex.markdown);
}
const corpusMd = examples.join('\n\n');
fs.writeFileSync(path.join(tmp, 'corpus.md'), corpusMd);
rows.push({
  input: `corpus Markdown concatenated (${examples.length} examples)`,
  bytes: Buffer.byteLength(corpusMd),
  folio: timeNative(() => markdownToDocx(corpusMd), 15),
  pandoc: timePandoc('markdown', path.join(tmp, 'corpus.md'), 5),
});

// 2. A generated 1 MB Markdown document.
const bigMd = generatedMarkdown(1024 * 1024);
fs.writeFileSync(path.join(tmp, 'big.md'), bigMd);
const heapBefore = process.memoryUsage().heapUsed;
rows.push({
  input: 'generated 1 MB Markdown',
  bytes: Buffer.byteLength(bigMd),
  folio: timeNative(() => markdownToDocx(bigMd), 7),
  pandoc: timePandoc('markdown', path.join(tmp, 'big.md'), 3),
});
const heapAfter = process.memoryUsage().heapUsed;

// 3. A generated report of about 11 KB (the size of a typical document sent for conversion).
const reportMd = reportMarkdown(11 * 1024);
fs.writeFileSync(path.join(tmp, 'report.md'), reportMd);
rows.push({
  input: 'generated 11 KB report Markdown',
  bytes: Buffer.byteLength(reportMd),
  folio: timeNative(() => markdownToDocx(reportMd), 31),
  pandoc: timePandoc('markdown', path.join(tmp, 'report.md'), 5),
});

// 4. The 20 HTML files, median per file.
const htmlDir = path.join(CORPUS, 'html');
const htmlFiles = fs
  .readdirSync(htmlDir)
  .filter((f) => /\.x?html?$/.test(f))
  .sort();
const folioPerFile: number[] = [];
const pandocPerFile: number[] = [];
let htmlBytes = 0;
for (const f of htmlFiles) {
  const p = path.join(htmlDir, f);
  const html = fs.readFileSync(p, 'utf8');
  htmlBytes += Buffer.byteLength(html);
  folioPerFile.push(timeNative(() => htmlToDocx(html), 15));
  const pd = timePandoc('html', p, 3);
  if (pd !== undefined) pandocPerFile.push(pd);
}
rows.push({
  input: `${htmlFiles.length} HTML files (median per file)`,
  bytes: Math.round(htmlBytes / htmlFiles.length),
  folio: median(folioPerFile),
  pandoc: pandocPerFile.length ? median(pandocPerFile) : undefined,
});

fs.rmSync(tmp, { recursive: true, force: true });

console.log(`pandoc: ${hasPandoc ? execFileSync('pandoc', ['--version']).toString().split('\n')[0] : 'not installed (comparison skipped)'}`);
console.log('input'.padEnd(52), 'bytes'.padStart(9), 'folio ms'.padStart(10), 'pandoc ms'.padStart(10), 'speed-up'.padStart(9));
for (const r of rows) {
  console.log(
    r.input.padEnd(52),
    String(r.bytes).padStart(9),
    r.folio.toFixed(2).padStart(10),
    (r.pandoc?.toFixed(1) ?? '-').padStart(10),
    (r.pandoc ? `${(r.pandoc / r.folio).toFixed(1)}×` : '-').padStart(9),
  );
}
console.log(`heap growth across the 1 MB runs: ${((heapAfter - heapBefore) / 1024 / 1024).toFixed(1)} MB`);
console.log('goals: Markdown ≥ 20× pandoc, HTML ≥ 10× pandoc, 1 MB Markdown < 500 ms');
