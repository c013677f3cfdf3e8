/**
 * DOCX → Markdown/HTML fidelity: the measures of an export and its score against the DOCX's own reference
 * (docx-export-reference.ts), for Folio's exporter and for pandoc on the same files. Shared by
 * test/convert/docx-export-corpus.test.ts and scripts/docx-export-vs-pandoc.ts.
 *
 * Both Markdown outputs go through one markdown-it (CommonMark + GFM tables, strikethrough, autolinks, task
 * lists, footnotes; raw HTML passed through, since pandoc's gfm writer falls back to HTML tables) into HTML,
 * and every HTML is measured by one DOM walk (htmlparser2), so raw HTML in a Markdown file counts the same as
 * its Markdown form. Each kind is a multiset; "matched" is the size of its intersection with the reference.
 */
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import MarkdownIt from 'markdown-it';
import footnote from 'markdown-it-footnote';
import taskLists from 'markdown-it-task-lists';
import { parseDocument } from 'htmlparser2';
import { isTag, isText, type AnyNode, type Element } from 'domhandler';
import { CORPUS_DOCX } from '../helpers/corpus.js';
import { emptyExtract, linkKey, words, type Extract } from './docx-export-reference.js';

export { CORPUS_DOCX };
/** The corpus's three deliberately unreadable files (encrypted, truncated, fuzzed), as test/office skips them. */
export const BROKEN_CORPUS_FILES = ['poi--bug53475-password-is-pass.docx', 'poi--truncated62886.docx', 'poi--clusterfuzz-XWPF-5313273089884160.docx'];

export function corpusFiles(): string[] {
  return fs
    .readdirSync(CORPUS_DOCX)
    .filter((f) => /\.(docx|docm|dotx)$/i.test(f) && !BROKEN_CORPUS_FILES.includes(f))
    .sort();
}

const md = new MarkdownIt('commonmark', { html: true, linkify: true }).enable(['table', 'strikethrough', 'linkify']).use(footnote).use(taskLists);
md.linkify.set({ fuzzyLink: false, fuzzyEmail: false });

export function markdownToHtml(markdown: string): string {
  return md.render(markdown);
}

const SKIP = new Set(['script', 'style', 'head', 'template', 'noscript']);
/**
 * The element that holds the notes: markdown-it-footnote's section.footnotes / li.footnote-item, pandoc's
 * role="doc-endnotes" / "doc-endnote", or any class, role or id token naming foot- or endnotes (not a
 * reference to one: "footnote-ref" is in the text).
 */
const NOTE_CONTAINER = /^(doc-)?(foot|end)notes?(-list|-item|-end-of-document)?$/i;

const cls = (el: Element) => [el.attribs.class ?? '', el.attribs.role ?? '', el.attribs.id ?? ''].join(' ').split(/\s+/);
function closest(n: AnyNode, test: (e: Element) => boolean): Element | undefined {
  for (let p: AnyNode | null = n; p; p = p.parent) if (isTag(p) && test(p)) return p;
  return undefined;
}
function textContent(n: AnyNode): string {
  if (isText(n)) return n.data;
  if (isTag(n)) return SKIP.has(n.name) ? '' : n.children.map(textContent).join(n.name === 'br' ? ' ' : '');
  return 'children' in n ? (n.children as AnyNode[]).map(textContent).join('') : '';
}
const BLOCK = /^(p|div|li|td|th|h[1-6]|tr|br|pre|blockquote|section|table|ul|ol|dd|dt)$/;

