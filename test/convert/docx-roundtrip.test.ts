/**
 * The round trip of issue 17: every CommonMark 0.31.2 and GFM 0.29 spec example (and cmark-gfm's extension
 * and regression examples) goes Markdown → DOCX (Folio's markdownToDocx) → Markdown (docxToMarkdown), and the
 * CommonMark HTML (markdown-it, the same extensions for both) of the result is compared with the original's,
 * two ways:
 * - strict: the HTML with white space normalised outside <pre> (runs of white space are one space, none
 *   between tags), because a DOCX has no soft line breaks (Word joins a paragraph's lines with a space);
 *   nothing else is normalised. Raw HTML cannot survive (md→docx interprets it), nor URL images (md→docx
 *   never fetches them: CONTRACT §3), nor what Word cannot say (emphasis nested in the same emphasis, code
 *   info strings, tight vs loose lists), so this rate has a ceiling well below 100%;
 * - Word level: both HTMLs through the conformance suite's reference normaliser (reference-html.ts, which
 *   lists each exclusion: tight/loose, container nesting, images as alt text, link titles...), compared as
 *   its canonical lines: what a DOCX can carry must come back.
 * The rate of examples without raw HTML or images under the strict comparison is printed as well.
 *
 * Rates must not fall below docx-roundtrip-floors.json (floors only go up: FOLIO_ROUNDTRIP_RAISE_FLOORS=1
 * rewrites them to the rates reached, never lowering one). FOLIO_ROUNDTRIP_VERBOSE=1 prints each strict
 * failure with both renderings.
 */
import fs from 'node:fs';
import path from 'node:path';
import MarkdownIt from 'markdown-it';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docxToMarkdown, markdownToDocx, markdownToHtml } from '../../src/convert/index.js';
import { CORPUS_DIR, SPEC_FILES, extensionsOf, loadExamples, type Example } from './conformance.js';
import { normaliseReferenceHtml } from './reference-html.js';
import { canonical } from './word-model.js';

interface Rate {
  overall: number;
  files: Record<string, number>;
}
interface Floors {
  strict: Rate;
  wordLevel: Rate;
}

const FLOORS_FILE = path.join(import.meta.dirname, 'docx-roundtrip-floors.json');
const floors = JSON.parse(fs.readFileSync(FLOORS_FILE, 'utf8')) as Floors;
const hasCorpus = fs.existsSync(path.join(CORPUS_DIR, 'commonmark-spec.json'));

/** White space outside <pre> collapsed; none between tags. */
function normaliseHtml(html: string): string {
  return html
    .split(/(<pre[\s>][\s\S]*?<\/pre>)/)
    .map((part, i) => (i % 2 ? part : part.replace(/\s+/g, ' ').replace(/> </g, '><')))
    .join('')
    .trim();
}

function wordLevel(html: string): string {
  try {
    return canonical(normaliseReferenceHtml(html)).join('\n');
  } catch (e) {
    return `error: ${(e as Error).message}`;
  }
}

interface Result {
  example: Example;
  strict: boolean;
  word: boolean;
  carriable: boolean;
  expected: string;
  actual: string;
  markdown: string;
}

const results: Result[] = [];
const pct = (list: Result[], key: 'strict' | 'word') => (list.length ? (100 * list.filter((r) => r[key]).length) / list.length : 100);
const floor1 = (x: number) => Math.floor(x * 10) / 10;
const tokens = new MarkdownIt('commonmark', { html: true });

function rate(key: 'strict' | 'word'): Rate {
  const files: Record<string, number> = {};
  for (const file of SPEC_FILES)
    files[file] = pct(
      results.filter((r) => r.example.file === file),
      key,
    );
  return { overall: pct(results, key), files };
}

describe.skipIf(!hasCorpus)('Markdown → DOCX → Markdown round trip (CommonMark and GFM spec examples)', () => {
  beforeAll(() => {
    for (const file of SPEC_FILES) {
      for (const example of loadExamples(file)) {
        if (example.html.trim() === '<IGNORE>') continue;
        const extensions = extensionsOf(example);
        const original = markdownToHtml(example.markdown, { extensions });
        let markdown = '';
        let html: string;
        try {
          markdown = docxToMarkdown(markdownToDocx(example.markdown, { markdownExtensions: extensions })).markdown;
          html = markdownToHtml(markdown, { extensions });
        } catch (e) {
          html = `error: ${(e as Error).message}`;
        }
        const expected = normaliseHtml(original);
        const actual = normaliseHtml(html);
        const carriable = !tokens
          .parse(example.markdown, {})
          .some((t) => t.type === 'html_block' || (t.children ?? []).some((k) => k.type === 'html_inline' || k.type === 'image'));
        results.push({ example, strict: actual === expected, word: wordLevel(original) === wordLevel(html), carriable, expected, actual, markdown });
      }
    }
  }, 600_000);

  afterAll(() => {
    if (results.length === 0) return;
    const show = (label: string, r: Rate, n: number) =>
      `${label}: ${n}/${results.length} = ${r.overall.toFixed(1)}% (` +
      Object.entries(r.files)
        .map(([f, v]) => `${f} ${v.toFixed(1)}%`)
        .join(', ') +
      ')';
    const strict = rate('strict');
    const word = rate('word');
    const carriable = results.filter((r) => r.carriable);
    console.log(
      `md → docx → md round trip over ${results.length} spec examples\n` +
        `  ${show('strict HTML equality', strict, results.filter((r) => r.strict).length)}\n` +
        `  ${show('Word-level equality', word, results.filter((r) => r.word).length)}\n` +
        `  strict, examples without raw HTML or images: ${carriable.filter((r) => r.strict).length}/${carriable.length} = ${pct(carriable, 'strict').toFixed(1)}%`,
    );
    const failed = results.filter((x) => !x.strict);
    if (process.env.FOLIO_ROUNDTRIP_VERBOSE) {
      for (const f of failed) {
        console.log(
          `--- ${f.example.file}#${f.example.example} (${f.example.section})${f.word ? ' [word-level equal]' : ''}\n` +
            `${JSON.stringify(f.example.markdown)}\n→ ${JSON.stringify(f.markdown)}\nexpected ${f.expected}\nactual   ${f.actual}`,
        );
      }
    }
    if (process.env.FOLIO_ROUNDTRIP_RAISE_FLOORS) {
      const raise = (old: Rate, now: Rate): Rate => ({
        overall: Math.max(old.overall, floor1(now.overall)),
        files: Object.fromEntries(Object.entries(now.files).map(([f, v]) => [f, Math.max(old.files[f] ?? 0, floor1(v))])),
      });
      const next: Floors = { strict: raise(floors.strict, strict), wordLevel: raise(floors.wordLevel, word) };
      fs.writeFileSync(FLOORS_FILE, JSON.stringify(next, null, 2) + '\n');
    }
  });

  it('keeps at least 95% of the examples at Word level, and never falls below the committed floors', () => {
    expect(results.length).toBeGreaterThan(1300);
    expect(floors.wordLevel.overall).toBeGreaterThanOrEqual(95);
    for (const [key, floor] of [
      ['strict', floors.strict],
      ['word', floors.wordLevel],
    ] as const) {
      const r = rate(key);
      expect(r.overall, `${key} overall`).toBeGreaterThanOrEqual(floor.overall);
      for (const [file, f] of Object.entries(floor.files)) expect(r.files[file], `${key} ${file}`).toBeGreaterThanOrEqual(f);
    }
  });
});
