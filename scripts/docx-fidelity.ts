/**
 * DOCX → HTML/Markdown fidelity over the shared corpora, scored by test/convert/fidelity.ts (structure and text
 * F1), for Folio and for its peers on the same files: pandoc's DOCX reader (`pandoc -f docx -t html --mathml`)
 * and mammoth (`convertToHtml`, a dev dependency used here only). Three sets:
 * - `goldens`: the corpus's pandoc test files against the facts of pandoc's own expected outputs
 *   (test/fixtures/docx-fidelity/pandoc-goldens.json);
 * - `docx`: the corpus's other readable files, against what their XML states (fidelity-reference.ts);
 * - `wild`: the Open-Xml-PowerTools files of docx-wild, against what their XML states.
 *
 *   node --import tsx scripts/docx-fidelity.ts [--only SUBSTRING] [--before DIR] [--no-peers] [--json FILE] [--worst N]
 *
 * --before DIR also scores another checkout's exporter (DIR/src/convert/index.ts, e.g. `git archive` of an earlier
 * commit), to measure a before/after. The F1 of a set is the mean of its files' F1 (each file counts the same);
 * the pooled F1 (the counts of all files added up, so large files weigh more) is shown beside it. pandoc's
 * outputs are cached in the temporary folder (keyed by pandoc's version and the file's SHA-256).
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { addCounts, compare, f1, factsFrom, htmlFacts, markdownFacts, type Counts, type Facts, type FactsRecord } from '../test/convert/fidelity.js';
import { xmlFacts } from '../test/convert/fidelity-reference.js';
import { cliOption } from './pandoc-spec.js';

const CORPUS = '/work/shared/corpus';
const BROKEN = ['poi--bug53475-password-is-pass.docx', 'poi--truncated62886.docx', 'poi--clusterfuzz-XWPF-5313273089884160.docx'];
const args = process.argv.slice(2);
const only = cliOption('--only', args);
const beforeDir = cliOption('--before', args);
const jsonFile = cliOption('--json', args);
const worst = Number(cliOption('--worst', args) ?? 0);
const peers = !args.includes('--no-peers');

type Exporter = (b: Uint8Array) => Promise<string>;
interface ConvertModule {
  docxToHtml(b: Uint8Array, o?: object): { html: string };
  docxToMarkdown(b: Uint8Array, o?: object): { markdown: string };
}
const load = async (dir: string) => (await import(pathToFileURL(path.resolve(dir, 'src/convert/index.ts')).href)) as ConvertModule;
const folio = await load(path.resolve(import.meta.dirname, '..'));
const before = beforeDir ? await load(beforeDir) : undefined;

const pandocVersion = spawnSync('pandoc', ['--version'], { encoding: 'utf8' }).stdout?.split('\n')[0] ?? '';
const cacheDir = path.join(os.tmpdir(), 'folio-docx-fidelity');
fs.mkdirSync(cacheDir, { recursive: true });
function pandocHtml(b: Uint8Array): string {
  const key = crypto.createHash('sha256').update(pandocVersion).update(b).digest('hex').slice(0, 24);
  const file = path.join(cacheDir, `${key}.html`);
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8');
  const r = spawnSync('pandoc', ['-f', 'docx', '-t', 'html', '--mathml'], { input: b, encoding: 'utf8', timeout: 120_000, maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`pandoc failed: ${(r.stderr ?? '').slice(0, 200)}`);
  fs.writeFileSync(file, r.stdout);
  return r.stdout;
}
const mammoth = peers
  ? ((await import('mammoth')) as unknown as { default: { convertToHtml(i: { buffer: Buffer }): Promise<{ value: string }> } }).default
  : undefined;

const exporters: Record<string, { kind: 'html' | 'md'; run: Exporter }> = {
  'Folio HTML': { kind: 'html', run: async (b) => folio.docxToHtml(b).html },
  'Folio Markdown': { kind: 'md', run: async (b) => folio.docxToMarkdown(b).markdown },
  ...(before
    ? {
        'before HTML': { kind: 'html' as const, run: async (b: Uint8Array) => before.docxToHtml(b).html },
        'before Markdown': { kind: 'md' as const, run: async (b: Uint8Array) => before.docxToMarkdown(b).markdown },
      }
    : {}),
  ...(peers
    ? {
        'pandoc 2.17 HTML': { kind: 'html' as const, run: async (b: Uint8Array) => pandocHtml(b) },
        'mammoth HTML': { kind: 'html' as const, run: async (b: Uint8Array) => (await mammoth!.convertToHtml({ buffer: Buffer.from(b) })).value },
      }
    : {}),
};

const goldens = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '../test/fixtures/docx-fidelity/pandoc-goldens.json'), 'utf8')) as Record<
  string,
  FactsRecord
>;
const docxFiles = fs.readdirSync(path.join(CORPUS, 'docx')).filter((f) => /\.(docx|docm|dotx)$/i.test(f) && !BROKEN.includes(f));
const sets: Array<{ name: string; files: Array<{ name: string; file: string; ref: () => Facts }> }> = [
  {
    name: "pandoc's goldens (docx/pandoc--*)",
    files: docxFiles.filter((f) => goldens[f]).map((f) => ({ name: f, file: path.join(CORPUS, 'docx', f), ref: () => factsFrom(goldens[f]!) })),
  },
  {
    name: 'docx/ others (XML reference)',
    files: docxFiles
      .filter((f) => !goldens[f])
      .map((f) => ({
        name: f,
        file: path.join(CORPUS, 'docx', f),
        ref: () => xmlFacts(new Uint8Array(fs.readFileSync(path.join(CORPUS, 'docx', f)))),
      })),
  },
  {
    name: 'docx-wild (XML reference)',
    files: fs
      .readdirSync(path.join(CORPUS, 'docx-wild'))
      .filter((f) => f.endsWith('.docx'))
      .map((f) => ({
        name: f,
        file: path.join(CORPUS, 'docx-wild', f),
        ref: () => xmlFacts(new Uint8Array(fs.readFileSync(path.join(CORPUS, 'docx-wild', f)))),
      })),
  },
];

interface FileScore {
  file: string;
  scores: Record<string, { structure: number; text: number; error?: string }>;
}
const report: Record<string, FileScore[]> = {};
for (const set of sets) {
  const files = set.files.filter((f) => !only || f.name.includes(only)).sort((a, b) => a.name.localeCompare(b.name));
  if (!files.length) continue;
  const totals: Record<string, { structure: Counts; text: Counts; errors: number; sumS: number; sumT: number; n: number }> = {};
  for (const name of Object.keys(exporters))
    totals[name] = { structure: { ref: 0, out: 0, matched: 0 }, text: { ref: 0, out: 0, matched: 0 }, errors: 0, sumS: 0, sumT: 0, n: 0 };
  const rows: FileScore[] = [];
  for (const f of files) {
    const bytes = new Uint8Array(fs.readFileSync(f.file));
    let ref: Facts;
    try {
      ref = f.ref();
    } catch {
      continue;
    }
    const row: FileScore = { file: f.name, scores: {} };
    for (const [name, ex] of Object.entries(exporters)) {
      let c: ReturnType<typeof compare>;
      try {
        const out = await ex.run(bytes);
        c = compare(ref, ex.kind === 'html' ? htmlFacts(out) : markdownFacts(out));
      } catch (e) {
        // A converter that fails keeps nothing of the file.
        totals[name]!.errors++;
        c = compare(ref, { keys: new Map(), words: new Map() });
        row.scores[name] = { structure: f1(c.structure), text: f1(c.text), error: (e as Error).message.slice(0, 120) };
      }
      const t = totals[name]!;
      addCounts(t.structure, c.structure);
      addCounts(t.text, c.text);
      t.sumS += f1(c.structure);
      t.sumT += f1(c.text);
      t.n++;
      row.scores[name] ??= { structure: f1(c.structure), text: f1(c.text) };
    }
    rows.push(row);
  }
  report[set.name] = rows;
  console.log(`\n${set.name}: ${rows.length} files\n`);
  console.log('| converter | text F1 | structure F1 | pooled text / structure | failed |');
  console.log('|---|---|---|---|---|');
  for (const [name, t] of Object.entries(totals))
    console.log(
      `| ${name} | ${(t.sumT / t.n).toFixed(3)} | ${(t.sumS / t.n).toFixed(3)} | ${f1(t.text).toFixed(3)} / ${f1(t.structure).toFixed(3)} | ${t.errors} |`,
    );
  if (worst > 0) {
    console.log(`\nlowest Folio HTML structure F1:`);
    for (const r of [...rows].sort((a, b) => a.scores['Folio HTML']!.structure - b.scores['Folio HTML']!.structure).slice(0, worst)) {
      console.log(
        `  ${r.file}: ` +
          Object.entries(r.scores)
            .map(([n, s]) => `${n} ${s.structure.toFixed(2)}/${s.text.toFixed(2)}`)
            .join(', '),
      );
    }
  }
}
if (jsonFile) fs.writeFileSync(jsonFile, JSON.stringify(report, null, 1));
