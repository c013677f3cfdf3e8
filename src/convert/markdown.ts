/**
 * Markdown → HTML with markdown-it (CommonMark-compliant) plus the GFM extensions: tables, strikethrough
 * (built in), autolinks (linkify), task lists and footnotes (plugins). Raw HTML is passed through, so it goes
 * through the same HTML → DOCX engine as an HTML upload.
 */
import MarkdownIt from 'markdown-it';
import footnote from 'markdown-it-footnote';
import taskLists from 'markdown-it-task-lists';
import type { Document } from 'domhandler';
import { markdownDom } from './markdown-dom.js';
import { fastTokens } from './markdown-tokens.js';
import { linearTaskLists, TASK_CHECKBOX } from './markdown-tasklists.js';
import { mathDollars } from './markdown-math.js';
export { TASK_CHECKED, TASK_UNCHECKED } from './markdown-tasklists.js';

const MAX_QUOTE_DEPTH = 32;
const DEEP_QUOTES = /^(?:[ \t]{0,3}>){33,}/gm;

/** The GFM extensions (cmark-gfm's names). All are on unless a caller asks for fewer. */
export type GfmExtension = 'table' | 'strikethrough' | 'autolink' | 'tagfilter' | 'footnotes' | 'tasklist' | 'math';
/** The GFM extensions, and `math`: TeX between dollars (markdown-math.ts), as GitHub and pandoc read it. */
export const GFM_EXTENSIONS: readonly GfmExtension[] = ['table', 'strikethrough', 'autolink', 'tagfilter', 'footnotes', 'tasklist', 'math'];

const renderers = new Map<string, MarkdownItInstance>();

function markdownRenderer(extensions: readonly GfmExtension[]): MarkdownItInstance {
  const set = new Set(extensions);
  const key = GFM_EXTENSIONS.filter((e) => set.has(e)).join(',');
  let md = renderers.get(key);
  if (!md) renderers.set(key, (md = createRenderer(set)));
  return md;
}

function createRenderer(ext: ReadonlySet<GfmExtension>): MarkdownItInstance {
  // The strict CommonMark preset, plus the GFM extensions asked for. maxNesting bounds block/inline recursion:
  // 100,000-deep quotes or lists are flattened, never overflow.
  const md = new MarkdownIt('commonmark', { html: true, linkify: ext.has('autolink'), typographer: false, maxNesting: 64 });
  fastTokens(md);
  noteHtmlRules(md);
  if (ext.has('table')) md.enable('table');
  if (ext.has('strikethrough')) {
    md.enable('strikethrough');
    gfmStrikethrough(md);
  }
  if (ext.has('autolink')) {
    md.enable(['linkify']);
    md.linkify.set({ fuzzyLink: true, fuzzyEmail: true });
    // markdown-it first tests a whole paragraph's source, where linkify-it sees no link in "~~www.a.com~~"
    // ("www." right after a tilde). Test with tildes as spaces as well; each text token is then matched
    // exactly (a token with no match stays text).
    const linkify = md.linkify;
    const test = linkify.test.bind(linkify);
    const match = linkify.match.bind(linkify);
    // A link GFM keeps starts with www. or scheme:// or is an e-mail address: text with none of those skips
    // linkify-it's fuzzy scan (a costly regex over every paragraph and text token). Links it would find there
    // are bare domains, which the scope rule below unwraps anyway.
    linkify.test = (text: string) => MAY_HOLD_GFM_LINK.test(text) && (test(text) || (text.includes('~') && test(text.replace(/~/g, ' '))));
    linkify.match = (text: string) => {
      const links = match(text);
      if (links?.length) linkified = true;
      return links ?? ([] as unknown as ReturnType<typeof match>);
    };
    // Set when linkify (core or inline rule) may have made a link: without one, the scope rule below has
    // nothing to unwrap, and its pass over every inline token is skipped. Reset by that rule (one parse at a
    // time: parsing is synchronous; a parse that throws leaves it set, which only costs one pass).
    let linkified = false;
    keepDelimitersOutOfInlineLinks(md, () => (linkified = true));
    // GFM's extended autolinks are scheme://, www. and e-mail addresses; linkify-it's fuzzy mode also links
    // bare domains ("example.com"), which GFM leaves as text: unwrap those.
    md.core.ruler.after('linkify', 'gfm-autolink-scope', (state) => {
      if (!linkified) return;
      linkified = false;
      for (const block of state.tokens) {
        if (block.type !== 'inline' || !block.children) continue;
        const kids = block.children;
        for (let i = 0; i < kids.length; i++) {
          const t = kids[i]!;
          if (t.type !== 'link_open' || t.markup !== 'linkify') continue;
          const text = kids[i + 1]?.type === 'text' ? kids[i + 1]!.content : '';
          const email = !/^(www\.|[a-z][a-z0-9+.-]*:\/\/|mailto:)/i.test(text) && text.includes('@');
          if (/^(www\.|[a-z][a-z0-9+.-]*:\/\/|mailto:)/i.test(text) || (email && GFM_EMAIL.test(text))) {
            gfmAutolinkEnd(md, state as never, kids as never, i, email);
            continue;
          }
          let j = i + 1;
          while (j < kids.length && kids[j]!.type !== 'link_close') j++;
          if (j < kids.length) kids.splice(j, 1);
          kids.splice(i, 1);
          i--;
        }
      }
    });
  }
  if (ext.has('tagfilter')) tagFilter(md);
  if (ext.has('math')) mathDollars(md);
  if (ext.has('footnotes')) {
    md.use(footnote);
    linearFootnoteTail(md);
  }
  if (ext.has('tasklist')) {
    md.use(taskLists, { enabled: false });
    linearTaskLists(md);
  }
  noteRawHtml(md);
  compactBlockNewlines(md);
  return md;
}

