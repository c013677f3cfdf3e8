/**
 * The conformance harness shared by conformance.test.ts (our converter) and scripts/pandoc-conformance.ts
 * (pandoc, measured the same way): loads the spec examples of the corpus, converts each with a given
 * Markdown → DOCX function, reads the DOCX back (docx-reader.ts), normalises the reference HTML
 * (reference-html.ts) and compares the two Word-level renderings block by block.
 */
import fs from 'node:fs';
import path from 'node:path';
import { CORPUS_MARKDOWN } from '../helpers/corpus.js';
import { readDocx } from './docx-reader.js';
import { normaliseReferenceHtml } from './reference-html.js';
import { canonical } from './word-model.js';

/** The spec examples as JSON (test/fixtures/corpus/markdown). */
export const CORPUS_DIR = CORPUS_MARKDOWN;
export const SPEC_FILES = ['commonmark-spec', 'gfm-spec', 'gfm-extensions', 'gfm-regression'] as const;
export type SpecFile = (typeof SPEC_FILES)[number];

export interface Example {
  file: SpecFile;
  example: number;
  section: string;
  markdown: string;
  html: string;
  extensions?: string[];
}

export function loadExamples(file: SpecFile): Example[] {
  const raw = JSON.parse(fs.readFileSync(path.join(CORPUS_DIR, `${file}.json`), 'utf8')) as Array<Omit<Example, 'file'>>;
  return raw.map((e) => ({ ...e, file }));
}

const KNOWN_EXTENSIONS = new Set(['table', 'strikethrough', 'autolink', 'tagfilter', 'footnotes', 'tasklist']);
export type Extension = 'table' | 'strikethrough' | 'autolink' | 'tagfilter' | 'footnotes' | 'tasklist';

/**
 * The GFM extensions an example is specified with, as the upstream test runners enable them: none for the
 * CommonMark spec, the example's own list in the GFM files (an untagged GFM example is core CommonMark).
 */
export function extensionsOf(example: Example): Extension[] {
  if (example.file === 'commonmark-spec') return [];
  return (example.extensions ?? []).filter((e): e is Extension => KNOWN_EXTENSIONS.has(e));
}

export interface Outcome {
  example: Example;
  pass: boolean;
  expected: string[];
  actual: string[];
  error?: string;
}

export function compareExample(example: Example, docx: Uint8Array | Error): Outcome {
  if (docx instanceof Error) return { example, pass: false, expected: [], actual: [], error: docx.message };
  if (example.html.trim() === '<IGNORE>') {
    // Upstream's crash tests: no expected rendering, only that the input converts into a readable DOCX.
    try {
      const actual = canonical(readDocx(docx));
      return { example, pass: true, expected: actual, actual };
    } catch (e) {
      return { example, pass: false, expected: [], actual: [], error: `unreadable DOCX: ${(e as Error).message}` };
    }
  }
  const expected = canonical(normaliseReferenceHtml(example.html));
  let actual: string[];
  try {
    actual = canonical(readDocx(docx));
  } catch (e) {
    return { example, pass: false, expected, actual: [], error: `unreadable DOCX: ${(e as Error).message}` };
  }
  const pass = expected.length === actual.length && expected.every((line, i) => line === actual[i]);
  return { example, pass, expected, actual };
}

export interface Tally {
  passed: number;
  total: number;
}

export interface Rates {
  /** file → section → tally */
  sections: Record<string, Record<string, Tally>>;
  files: Record<string, Tally>;
  overall: Tally;
}

export function tally(outcomes: readonly Outcome[]): Rates {
  const rates: Rates = { sections: {}, files: {}, overall: { passed: 0, total: 0 } };
  for (const o of outcomes) {
    const { file, section } = o.example;
    const s = ((rates.sections[file] ??= {})[section] ??= { passed: 0, total: 0 });
    const f = (rates.files[file] ??= { passed: 0, total: 0 });
    for (const t of [s, f, rates.overall]) {
      t.total++;
      if (o.pass) t.passed++;
    }
  }
  return rates;
}

export const pct = (t: Tally) => (t.total ? (100 * t.passed) / t.total : 100);

/** A printable table: per file and section, passed/total and percent. */
export function formatRates(rates: Rates, label: string): string {
  const lines = [`${label}: ${rates.overall.passed}/${rates.overall.total} = ${pct(rates.overall).toFixed(1)}% overall`];
  for (const [file, sections] of Object.entries(rates.sections)) {
    const f = rates.files[file]!;
    lines.push(`  ${file}: ${f.passed}/${f.total} = ${pct(f).toFixed(1)}%`);
    for (const [section, t] of Object.entries(sections)) {
      lines.push(`    ${section.padEnd(48)} ${`${t.passed}/${t.total}`.padStart(8)} ${pct(t).toFixed(1).padStart(6)}%`);
    }
  }
  return lines.join('\n');
}

/** A readable account of one failure: the Markdown, then expected vs actual block lines. */
export function describeFailure(o: Outcome): string {
  const e = o.example;
  const out = [`${e.file} #${e.example} (${e.section})`, `  markdown: ${JSON.stringify(e.markdown)}`];
  if (o.error) out.push(`  error: ${o.error}`);
  const n = Math.max(o.expected.length, o.actual.length);
  for (let i = 0; i < n; i++) {
    const x = o.expected[i];
    const y = o.actual[i];
    if (x === y) out.push(`    = ${x}`);
    else {
      out.push(`    - ${x ?? '(none)'}`);
      out.push(`    + ${y ?? '(none)'}`);
    }
  }
  return out.join('\n');
}
