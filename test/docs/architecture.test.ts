/**
 * ARCHITECTURE.md stays a short, true map (issue 26: of five claims checked, three were false and a file named
 * four functions that no longer existed). Checked here: every path it names exists (in backticks, and in the
 * request-flow diagrams), every lint rule it names is configured in eslint.config.js, every folder and file of
 * src/ is on the map, and every list item and table row names what holds it — a test file or a lint rule.
 * Whether the named test asserts the statement is the reviewer's part: change the two together.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './repository-files.js';

const MAP = fs.readFileSync(path.join(ROOT, 'ARCHITECTURE.md'), 'utf8');
const ESLINT_CONFIG = fs.readFileSync(path.join(ROOT, 'eslint.config.js'), 'utf8');

const MAX_LINES = 250;
const TOP = /^(?:src|test|tools|scripts|bench|docs|packages|deploy|playground|fonts)\//;
const ROOT_FILES = new Set(['eslint.config.js', 'vitest.config.ts', 'package.json', 'Dockerfile', 'compose.yaml', 'README.md', 'CONTRIBUTING.md']);
const RULE = /^(?:folio\/[\w-]+|@typescript-eslint\/[\w-]+|no-restricted-[\w-]+)$/;
const TABLE = /^(?:LAYERS|FORBID|ALLOW)$/;

/** The text outside code fences, and the text inside them. */
function split(markdown: string): { prose: string[]; code: string[] } {
  const prose: string[] = [];
  const code: string[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    else (fenced ? code : prose).push(line);
  }
  return { prose, code };
}

const backticked = (text: string) => [...text.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!);

/** A repository path as written (`src/pdf/`, `test/x.test.ts`), or undefined for other code spans and placeholders. */
function repoPath(token: string): string | undefined {
  if (/[<>*\s…]|\.\.\./.test(token)) return undefined;
  if (ROOT_FILES.has(token)) return token;
  return TOP.test(token) ? token.replace(/\/$/, '') : undefined;
}

const isHolder = (token: string) => (/^test\/.+\.test\.ts$/.test(token) || RULE.test(token)) && isReal(token);
const isReal = (token: string) => (RULE.test(token) ? ESLINT_CONFIG.includes(`'${token}'`) : fs.existsSync(path.join(ROOT, token)));

/** List items (with their continuation lines) and table body rows of the prose. */
export function statements(prose: readonly string[]): string[] {
  const out: string[] = [];
  let item: string | undefined;
  let tableRow = 0;
  const flush = () => {
    if (item !== undefined) out.push(item);
    item = undefined;
  };
  for (const line of prose) {
    if (line.startsWith('|')) {
      flush();
      tableRow++;
      if (tableRow > 1 && !/^\|[\s|:-]+\|$/.test(line)) out.push(line);
      continue;
    }
    tableRow = 0;
    if (/^\s*- /.test(line)) {
      flush();
      item = line;
    } else if (item !== undefined && /^\s+\S/.test(line)) item += ' ' + line.trim();
    else flush();
  }
  flush();
  return out;
}

const { prose, code } = split(MAP);
const proseTokens = backticked(prose.join('\n'));

describe('ARCHITECTURE.md', () => {
  it(`is short: at most ${MAX_LINES} lines`, () => {
    expect(MAP.split('\n').length).toBeLessThanOrEqual(MAX_LINES);
  });

  it('names only paths that exist, in the text and in the request-flow diagrams', () => {
    const named = proseTokens.map(repoPath).filter((p): p is string => p !== undefined);
    const drawn = code.flatMap((l) => [...l.matchAll(/\b(?:src|test|packages)\/[\w./-]+\.(?:ts|js|mjs)\b/g)].map((m) => m[0]));
    expect(named.length).toBeGreaterThan(100);
    expect(drawn.length).toBeGreaterThan(20);
    expect([...new Set([...named, ...drawn])].filter((p) => !fs.existsSync(path.join(ROOT, p)))).toEqual([]);
  });

  it('names only lint rules and tables that eslint.config.js configures', () => {
    const rules = proseTokens.filter((t) => RULE.test(t));
    expect(rules).toContain('folio/layers');
    expect(rules.filter((r) => !isReal(r))).toEqual([]);
    expect(proseTokens.filter((t) => TABLE.test(t)).filter((t) => !ESLINT_CONFIG.includes(`const ${t} =`))).toEqual([]);
  });

  it('puts every folder and file of src/ on the map', () => {
    const tokens = new Set(proseTokens.map((t) => t.replace(/\/$/, '')));
    const entries = fs.readdirSync(path.join(ROOT, 'src')).map((e) => `src/${e}`);
    expect(entries.filter((e) => !tokens.has(e))).toEqual([]);
  });

  it('has every list item and table row name what holds it: a test file or a lint rule', () => {
    const all = statements(prose);
    expect(all.length).toBeGreaterThan(40);
    expect(all.filter((s) => !backticked(s).some(isHolder)).map((s) => s.slice(0, 120))).toEqual([]);
  });

  it('would see a statement without a holder, and a holder that does not exist', () => {
    const sample = [
      '- held: `test/lint/boundaries.test.ts`.',
      '- not held,',
      '  even on two lines.',
      '| a | b |',
      '|---|---|',
      '| row | `folio/layers` |',
      '| row | `test/gone.test.ts` |',
    ];
    const found = statements(sample);
    expect(found).toHaveLength(4);
    expect(found.filter((s) => !backticked(s).some(isHolder))).toEqual(['- not held, even on two lines.', '| row | `test/gone.test.ts` |']);
    expect(repoPath('src/<capability>/module.ts')).toBeUndefined();
  });
});