/**
 * GFM strikethrough: a run of one or two tildes opens or closes, a closer matches only an opener of the same
 * length, and longer runs are text (markdown-it's own rule takes pairs of tildes only). Each run is one
 * delimiter whose marker encodes its length, so the shared delimiter balancing pairs equal runs only.
 */
const TILDE = 0x7e;
const TILDE_1 = -0x7e;

function gfmStrikethrough(md: MarkdownItInstance): void {
  md.inline.ruler.at('strikethrough', (state, silent) => {
    if (silent || state.src.charCodeAt(state.pos) !== TILDE) return false;
    const scanned = state.scanDelims(state.pos, true);
    const token = state.push('text', '', 0);
    token.content = '~'.repeat(scanned.length);
    if (scanned.length <= 2) {
      state.delimiters.push({
        marker: scanned.length === 1 ? TILDE_1 : TILDE,
        length: 0,
        token: state.tokens.length - 1,
        end: -1,
        open: scanned.can_open,
        close: scanned.can_close,
      });
    }
    state.pos += scanned.length;
    return true;
  });
  type Delimiter = { marker: number; token: number; end: number };
  const pair = (
    state: { tokens: Array<{ type: string; tag: string; nesting: number; markup: string; content: string }> },
    delimiters: Delimiter[],
  ) => {
    for (const d of delimiters) {
      if ((d.marker !== TILDE && d.marker !== TILDE_1) || d.end === -1) continue;
      const open = state.tokens[d.token]!;
      const close = state.tokens[delimiters[d.end]!.token]!;
      const markup = open.content;
      Object.assign(open, { type: 's_open', tag: 's', nesting: 1, markup, content: '' });
      Object.assign(close, { type: 's_close', tag: 's', nesting: -1, markup, content: '' });
    }
  };
  md.inline.ruler2.at('strikethrough', (state) => {
    pair(state as never, state.delimiters as unknown as Delimiter[]);
    for (const meta of state.tokens_meta) if (meta?.delimiters) pair(state as never, meta.delimiters as unknown as Delimiter[]);
    return true;
  });
}

/**
 * GFM's end-of-autolink rule, applied to linkify-it's matches: a URL runs to the next white space or <, then
 * loses trailing ?, !, ., ,, :, *, _, ~ and quotes, a trailing ) without its (, and a trailing entity-like
 * "&hl;" (or a lone ;). Text cut off moves after the link; text taken from after the link moves in.
 */
