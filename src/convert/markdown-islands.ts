/**
 * Source islands: the Markdown of top-level blocks that a DOCX cannot carry, kept next to what Word shows
 * for them so DOCX → Markdown (src/docx/read, docx-markdown.ts) gives the Markdown back (issue 17's round
 * trip). What Word cannot say: raw HTML (Word shows it interpreted: `<b>x</b>` is bold x, a comment is
 * nothing, so the markup is gone); images (by URL they are never fetched, docs/api.md § Convert, and show their alt
 * text: the address and title would be lost); emphasis inside the same emphasis (`*a *b* c*` is one run of
 * italics); a loose list's blank lines (Word spaces paragraphs by their style, it has no tight or loose).
 *
 * Each island is written as usual, inside a block content control whose w:tag names the island and holds a
 * fingerprint of the content's text (model.ts SOURCE_TAG: `folio-md:<id>:<fingerprint>`, at most 64
 * characters, what Word accepts in a tag); the sources themselves go into one Custom XML Data part
 * (ISLANDS_NS, written by src/convert/package.ts with src/docx/wordml/custom-xml.ts) as element content, with
 * no length limit and newlines kept. The reader uses a source only while the text is unchanged, so an edit
 * in Word is never lost to a stale source. The direct writer (markdown-docx.ts)
 * wraps the blocks it writes for an island's tokens; for the HTML walk (documents with raw HTML) the
 * rendered HTML of an island is wrapped in a <folio-island> element carrying the source and a
 * per-conversion key (raw HTML in the input cannot forge one). Blocks whose raw HTML opens elements a later
 * block closes (`<div>` … `</div>` around Markdown), and HTML blocks in a row, are one island, so the wrapper
 * never changes how the HTML nests. Link reference definitions an island's links use are copied into its
 * source (a definition elsewhere in the document is not part of the island). Blocks with footnotes are
 * never islands (their notes are elsewhere).
 *
 * Bounds: one pass over the tokens; the sources together (the islands part, each source once) are at most
 * the input's size plus the copied definitions, found by one scan of each source for labels and copied at
 * most once each. A code block whose language name is too long for a tag (model.ts CODE_LANGUAGE_MAX) is an
 * island, so the name is kept in full.
 */
import { randomBytes } from 'node:crypto';
import { CODE_LANGUAGE_MAX, ISLANDS_NS, SOURCE_TAG, sourceFingerprint } from '../docx/read/model.js';
import { xmlText } from '../docx/wordml/escape.js';
import type { WordWriter } from '../docx/wordml/writer.js';
import { decodeXml } from '../docx/xml.js';
import type { MarkdownParse, MdToken } from './markdown.js';
import { TASK_CHECKBOX } from './markdown-tasklists.js';

export const ISLAND_ELEMENT = 'folio-island';

const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source', 'track', 'wbr']);
const TAG = /<(\/?)([a-zA-Z][a-zA-Z0-9-]*)[^>]*?(\/?)>/g;
const UNTERMINATED = 1e9;
/** A link label: brackets around at most 999 characters, none an unescaped bracket (CommonMark's rule). */
const LABEL = /\[((?:[^[\]\\]|\\[\s\S]){1,999}?)\]/g;

interface Range {
  start: number;
  end: number;
  island: boolean;
  footnote: boolean;
  balance: number;
}

/** Whether some top-level block needs an island (then the document goes through the HTML walk). */
export function hasIslands(parse: MarkdownParse): boolean {
  if (parse.rawHtml) return true;
  const r: Range = { start: 0, end: 0, island: false, footnote: false, balance: 0 };
  const containers: string[] = [];
  for (const t of parse.tokens) {
    inspect(t, r, containers);
    if (r.island) return true;
  }
  return false;
}

/** One island: top-level tokens [start, end), the Markdown kept, and whether it is left open (see islandHtml). */
export interface Island {
  start: number;
  end: number;
  source: string;
  open: boolean;
}