/** The measures of one HTML document or fragment (see the header of docx-export-reference.ts for the kinds). */
export function measureHtml(html: string): Extract {
  const doc = parseDocument(html, { lowerCaseTags: true, lowerCaseAttributeNames: true });
  const out = emptyExtract();
  const all: Element[] = [];
  const ids = new Map<string, Element>();
  const texts: string[] = [];
  const walk = (n: AnyNode) => {
    if (isText(n)) texts.push(n.data);
    if (!isTag(n)) {
      if ('children' in n) for (const c of n.children as AnyNode[]) walk(c);
      return;
    }
    if (SKIP.has(n.name)) return;
    all.push(n);
    if (n.attribs.id) ids.set(n.attribs.id, n);
    if (BLOCK.test(n.name)) texts.push(' ');
    for (const c of n.children) walk(c);
    if (BLOCK.test(n.name)) texts.push(' ');
  };
  walk(doc);
  out.words = words(texts.join(''));

  const inNotes = (n: AnyNode) => !!closest(n, (e) => cls(e).some((t) => NOTE_CONTAINER.test(t)));
  const target = (a: Element) => {
    const h = a.attribs.href ?? '';
    return h.startsWith('#') ? ids.get(decodeURIComponent(h.slice(1))) : undefined;
  };
  const noteTargets = new Set<Element>();
  const isNoteRef = (a: Element) => {
    if (inNotes(a) || !(a.attribs.href ?? '').startsWith('#')) return false;
    // Marked as one (markdown-it-footnote's sup.footnote-ref, pandoc's a.footnote-ref / doc-noteref) or pointing
    // into the notes.
    const marked = [...cls(a), ...(a.parent && isTag(a.parent) && a.parent.name === 'sup' ? cls(a.parent) : [])].some((t) =>
      /^(footnote-ref|doc-noteref)$/.test(t),
    );
    const t = target(a);
    return marked || (!!t && inNotes(t));
  };
  const isBackRef = (a: Element) => {
    if (cls(a).some((t) => /^(doc-backlink|footnote-back(ref)?)$/.test(t))) return true;
    const t = target(a);
    return inNotes(a) && !!t && !inNotes(t);
  };
  const bold = (e: Element) => e.name === 'strong' || e.name === 'b' || /font-weight\s*:\s*(bold|[6-9]00)/i.test(e.attribs.style ?? '');
  const italic = (e: Element) => e.name === 'em' || e.name === 'i' || /font-style\s*:\s*italic/i.test(e.attribs.style ?? '');
  const struck = (e: Element) => ['s', 'del', 'strike'].includes(e.name) || /text-decoration[^;]*line-through/i.test(e.attribs.style ?? '');
  const inHeading = (e: Element) => !!closest(e, (x) => /^h[1-6]$/.test(x.name));

  for (const e of all) {
    if (/^h[1-6]$/.test(e.name)) {
      const ws = words(textContent(e));
      if (ws.length) out.headings.push(`${e.name}:${ws.join(' ')}`);
    } else if (e.name === 'a' && e.attribs.href !== undefined) {
      if (isNoteRef(e)) {
        out.notes++;
        const t = target(e);
        if (t) noteTargets.add(t);
      } else if (!isBackRef(e) && e.attribs.href.trim()) out.links.push(linkKey(e.attribs.href));
    } else if (e.name === 'table') {
      const rows = all.filter((r) => r.name === 'tr' && closest(r.parent!, (x) => x.name === 'table') === e);
      const cols = Math.max(
        0,
        ...rows.map((r) =>
          r.children.filter(isTag).reduce((w, c) => w + (c.name === 'td' || c.name === 'th' ? Number(c.attribs.colspan ?? 1) || 1 : 0), 0),
        ),
      );
      if (rows.length) out.tables.push(`${rows.length}x${cols}`);
    }
    for (const [test, into] of [
      [bold, out.strong],
      [italic, out.em],
      [struck, out.strike],
    ] as const) {
      // The outermost marked element only, so nested marks count their words once.
      if (test(e) && !closest(e.parent!, test) && !inHeading(e)) into.push(...words(textContent(e)));
    }
  }
  for (const e of all) {
    if (e.name !== 'li' || noteTargets.has(e) || cls(e).includes('footnote-item')) continue;
    const list = closest(e.parent!, (x) => x.name === 'ul' || x.name === 'ol');
    if (!list || !words(textContent(e)).length) continue;
    let depth = 0;
    for (let p: AnyNode | null = e.parent; p && !(isTag(p) && (p.name === 'td' || p.name === 'th')); p = p.parent) {
      if (isTag(p) && (p.name === 'ul' || p.name === 'ol')) depth++;
    }
    out.items.push(`${list.name === 'ol' ? 'o' : 'u'}${depth}`);
  }
  return out;
}

export function measureMarkdown(markdown: string): Extract {
  return measureHtml(markdownToHtml(markdown));
}

// ---- scoring ------------------------------------------------------------------------------------------------