function gfmAutolinkEnd(
  md: MarkdownItInstance,
  state: { Token: new (type: string, tag: string, nesting: number) => LinkToken },
  kids: LinkToken[],
  i: number,
  email: boolean,
): void {
  const open = kids[i]!;
  const textTok = kids[i + 1];
  if (!textTok || textTok.type !== 'text' || kids[i + 2]?.type !== 'link_close') return;
  const original = textTok.content;
  const next = kids[i + 3];
  let full = original;
  if (!email && next?.type === 'text') full += /^[^\s<]*/.exec(next.content)![0];
  // One pass from the end with running counts: linear however long the run of trailing punctuation is.
  let opens = 0;
  let closes = 0;
  for (let k = 0; k < full.length; k++) {
    const c = full.charCodeAt(k);
    if (c === 0x28) opens++;
    else if (c === 0x29) closes++;
  }
  let end = full.length;
  for (;;) {
    const last = full[end - 1];
    if (last && '?!.,:*_~\'"'.includes(last)) end--;
    else if (last === ')' && opens < closes) {
      end--;
      closes--;
    } else if (last === ';') {
      end--;
      let k = end;
      while (k > 0 && /[a-z0-9]/i.test(full[k - 1]!)) k--;
      if (k < end && full[k - 1] === '&') end = k - 1;
    } else break;
  }
  const text = full.slice(0, end);
  if (text === original || !text) return;
  const scheme = /^[a-z][a-z0-9+.-]*:/i.test(text) ? '' : email ? 'mailto:' : 'http://';
  const href = md.normalizeLink(scheme + text);
  if (!md.validateLink(href)) return;
  open.attrSet('href', href);
  textTok.content = text;
  if (text.length > original.length) {
    next!.content = next!.content.slice(text.length - original.length);
  } else {
    const rest = new state.Token('text', '', 0);
    rest.content = original.slice(text.length);
    kids.splice(i + 3, 0, rest);
  }
}

/**
 * markdown-it's inline linkify rule consumes a scheme URL up to linkify-it's end, so "~~http://a.com~~" eats
 * the closing tildes (it gives back trailing * only). GFM never ends an autolink in ~ or _: give those back
 * to the inline parser, so they can close a strikethrough or emphasis.
 */
function keepDelimitersOutOfInlineLinks(md: MarkdownItInstance, onLink: () => void): void {
  const rules = (md.inline.ruler as unknown as { __rules__: Array<{ name: string; fn: InlineRule }> }).__rules__;
  const original = rules.find((r) => r.name === 'linkify')?.fn;
  if (!original) return;
  md.inline.ruler.at('linkify', (state, silent) => {
    const s = state as unknown as InlineState;
    if (!original(s, silent)) return false;
    if (silent) return true;
    onLink();
    const n = s.tokens.length;
    const open = s.tokens[n - 3];
    const text = s.tokens[n - 2];
    if (open?.type !== 'link_open' || text?.type !== 'text') return true;
    let end = text.content.length;
    while (end > 0 && (text.content[end - 1] === '~' || text.content[end - 1] === '_')) end--;
    const kept = text.content.slice(0, end);
    const cut = text.content.length - kept.length;
    const href = open.attrGet('href') ?? '';
    if (cut === 0 || !kept || !href.endsWith(text.content.slice(kept.length))) return true;
    text.content = kept;
    open.attrSet('href', href.slice(0, -cut));
    s.pos -= cut;
    return true;
  });
}

type InlineRule = (state: InlineState, silent: boolean) => boolean;
interface InlineState {
  pos: number;
  tokens: LinkToken[];
}

// What every autolink GFM keeps contains: www., scheme:// or the @ of an e-mail address.
const MAY_HOLD_GFM_LINK = /www\.|:\/\/|@/i;

// GFM's extended e-mail autolink: local part of alphanumerics and .-_+, a domain of alphanumerics and -_
// with at least one dot, not ending in - or _.
const GFM_EMAIL = /^[a-z0-9.\-_+]+@[a-z0-9\-_]+(?:\.[a-z0-9\-_]+)+$/i;

interface LinkToken {
  type: string;
  content: string;
  attrGet(name: string): string | null;
  attrSet(name: string, value: string): void;
}

// GFM's tag filter: these tags are shown as text, never interpreted, even in raw HTML.
const FILTERED_TAG = /<(?=\/?(?:title|textarea|style|xmp|iframe|noembed|noframes|script|plaintext)(?=[\s/>]|$))/gi;

function tagFilter(md: MarkdownItInstance): void {
  md.core.ruler.push('gfm-tagfilter', (state) => {
    if (!(state.env as RenderEnv).folioHtml) return;
    for (const t of state.tokens) {
      if (t.type === 'html_block') t.content = t.content.replace(FILTERED_TAG, '&lt;');
      else if (t.type === 'inline' && t.children) {
        for (const c of t.children) if (c.type === 'html_inline') c.content = c.content.replace(FILTERED_TAG, '&lt;');
      }
    }
  });
}

export interface MarkdownOptions {
  /** GFM extensions to enable (default: all). An empty list is strict CommonMark. */
  extensions?: readonly GfmExtension[];
}

export function markdownToHtml(markdown: string, options: MarkdownOptions = {}): string {
  return renderMarkdown(markdown, options).html;
}

/** For the DOCX path only: leave out the newlines markdown-it writes between block tags (see compactBlocks). */
export interface RenderOptions extends MarkdownOptions {
  compact?: boolean;
}

