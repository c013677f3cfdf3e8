/**
 * Measures pandoc's own Markdown → DOCX conformance the way test/convert/conformance.test.ts measures ours:
 * every example of the shared Markdown corpus is converted by `pandoc -t docx`, read back with the SAME DOCX
 * reader, and compared with the reference HTML by the SAME normaliser and rules.
 *
 *   nice -n 10 node --import tsx scripts/pandoc-conformance.ts [--failures FILE] [--cm-reader commonmark|commonmark_x]
 *
 * Reader per example, as our converter gets its extensions: the CommonMark spec with `-f commonmark` (strict;
 * `--cm-reader commonmark_x` measures pandoc's extended CommonMark instead), the GFM files with `-f gfm` and only
 * the example's extensions on (autolink → autolink_bare_uris, table → pipe_tables, strikethrough → strikeout,
 * tasklist → task_lists, footnotes → footnotes; pandoc has no tag filter), and --preserve-tabs. Input goes through stdin and the
 * DOCX comes back on stdout: nothing is written to disk. Takes several minutes (one pandoc process per example).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import {
  SPEC_FILES,
  compareExample,
  describeFailure,
  formatRates,
  loadExamples,
  tally,
  type Example,
  type Outcome,
} from '../test/convert/conformance.js';
import { cliOption, pandocReaderFor } from './pandoc-spec.js';

const args = process.argv.slice(2);
const opt = (name: string) => cliOption(name, args);
const failuresFile = opt('--failures');
const cmReader = opt('--cm-reader') ?? 'commonmark';

function pandocDocx(example: Example): Uint8Array | Error {
  // --preserve-tabs: pandoc otherwise expands tabs in code to spaces, which the spec examples count as wrong.
  const r = spawnSync('pandoc', ['-f', pandocReaderFor(example, cmReader), '-t', 'docx', '--preserve-tabs', '-o', '-'], {
    input: example.markdown,
    maxBuffer: 64 * 1024 * 1024,
    timeout: 60_000,
  });
  if (r.error) return r.error;
  if (r.status !== 0) return new Error(`pandoc exited ${r.status}: ${r.stderr.toString().slice(0, 300)}`);
  return new Uint8Array(r.stdout);
}

const version = spawnSync('pandoc', ['--version']).stdout?.toString().split('\n')[0] ?? 'pandoc (not found)';
const outcomes: Outcome[] = [];
const started = Date.now();
for (const file of SPEC_FILES) {
  for (const example of loadExamples(file)) outcomes.push(compareExample(example, pandocDocx(example)));
  process.stderr.write(`${file}: done (${Math.round((Date.now() - started) / 1000)} s)\n`);
}
console.log(formatRates(tally(outcomes), `${version}, CommonMark reader ${cmReader}`));
if (failuresFile)
  fs.writeFileSync(
    failuresFile,
    outcomes
      .filter((o) => !o.pass)
      .map(describeFailure)
      .join('\n\n') + '\n',
  );
