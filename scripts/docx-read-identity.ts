/**
 * Proof that the exporter's read-only parse (src/docx/read/parse.ts) changes no output: every corpus DOCX is
 * read twice in this process, once with parseForRead (what docxToMarkdown and docxToHtml use) and once with
 * xml.ts's lossless parseXml, and the two document models, Markdown outputs and HTML outputs (with their
 * warnings, or the errors) are compared. Prints one line per file with the SHA-256 prefixes and exits 1 on
 * any difference. With --cpu it also prints the CPU time of both reads over the corpus (interleaved, median of
 * BENCH_RUNS per file, default 5).
 *
 *   node --import tsx scripts/docx-read-identity.ts [--cpu]
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { modelToHtml } from '../src/convert/docx-html.js';
import { modelToMarkdown } from '../src/convert/docx-markdown.js';
import { readDocxModel, readDocxModelWith } from '../src/docx/read/reader.js';
import type { DocModel } from '../src/docx/read/model.js';
import { parseXml } from '../src/docx/xml.js';
import { CORPUS_DOCX } from '../test/convert/docx-export-measure.js';

const sha = (s: string | Uint8Array) => crypto.createHash('sha256').update(s).digest('hex').slice(0, 16);
const files = fs
  .readdirSync(CORPUS_DOCX)
  .filter((f) => /\.(docx|docm|dotx)$/i.test(f))
  .sort();
const readers: Record<'lean' | 'lossless', (b: Uint8Array) => DocModel> = {
  lean: (b) => readDocxModel(b),
  lossless: (b) => readDocxModelWith(parseXml, b),
};
const guard = (fn: () => string) => {
  try {
    return sha(fn());
  } catch (e) {
    return `error:${(e as { code?: string }).code ?? ''}:${sha((e as Error).message)}`;
  }
};
// As src/convert/docx-out.ts does: the model's warnings, then the writer's.
const outputs = (read: (b: Uint8Array) => DocModel, bytes: Uint8Array) => {
  const md = guard(() => {
    const doc = read(bytes);
    const w = new Set(doc.warnings);
    return JSON.stringify([modelToMarkdown(doc, w), [...w]]);
  });
  const html = guard(() => {
    const doc = read(bytes);
    const w = new Set(doc.warnings);
    return JSON.stringify([modelToHtml(doc, w), [...w]]);
  });
  const model = guard(() => JSON.stringify(read(bytes), (_k, v: unknown) => (v instanceof Uint8Array ? `bytes:${sha(v)}` : v)));
  return `md=${md} html=${html} model=${model}`;
};

let differ = 0;
for (const f of files) {
  const bytes = new Uint8Array(fs.readFileSync(path.join(CORPUS_DOCX, f)));
  const lean = outputs(readers.lean, bytes);
  const lossless = outputs(readers.lossless, bytes);
  if (lean === lossless) console.log(`same    ${f} ${lean}`);
  else {
    differ++;
    console.log(`DIFFERS ${f}\n  parseForRead: ${lean}\n  parseXml:     ${lossless}`);
  }
}
console.log(`${files.length} files, ${differ} differ`);
process.exitCode = differ ? 1 : 0;

if (process.argv.includes('--cpu')) {
  const runs = Number(process.env.BENCH_RUNS ?? 5);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
  const cpu = (fn: () => unknown) => {
    const c = process.cpuUsage();
    try {
      fn();
    } catch {
      /* the unreadable files cost what they cost */
    }
    const d = process.cpuUsage(c);
    return (d.user + d.system) / 1000;
  };
  const total = { lean: 0, lossless: 0 };
  const perFile = { lean: [] as number[], lossless: [] as number[] };
  for (const f of files) {
    const bytes = new Uint8Array(fs.readFileSync(path.join(CORPUS_DOCX, f)));
    const xs = { lean: [] as number[], lossless: [] as number[] };
    for (let i = 0; i < runs + 2; i++) {
      for (const k of ['lossless', 'lean'] as const) {
        const t = cpu(() => readers[k](bytes));
        if (i >= 2) xs[k].push(t);
      }
    }
    for (const k of ['lean', 'lossless'] as const) {
      total[k] += median(xs[k]);
      perFile[k].push(median(xs[k]));
    }
  }
  console.log(
    `read CPU over ${files.length} files (sum of per-file medians of ${runs}, interleaved): parseXml ${total.lossless.toFixed(0)} ms, parseForRead ${total.lean.toFixed(0)} ms; median file ${median(perFile.lossless).toFixed(2)} → ${median(perFile.lean).toFixed(2)} ms`,
  );
}