/** The document's islands, in order. */
export function islands(parse: MarkdownParse): Island[] {
  const { tokens, env } = parse;
  const lines = parse.source.replace(/\r\n?/g, '\n').replace(/\0/g, '\uFFFD').split('\n');
  const ranges: Range[] = [];
  for (let i = 0; i < tokens.length;) {
    let j = i + 1;
    if (tokens[i]!.nesting === 1) for (let d = 1; j < tokens.length && d > 0; j++) d += tokens[j]!.nesting;
    const r: Range = { start: i, end: j, island: false, footnote: false, balance: 0 };
    const containers: string[] = [];
    for (let k = i; k < j; k++) inspect(tokens[k]!, r, containers);
    ranges.push(r);
    i = j;
  }
  const refs = (env as { references?: Record<string, { href: string; title: string }> }).references;
  const copied = new Set<string>();
  const out: Island[] = [];
  for (let n = 0; n < ranges.length; n++) {
    const first = ranges[n]!;
    const map = tokens[first.start]!.map;
    if (!first.island || first.footnote || !map) continue;
    // Extend over the blocks an unclosed element spans, and over HTML blocks in a row (text between them is
    // one paragraph for the HTML walk: an island boundary would end it).
    let last = first;
    let balance = first.balance;
    const htmlBlock = (r: Range) => r.end === r.start + 1 && tokens[r.start]!.type === 'html_block';
    while (
      n + 1 < ranges.length &&
      (balance > 0 || (htmlBlock(last) && htmlBlock(ranges[n + 1]!))) &&
      !ranges[n + 1]!.footnote &&
      tokens[ranges[n + 1]!.start]!.map
    ) {
      last = ranges[++n]!;
      balance += last.balance;
    }
    let source = lines.slice(map[0], tokens[last.start]!.map![1]).join('\n');
    // The labels in brackets in the source, looked up as markdown-it does (linear in the source).
    const defs: string[] = [];
    if (refs && source.includes(']')) {
      LABEL.lastIndex = 0;
      for (let m; (m = LABEL.exec(source));) {
        const label = parse.md.utils.normalizeReference(m[1]!);
        const ref = Object.prototype.hasOwnProperty.call(refs, label) ? refs[label] : undefined;
        if (!ref || copied.has(label)) continue;
        copied.add(label);
        defs.push(`[${label}]: <${ref.href.replace(/[\\<>]/g, '\\$&')}>` + (ref.title ? ` "${ref.title.replace(/[\\"&]/g, '\\$&')}"` : ''));
      }
    }
    if (defs.length) source += '\n\n' + defs.join('\n');
    out.push({ start: first.start, end: last.end, source, open: balance > 0 });
  }
  return out;
}

/** The document's HTML with its islands wrapped, and the key the walk must see on them. */
export function islandHtml(parse: MarkdownParse): { html: string; key: string } {
  const { md, tokens, env } = parse;
  const key = randomBytes(9).toString('base64url');
  const render = (a: number, b: number) => (a < b ? md.renderer.render(tokens.slice(a, b), md.options, env) : '');
  let html = '';
  let pos = 0;
  for (const island of islands(parse)) {
    html += render(pos, island.start);
    // Still open at the end (an unterminated tag), it is left open as the HTML's elements are: a close tag
    // would end that tag for the parser, which the plain HTML does not.
    const close = island.open ? '' : `</${ISLAND_ELEMENT}>`;
    html += `<${ISLAND_ELEMENT} data-key="${key}" data-src="${escapeHtmlAttr(island.source)}">${render(island.start, island.end)}${close}`;
    pos = island.end;
  }
  return { html: html + render(pos, tokens.length), key };
}

/**
 * Wraps the blocks written since `from` (an island's) in the content control keeping its Markdown; content
 * that shows nothing (a comment) gets a hidden paragraph, which Word does not show.
 */
