/**
 * DOCX → HTML/Markdown fidelity on documents nobody here wrote (issue 27), scored by fidelity.ts (structure
 * and text F1) with per-file floors that only go up (docx-fidelity-floors.json):
 * - pandoc's DOCX test files (test/fixtures/docx-pandoc) against the facts of pandoc's own expected outputs
 *   (test/fixtures/docx-fidelity/pandoc-goldens.json);
 * - Open-Xml-PowerTools documents (test/fixtures/docx-wild: equations, text boxes, groups, symbol fonts,
 *   indents, Courier, tracked changes) against what their XML states (fidelity-reference.ts);
 * - Markdown → DOCX → Markdown round trips of documents using every structure the scorer knows, math included.
 * The full corpora (../shared) are scored by scripts/docx-fidelity.ts, with pandoc and mammoth beside Folio
 * (figures in bench/README.md).
 *
 * FOLIO_FIDELITY_RAISE_FLOORS=1 rewrites the floors to the scores reached (rounded down to 0.005), never lowering one.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { docxToHtml, docxToMarkdown, markdownToDocx } from '../../src/convert/index.js';
import { compare, f1, factsFrom, htmlFacts, markdownFacts, type Facts, type FactsRecord } from './fidelity.js';
import { xmlFacts } from './fidelity-reference.js';

const FIXTURES = path.join(import.meta.dirname, '../fixtures');
const FLOORS_FILE = path.join(import.meta.dirname, 'docx-fidelity-floors.json');
type Floors = Record<string, { structure: number; text: number }>;
const floors = (fs.existsSync(FLOORS_FILE) ? JSON.parse(fs.readFileSync(FLOORS_FILE, 'utf8')) : {}) as Floors;
const reached: Floors = {};
const goldens = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'docx-fidelity/pandoc-goldens.json'), 'utf8')) as Record<string, FactsRecord>;

function check(key: string, ref: Facts, out: Facts): { structure: number; text: number } {
  const c = compare(ref, out);
  const s = { structure: f1(c.structure), text: f1(c.text) };
  reached[key] = s;
  const floor = floors[key];
  if (floor && !process.env.FOLIO_FIDELITY_RAISE_FLOORS) {
    expect(s.structure, `${key} structure F1`).toBeGreaterThanOrEqual(floor.structure);
    expect(s.text, `${key} text F1`).toBeGreaterThanOrEqual(floor.text);
  }
  return s;
}

afterAll(() => {
  if (!process.env.FOLIO_FIDELITY_RAISE_FLOORS) return;
  const down = (x: number) => Math.floor(x * 200) / 200;
  const next: Floors = { ...floors };
  for (const [k, s] of Object.entries(reached)) {
    const old = floors[k];
    next[k] = { structure: Math.max(old?.structure ?? 0, down(s.structure)), text: Math.max(old?.text ?? 0, down(s.text)) };
  }
  const sorted = Object.fromEntries(Object.entries(next).sort(([a], [b]) => a.localeCompare(b)));
  fs.writeFileSync(FLOORS_FILE, JSON.stringify(sorted, null, 1) + '\n');
});

const read = (dir: string, f: string) => new Uint8Array(fs.readFileSync(path.join(FIXTURES, dir, f)));

describe("pandoc's test files against pandoc's goldens", () => {
  const files = fs.readdirSync(path.join(FIXTURES, 'docx-pandoc')).filter((f) => f.endsWith('.docx') && goldens[f]);
  it('has the goldens of every fixture', () => expect(files.length).toBe(Object.keys(goldens).length));
  for (const f of files) {
    it(f, () => {
      const bytes = read('docx-pandoc', f);
      const ref = factsFrom(goldens[f]!);
      check(`html ${f}`, ref, htmlFacts(docxToHtml(bytes).html));
      check(`md ${f}`, ref, markdownFacts(docxToMarkdown(bytes).markdown));
    });
  }
});

describe('Open-Xml-PowerTools documents against their XML', () => {
  const files = fs.readdirSync(path.join(FIXTURES, 'docx-wild')).filter((f) => f.endsWith('.docx'));
  for (const f of files) {
    it(f, () => {
      const bytes = read('docx-wild', f);
      const ref = xmlFacts(bytes);
      check(`html ${f}`, ref, htmlFacts(docxToHtml(bytes).html));
      check(`md ${f}`, ref, markdownFacts(docxToMarkdown(bytes).markdown));
    });
  }

  it('keeps what issue 27 names: equations apart, text boxes, symbols, no quotes or code from indents or Courier', () => {
    const eq = docxToHtml(read('docx-wild', 'powertools--TestFiles_WC_WC031-Two-Maths-After.docx')).html;
    expect(eq.match(/<math /g)?.length).toBe(2);
    const deleted = docxToMarkdown(read('docx-wild', 'powertools--TestFiles_FA_RevTracking_012-DeletedMathChar.docx')).markdown;
    expect(deleted).toContain('$$A=r^{2}$$');
    const box = docxToMarkdown(read('docx-wild', 'powertools--TestFiles_WC_WC050-Table-in-Text-Box.docx')).markdown;
    expect(markdownFacts(box).keys.get('cell')).toBeGreaterThan(0);
    expect(docxToMarkdown(read('docx-wild', 'powertools--TestFiles_HC021-Symbols.docx')).markdown).toContain('☺');
    for (const f of ['powertools--NewDocxDocuments_HorizontalWhiteSpace.docx', 'powertools--TestFiles_DA002-TemplateDocument.docx']) {
      const h = docxToHtml(read('docx-wild', f)).html;
      expect(h, f).not.toContain('<blockquote>');
    }
    expect(docxToHtml(read('docx-wild', 'powertools--TestFiles_DA002-TemplateDocument.docx')).html).not.toContain('<pre>');
  });
});

/** Markdown documents using every structure the scorer knows. */
const MARKDOWN: Record<string, string> = {
  structure: [
    '# Title',
    '',
    'A paragraph with **strong**, *emphasis*, ~~strike~~, <sup>sup</sup>, <sub>sub</sub> and a [link](https://example.com/a).',
    '',
    '## Lists',
    '',
    '- one',
    '- two',
    '  1. nested a',
    '  2. nested b',
    '- three',
    '',
    '> A quoted paragraph.',
    '',
    '```js',
    'const x = 1;',
    '```',
    '',
    '| a | b |',
    '|---|---|',
    '| 1 | 2 |',
    '',
    'A note.[^1]',
    '',
    '[^1]: The note text.',
    '',
  ].join('\n'),
  math: [
    'Inline $A=\\pi r^{2}$ and $e^{i\\pi}+1=0$ in text.',
    '',
    '$$\\int_{0}^{\\infty}e^{-x^{2}}dx=\\frac{\\sqrt{\\pi}}{2}$$',
    '',
    'Matrix $\\begin{pmatrix} a & b \\\\ c & d \\end{pmatrix}$ and a limit $\\lim_{n\\rightarrow\\infty}a_{n}$.',
    '',
    '$$\\begin{aligned} x & =1 \\\\ y & =2 \\end{aligned}$$',
    '',
  ].join('\n'),
};

describe('Markdown → DOCX → Markdown', () => {
  for (const [name, md] of Object.entries(MARKDOWN)) {
    it(name, () => {
      const back = docxToMarkdown(markdownToDocx(md)).markdown;
      const s = check(`roundtrip ${name}`, markdownFacts(md), markdownFacts(back));
      expect(s.structure).toBeGreaterThan(0.9);
    });
  }
});
