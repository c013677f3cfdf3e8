/**
 * Markdown conformance read back through pandoc's DOCX reader (an oracle nobody here wrote): every example of
 * the shared Markdown corpus is converted by Folio's markdownToDocx, the DOCX is read by `pandoc -f docx -t html`,
 * and pandoc's HTML is compared with the example's reference HTML, both normalised by the same rules
 * (test/convert/reference-html.ts → word-model.ts canonical lines) as the conformance test uses.
 *
 *   nice -n 10 node --import tsx scripts/pandoc-reader-conformance.ts [--sample N] [--jobs 2] [--failures FILE]
 *                                                                     [--writer folio|pandoc] [--src DIR]
 *
 * --sample N takes every Nth example (quicker; the figure is then an estimate). --jobs: pandoc processes at a
 * time (default 2). --writer pandoc measures pandoc's own Markdown → DOCX writer the same way (reader options
 * as scripts/pandoc-conformance.ts). --src DIR imports markdownToDocx from another checkout's src/convert
 * (e.g. an export of an earlier commit, to measure a before/after). The DOCX goes to pandoc on stdin and the
 * HTML comes back on stdout: nothing is written to disk. One pandoc process per example.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  SPEC_FILES,
  describeFailure,
  extensionsOf,
  formatRates,
  loadExamples,
  tally,
  type Example,
  type Outcome,
} from '../test/convert/conformance.js';
import { cliOption, pandocReaderFor } from './pandoc-spec.js';
import { normaliseReferenceHtml } from '../test/convert/reference-html.js';
import { canonical } from '../test/convert/word-model.js';

const args = process.argv.slice(2);
const opt = (name: string) => cliOption(name, args);
const sample = Math.max(1, Number(opt('--sample') ?? 1));
const jobs = Math.max(1, Number(opt('--jobs') ?? 2));
const failuresFile = opt('--failures');
const writer = opt('--writer') ?? 'folio';
const srcDir = opt('--src');

type ToDocx = (md: string, o: { markdownExtensions: string[] }) => Uint8Array;
const convertModule = srcDir
  ? pathToFileURL(path.resolve(srcDir, 'src/convert/index.ts')).href
  : new URL('../src/convert/index.ts', import.meta.url).href;
const { markdownToDocx } = (await import(convertModule)) as { markdownToDocx: ToDocx };

function run(argv: string[], input: Uint8Array | string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn('pandoc', argv, { stdio: ['pipe', 'pipe', 'pipe'], timeout: 60_000 });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`pandoc exited ${code}: ${Buffer.concat(err).toString().slice(0, 300)}`)),
    );
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });
}

async function measure(example: Example): Promise<Outcome> {
  let docx: Uint8Array;
  try {
    docx =
      writer === 'pandoc'
        ? await run(['-f', pandocReaderFor(example), '-t', 'docx', '--preserve-tabs', '-o', '-'], example.markdown)
        : markdownToDocx(example.markdown, { markdownExtensions: extensionsOf(example) });
  } catch (e) {
    return { example, pass: false, expected: [], actual: [], error: `conversion: ${(e as Error).message}` };
  }
  let html: string;
  try {
    html = (await run(['-f', 'docx', '-t', 'html'], docx)).toString('utf8');
  } catch (e) {
    return { example, pass: false, expected: [], actual: [], error: `pandoc reader: ${(e as Error).message}` };
  }
  const actual = canonical(normaliseReferenceHtml(html));
  // Upstream's crash tests have no expected rendering: readable is a pass.
  if (example.html.trim() === '<IGNORE>') return { example, pass: true, expected: actual, actual };
  const expected = canonical(normaliseReferenceHtml(example.html));
  const pass = expected.length === actual.length && expected.every((line, i) => line === actual[i]);
  return { example, pass, expected, actual };
}

const examples = SPEC_FILES.flatMap((f) => loadExamples(f)).filter((_, i) => i % sample === 0);
const outcomes: Outcome[] = new Array<Outcome>(examples.length);
const started = Date.now();
let next = 0;
let done = 0;
await Promise.all(
  Array.from({ length: jobs }, async () => {
    while (next < examples.length) {
      const i = next++;
      outcomes[i] = await measure(examples[i]!);
      if (++done % 100 === 0) process.stderr.write(`${done}/${examples.length} (${Math.round((Date.now() - started) / 1000)} s)\n`);
    }
  }),
);
const version = (await run(['--version'], '')).toString().split('\n')[0];
const label = `${writer === 'pandoc' ? 'pandoc -t docx' : `Folio markdownToDocx${srcDir ? ` (${srcDir})` : ''}`} → ${version} -f docx -t html${sample > 1 ? `, every ${sample}th example` : ''}`;
console.log(formatRates(tally(outcomes), label));
console.log(`${Math.round((Date.now() - started) / 1000)} s, ${jobs} pandoc processes at a time`);
if (failuresFile)
  fs.writeFileSync(
    failuresFile,
    outcomes
      .filter((o) => !o.pass)
      .map(describeFailure)
      .join('\n\n') + '\n',
  );