export function wrapIsland(w: WordWriter, from: number, source: string): void {
  const blocks = w.frame.blocks;
  const inner = blocks.splice(from).join('') || '<w:p><w:pPr><w:rPr><w:vanish/></w:rPr></w:pPr></w:p>';
  let text = '';
  for (const m of inner.matchAll(W_T)) text += decodeXml(m[1]!);
  let sources = SOURCES.get(w);
  if (!sources) SOURCES.set(w, (sources = []));
  sources.push(source);
  const tag = `${SOURCE_TAG}${sources.length}:${sourceFingerprint(text)}`;
  blocks.push(`<w:sdt><w:sdtPr><w:tag w:val="${tag}"/></w:sdtPr><w:sdtContent>${inner}</w:sdtContent></w:sdt>`);
  w.frame.lastIsTable = false;
}

/** The sources of the islands a writer wrapped, island n at index n - 1. */
const SOURCES = new WeakMap<WordWriter, string[]>();

export function islandSources(w: WordWriter): string[] {
  return SOURCES.get(w) ?? [];
}

/** The Custom XML Data part's root element holding the sources (ids as in the tags, 1-based). */
export function islandsXml(sources: string[]): string {
  let xml = `<islands xmlns="${ISLANDS_NS}">`;
  for (let i = 0; i < sources.length; i++) xml += `<island id="${i + 1}">${xmlText(sources[i]!)}</island>`;
  return xml + '</islands>';
}

/** A run's text in written WordprocessingML (what an island's fingerprint is taken of). */
const W_T = /<w:t(?:\s[^>]*)?>([^<]*)<\/w:t>/g;

function inspect(t: MdToken, r: Range, containers: string[]): void {
  if (t.type.startsWith('footnote')) r.footnote = true;
  // A loose list's blank lines have no Word form either (Word spaces paragraphs by their style).
  if (t.type === 'paragraph_open' && !t.hidden && containers[containers.length - 1] === 'list_item_open') r.island = true;
  if (t.nesting === 1) containers.push(t.type);
  else if (t.nesting === -1) containers.pop();
  // Emphasis inside the same emphasis (`*a *b* c*`) is one run of italics in Word.
  const open: Record<string, number> = {};
  // A language name too long for a content control's tag (model.ts CODE_LANGUAGE_MAX) is kept in the source.
  if (t.type === 'fence' && t.info && t.info.trim().split(/\s+/)[0]!.length > CODE_LANGUAGE_MAX) r.island = true;
  if (t.type === 'html_block') {
    r.island = true;
    r.balance += balanceOf(t.content);
  }
  for (const c of t.children ?? []) {
    if (c.nesting === 1 && (c.type === 'em_open' || c.type === 'strong_open' || c.type === 's_open')) {
      if (open[c.type]) r.island = true;
      open[c.type] = (open[c.type] ?? 0) + 1;
    } else if (c.nesting === -1 && (c.type === 'em_close' || c.type === 'strong_close' || c.type === 's_close')) {
      const o = c.type.replace('_close', '_open');
      open[o] = (open[o] ?? 1) - 1;
    }
    if (c.type === 'image') r.island = true;
    else if (c.type.startsWith('footnote')) r.footnote = true;
    else if (c.type === 'html_inline' && !c.content.startsWith(TASK_CHECKBOX)) {
      r.island = true;
      r.balance += balanceOf(c.content);
    }
  }
}

/** Elements opened minus elements closed by a piece of raw HTML. */
function balanceOf(html: string): number {
  // Ending inside a tag or comment (`<div id="x"` then a blank line), it takes in what follows: to the end.
  if (/<[a-zA-Z/!?][^>]*$/.test(html)) return UNTERMINATED;
  let n = 0;
  TAG.lastIndex = 0;
  for (let m; (m = TAG.exec(html));) {
    if (m[1]) n--;
    else if (!m[3] && !VOID.has(m[2]!.toLowerCase())) n++;
  }
  return n;
}

function escapeHtmlAttr(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