export interface RenderedMarkdown {
  html: string;
  /**
   * Whether the HTML holds raw HTML from the source. Without it, element nesting is markdown-it's own,
   * bounded by maxNesting, and the HTML stage can skip its depth guard.
   */
  rawHtml: boolean;
}

export function renderMarkdown(markdown: string, options: RenderOptions = {}): RenderedMarkdown {
  if (markdown.charCodeAt(0) === 0xfeff) markdown = markdown.slice(1);
  // Past maxNesting markdown-it drops content; cap block-quote markers per line so deep quotes keep their words.
  markdown = markdown.replace(DEEP_QUOTES, () => '>'.repeat(MAX_QUOTE_DEPTH) + ' ');
  const env: RenderEnv = {};
  const md = markdownRenderer(options.extensions ?? GFM_EXTENSIONS);
  const tokens = md.parse(markdown, env);
  const rawHtml = env.folioRawHtml !== false;
  compactBlocks = options.compact === true && !rawHtml;
  try {
    return { html: md.renderer.render(tokens, md.options, env), rawHtml };
  } finally {
    compactBlocks = false;
  }
}

/** markdown-it's tokens for a document, with what the DOCX writers need to read them. */
export interface MarkdownParse {
  md: MarkdownItInstance;
  tokens: MdToken[];
  env: RenderEnv;
  /** Whether raw HTML (other than the task-list checkboxes) is left in the token stream. */
  rawHtml: boolean;
  /** The text parsed (after the BOM and quote capping), which token maps index by line. */
  source: string;
}

/** Parses Markdown for the DOCX path (BOM dropped, block quotes deeper than MAX_QUOTE_DEPTH capped). */
export function parseMarkdown(markdown: string, options: MarkdownOptions = {}): MarkdownParse {
  if (markdown.charCodeAt(0) === 0xfeff) markdown = markdown.slice(1);
  markdown = markdown.replace(DEEP_QUOTES, () => '>'.repeat(MAX_QUOTE_DEPTH) + ' ');
  const env: RenderEnv = {};
  const md = markdownRenderer(options.extensions ?? GFM_EXTENSIONS);
  const tokens = md.parse(markdown, env);
  return { md, tokens, env, rawHtml: env.folioRawHtml !== false, source: markdown };
}

/**
 * Markdown for the DOM path of DOCX (markdown-docx.ts writes the common case without one): without raw
 * HTML, the DOM the HTML parser would build from the compact rendering (see compactBlocks) is built straight
 * from markdown-it's tokens, which saves writing a string several times the input's size and parsing it
 * back. Tokens rendered by a rule (images, fences, footnote references) are rendered by it and parsed on
 * their own; the footnote section's open/close tokens, whose HTML is unbalanced, are built from the same
 * parts the plugin writes. With raw HTML, or a token type this does not know, the (compact) HTML instead.
 */
export function markdownForDocx(markdown: string | MarkdownParse, options: MarkdownOptions = {}): { dom: Document } | RenderedMarkdown {
  const { md, tokens, env, rawHtml } = typeof markdown === 'string' ? parseMarkdown(markdown, options) : markdown;
  compactBlocks = !rawHtml;
  try {
    if (!rawHtml) {
      const dom = markdownDom(md, tokens, env);
      if (dom) return { dom };
    }
    return { html: md.renderer.render(tokens, md.options, env), rawHtml };
  } finally {
    compactBlocks = false;
  }
}

export type MdToken = ReturnType<MarkdownItInstance['parse']>[number];

/**
 * While set (during one synchronous render), block tags are written without the newlines markdown-it puts
 * around them. Those newlines only become white-space text nodes between blocks, which the HTML → DOCX walk
 * ignores (or trims at the end of a paragraph, for the one before a nested list): without them the HTML
 * parser builds a third fewer nodes. Only for output without raw HTML, where no white-space rule can apply,
 * and never for markdownToHtml, whose output stays markdown-it's.
 */
let compactBlocks = false;

function compactBlockNewlines(md: MarkdownItInstance): void {
  const renderer = md.renderer;
  const renderToken = renderer.renderToken.bind(renderer);
  renderer.renderToken = (tokens, idx, options) => {
    let out = renderToken(tokens, idx, options);
    if (!compactBlocks || !tokens[idx]!.block) return out;
    if (out.charCodeAt(0) === 0x0a) out = out.slice(1);
    if (out.charCodeAt(out.length - 1) === 0x0a) out = out.slice(0, -1);
    return out;
  };
  for (const name of ['fence', 'code_block'] as const) {
    const rule = renderer.rules[name];
    if (!rule) continue;
    renderer.rules[name] = (tokens, idx, options, env, self) => {
      const out = rule(tokens, idx, options, env, self);
      return compactBlocks && out.endsWith('</pre>\n') ? out.slice(0, -1) : out;
    };
  }
}

