/**
 * The round trip of issue 17: every CommonMark 0.31.2 and GFM 0.29 spec example (and cmark-gfm's extension
 * and regression examples) goes Markdown → DOCX (Folio's markdownToDocx) → Markdown (docxToMarkdown), and the
 * CommonMark HTML (markdown-it, the same extensions for both) of the result is compared with the original's,
 * two ways:
 * - strict: both HTMLs through the HTML normaliser of the CommonMark spec tests (commonmark-spec's
 *   test/normalize.py, ported below, nothing looser): the spec's own test of "the same HTML". It is the
 *   strictest defensible comparison for a DOCX, which has no soft line breaks (Word joins a paragraph's lines
 *   with a space), and it ignores only what that script ignores (white space next to block tags, runs of
 *   white space outside <pre>, attribute order, character references vs characters);
 * - Word level: both HTMLs through the conformance suite's reference normaliser (reference-html.ts, which
 *   lists each exclusion: tight/loose, container nesting, images as alt text, link titles...), compared as
 *   its canonical lines: what a DOCX can carry must come back.
 * What Word cannot say at all (raw HTML, which Word shows interpreted; images by URL, never fetched; emphasis
 * nested in the same emphasis) comes back through source islands (src/convert/markdown-islands.ts): the
 * block's Markdown kept in a Custom XML Data part, named by a content control around what Word shows, used
 * while that content is unedited.
 * The strict rate of the examples that need no island (what the DOCX itself carries) is printed as well.
 *
 * Rates must not fall below docx-roundtrip-floors.json (floors only go up: FOLIO_ROUNDTRIP_RAISE_FLOORS=1
 * rewrites them to the rates reached, never lowering one). FOLIO_ROUNDTRIP_VERBOSE=1 prints each strict
 * failure with both renderings.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Parser } from 'htmlparser2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docxToMarkdown, markdownToDocx, markdownToHtml } from '../../src/convert/index.js';
import { parseMarkdown } from '../../src/convert/markdown.js';
import { hasIslands } from '../../src/convert/markdown-islands.js';
import { SPEC_FILES, extensionsOf, loadExamples, type Example } from './conformance.js';
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

// The HTML normaliser of the CommonMark spec tests (commonmark/commonmark-spec test/normalize.py), ported:
// white space runs outside <pre> are one space; white space next to a block-level tag is dropped (after an
// opening one, around a closing one, before either); a newline right after <br> is dropped; attributes are
// sorted and their values re-escaped; character references become the characters (except < > & ", written
// as entities); a self-closing tag is an opening tag. Nothing else: inline tags keep the spaces between them.
const NORMALISE_BLOCK = new Set(
  (
    'article header aside hgroup blockquote hr iframe body li map button object canvas ol output dd p dl pre section dir details dt ' +
    'div embed fieldset noscript figcaption figure footer form frameset h1 h2 h3 h4 h5 h6 table thead tbody tfoot tr td th ul video ' +
    'script style'
  ).split(' '),
);
const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source', 'track', 'wbr']);
const escapeText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const escapeAttrValue = (s: string) => escapeText(s).replace(/'/g, '&#x27;');

function normaliseHtml(html: string): string {
  let out = '';
  let last = 'starttag';
  let lastTag = '';
  let inPre = false;
  let text = '';
  const flushText = () => {
    if (!text) return;
    let data = text;
    text = '';
    const afterTag = last === 'endtag' || last === 'starttag';
    const afterBlockTag = afterTag && NORMALISE_BLOCK.has(lastTag);
    if (afterTag && lastTag === 'br') data = data.replace(/^\n+/, '');
    if (!inPre) data = data.replace(/\s+/g, ' ');
    if (afterBlockTag && !inPre) data = last === 'starttag' ? data.trimStart() : data.trim();
    out += escapeText(data);
    last = 'data';
  };
  const parser = new Parser(
    {
      ontext: (data) => {
        text += data;
      },
      onopentag: (name, attribs) => {
        flushText();
        if (name === 'pre') inPre = true;
        if (NORMALISE_BLOCK.has(name)) out = out.trimEnd();
        out += '<' + name;
        for (const k of Object.keys(attribs).sort()) out += ` ${k}="${escapeAttrValue(attribs[k]!)}"`;
        out += '>';
        lastTag = name;
        last = 'starttag';
      },
      onclosetag: (name, implied) => {
        flushText();
        if (implied) {
          // A void element (<br />) is over at once; elements a parser closes for itself are not in the text.
          if (VOID.has(name)) last = 'endtag';
          return;
        }
        if (name === 'pre') inPre = false;
        else if (NORMALISE_BLOCK.has(name)) out = out.trimEnd();
        out += `</${name}>`;
        lastTag = name;
        last = 'endtag';
      },
      oncomment: (data) => {
        flushText();
        out += `<!--${data}-->`;
        last = 'comment';
      },
      onprocessinginstruction: (_name, data) => {
        flushText();
        out += `<${data}>`;
        last = 'decl';
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true, recognizeSelfClosing: true },
  );
  parser.write(html);
  parser.end();
  flushText();
  return out;
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

function rate(key: 'strict' | 'word'): Rate {
  const files: Record<string, number> = {};
  for (const file of SPEC_FILES)
    files[file] = pct(
      results.filter((r) => r.example.file === file),
      key,
    );
  return { overall: pct(results, key), files };
}

describe('Markdown → DOCX → Markdown round trip (CommonMark and GFM spec examples)', () => {
  beforeAll(() => {
    for (const file of SPEC_FILES) {
      for (const example of loadExamples(file)) {
        if (example.html.trim() === '<IGNORE>') continue;
        const extensions = extensionsOf(example);
        const original = markdownToHtml(example.markdown, { extensions });
        let markdown = '';
        let html: string;
        try {
          // The round trip of one's own Markdown: islands verbatim, unsafe raw HTML too (by default, DOCX → Markdown
          // writes what Word shows instead of an island's unsafe HTML: markdown-safety.test.ts).
          markdown = docxToMarkdown(markdownToDocx(example.markdown, { markdownExtensions: extensions }), { trustIslands: true }).markdown;
          html = markdownToHtml(markdown, { extensions });
        } catch (e) {
          html = `error: ${(e as Error).message}`;
        }
        const expected = normaliseHtml(original);
        const actual = normaliseHtml(html);
        const carriable = !hasIslands(parseMarkdown(example.markdown, { extensions }));
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
        `  strict, examples without a source island: ${carriable.filter((r) => r.strict).length}/${carriable.length} = ${pct(carriable, 'strict').toFixed(1)}%`,
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