export const KINDS = ['words', 'headings', 'items', 'tables', 'shapes', 'strong', 'em', 'strike', 'links', 'notes'] as const;
export type Kind = (typeof KINDS)[number];
export interface Match {
  ref: number;
  matched: number;
  out: number;
}
export type Score = Record<Kind, Match>;

function multiset(xs: readonly string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1);
  return m;
}
function intersect(ref: readonly string[], out: readonly string[]): number {
  const o = multiset(out);
  let n = 0;
  for (const [k, c] of multiset(ref)) n += Math.min(c, o.get(k) ?? 0);
  return n;
}
const count = (ref: number, out: number): Match => ({ ref, out, matched: Math.min(ref, out) });
const bag = (ref: readonly string[], out: readonly string[]): Match => ({ ref: ref.length, out: out.length, matched: intersect(ref, out) });

/** How much of the reference an export kept, kind by kind. Tables: "tables" counts them, "shapes" needs rows × columns. */
export function score(ref: Extract, out: Extract): Score {
  return {
    words: bag(ref.words, out.words),
    headings: bag(ref.headings, out.headings),
    items: bag(ref.items, out.items),
    tables: count(ref.tables.length, out.tables.length),
    shapes: bag(ref.tables, out.tables),
    strong: bag(ref.strong, out.strong),
    em: bag(ref.em, out.em),
    strike: bag(ref.strike, out.strike),
    links: bag(ref.links, out.links),
    notes: count(ref.notes, out.notes),
  };
}

export function emptyScore(): Score {
  return Object.fromEntries(KINDS.map((k) => [k, { ref: 0, matched: 0, out: 0 }])) as Score;
}
export function addScore(into: Score, s: Score): void {
  for (const k of KINDS) {
    into[k].ref += s[k].ref;
    into[k].matched += s[k].matched;
    into[k].out += s[k].out;
  }
}
/** matched / ref in percent (100 when the reference has none). */
export const pct = (m: Match): number => (m.ref ? (100 * m.matched) / m.ref : 100);

// ---- pandoc, the oracle ----------------------------------------------------------------------------------------

export const hasPandoc = spawnSync('pandoc', ['--version']).status === 0;
const pandocVersion = hasPandoc ? (spawnSync('pandoc', ['--version']).stdout.toString().split('\n')[0] ?? '') : '';
const CACHE = path.join(os.tmpdir(), 'folio-docx-export-pandoc-cache');

/** pandoc's args for each export: gfm is the Markdown dialect Folio writes. */
export const PANDOC_ARGS = { md: ['-f', 'docx', '-t', 'gfm', '--wrap=none'], html: ['-f', 'docx', '-t', 'html', '--wrap=none'] } as const;

/**
 * pandoc's export of a file. Outputs are cached in the temporary folder by pandoc's version, the arguments and
 * the input's SHA-256, so a second run does not pay pandoc's ~2 minutes over the corpus again; `undefined` when
 * pandoc fails on the file.
 */
export async function pandocExport(file: string, to: 'md' | 'html'): Promise<string | undefined> {
  if (!hasPandoc) return undefined;
  const bytes = fs.readFileSync(file);
  const key = crypto.createHash('sha256').update(pandocVersion).update(PANDOC_ARGS[to].join(' ')).update(bytes).digest('hex');
  const cached = path.join(CACHE, `${key}.${to}`);
  if (fs.existsSync(cached)) return fs.readFileSync(cached, 'utf8');
  const text = await new Promise<string | undefined>((resolve) => {
    const child = spawn('pandoc', [...PANDOC_ARGS[to], file], { stdio: ['ignore', 'pipe', 'ignore'], timeout: 300_000 });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => chunks.push(d));
    child.on('close', (code) => resolve(code === 0 ? Buffer.concat(chunks).toString('utf8') : undefined));
    child.on('error', () => resolve(undefined));
  });
  if (text !== undefined) {
    fs.mkdirSync(CACHE, { recursive: true });
    fs.writeFileSync(`${cached}.tmp${process.pid}`, text);
    fs.renameSync(`${cached}.tmp${process.pid}`, cached);
  }
  return text;
}

/** Runs `fn` over `items` with at most `limit` at a time (pandoc processes: the machine has two cores). */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!);
      }
    }),
  );
  return out;
}