export interface RenderEnv {
  folioRawHtml?: boolean;
  /** Set when markdown-it's raw HTML rules matched (see noteHtmlRules). */
  folioHtml?: boolean;
  [key: string | symbol]: unknown; // markdown-it plugins keep their state here (footnotes, references)
}

/**
 * Raw HTML tokens come only from markdown-it's html_block and html_inline rules (the task-list checkboxes,
 * made by a core rule, are neither filtered nor counted as raw HTML). Noting in the env when either rule
 * matched lets the tag filter and folio-raw-html skip their passes over every token when the document has
 * none: each pass over the ~200,000 tokens of the 1 MB benchmark cost 10–15 ms.
 */
function noteHtmlRules(md: MarkdownItInstance): void {
  type Rule = (state: { env: RenderEnv }, ...rest: unknown[]) => boolean;
  for (const [ruler, name] of [
    [md.block.ruler, 'html_block'],
    [md.inline.ruler, 'html_inline'],
  ] as const) {
    const rule = (ruler as unknown as { __rules__: Array<{ name: string; fn: Rule; alt: string[] }> }).__rules__.find((r) => r.name === name);
    if (!rule) continue;
    const original = rule.fn;
    // `at` resets the rule's alt chains unless given: html_block interrupts paragraphs, quotes, references.
    (ruler as unknown as { at(name: string, fn: Rule, options: { alt: string[] }): void }).at(
      name,
      (state, ...rest) => {
        if (!original(state, ...rest)) return false;
        state.env.folioHtml = true;
        return true;
      },
      { alt: rule.alt.slice() },
    );
  }
}

/** The last core rule: notes in the render env whether any raw HTML token is left in the stream. */
function noteRawHtml(md: MarkdownItInstance): void {
  md.core.ruler.push('folio-raw-html', (state) => {
    let raw = false;
    if (!(state.env as RenderEnv).folioHtml) {
      (state.env as RenderEnv).folioRawHtml = raw;
      return;
    }
    for (const t of state.tokens) {
      if (t.type === 'html_block') raw = true;
      else if (t.type === 'inline' && t.children) {
        for (const c of t.children) if (c.type === 'html_inline' && !c.content.startsWith(TASK_CHECKBOX)) raw = true;
      }
      if (raw) break;
    }
    (state.env as RenderEnv).folioRawHtml = raw;
  });
}

/**
 * markdown-it-footnote's tail rule appends each note with `state.tokens = state.tokens.concat(note)`, which is
 * quadratic (a 1 MB file with 3,000 notes took 20 s). Its first step is `state.tokens.filter(...)`: give the
 * token array a `filter` whose result carries, for the length of the rule, an own `concat` that appends in
 * place; both own properties are deleted afterwards, so the stream is a plain array again. (Copying the whole
 * stream into an Array subclass up front cost more than the tail itself, and copying it back out of one was a
 * pass over every token.)
 */
function appendInPlace<T>(this: T[], ...items: Array<T | ConcatArray<T>>): T[] {
  for (const item of items) {
    if (Array.isArray(item)) for (const x of item as T[]) this.push(x);
    else this.push(item as T);
  }
  return this;
}

function filterIntoAppendArray<T>(this: T[], keep: (value: T, index: number, array: T[]) => unknown): T[] {
  const out: T[] = [];
  for (let i = 0; i < this.length; i++) if (keep(this[i]!, i, this)) out.push(this[i]!);
  (out as { concat: unknown }).concat = appendInPlace;
  return out;
}

function linearFootnoteTail(md: MarkdownItInstance): void {
  const rules = (md.core.ruler as unknown as { __rules__: Array<{ name: string; fn: (state: CoreState) => void }> }).__rules__;
  const rule = rules.find((r) => r.name === 'footnote_tail');
  if (!rule) return;
  const original = rule.fn;
  md.core.ruler.at('footnote_tail', (state) => {
    const s = state as unknown as CoreState;
    const tokens = s.tokens as unknown[] & { filter: unknown };
    tokens.filter = filterIntoAppendArray;
    try {
      original(s);
    } finally {
      delete (tokens as { filter?: unknown }).filter;
      if (Object.hasOwn(s.tokens, 'concat')) delete (s.tokens as { concat?: unknown }).concat;
    }
  });
}

export type MarkdownItInstance = InstanceType<typeof MarkdownIt>;
interface CoreState {
  tokens: unknown[];
}
