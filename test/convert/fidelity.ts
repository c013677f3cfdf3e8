/**
 * A structure scorer for DOCX → HTML/Markdown exports (issue 27), the same for every converter (Folio, pandoc's
 * reader, mammoth) and for expected outputs written as facts:
 *
 * - structure: a multiset of keys, one per thing a reader of the output sees: `h<level>` per heading, `p` per
 *   paragraph with text outside lists, tables and notes, `li:<depth>:<ol|ul>` per list item, `cell` per table
 *   cell, `quote` per block quote, `code` per code block, `strong:<word>` / `em:<word>` / `s:<word>` /
 *   `sup:<word>` / `sub:<word>` per word so marked, `a:<target>` per link (`a:#` for every internal one),
 *   `fn` per note reference, `img` per picture, `math` per equation;
 * - text: the multiset of words (NFKC, lower case, runs of letters, digits and marks), notes included; in
 *   MathML, each letter and digit is a word of its own.
 *
 * Each side's F1 is 2·|A∩B| / (|A| + |B|) over the multisets. A reference can state only some families of keys
 * (`families`): the output is then scored on those families only, so a reference that says nothing about
 * paragraphs does not count an output's paragraphs as noise.
 *
 * Facts files keep expected outputs as such keys and words (`keys`: "h1 p*3 li:1:ul*2 …", `text`: the words),
 * never as copies of the documents they were derived from.
 */
import MarkdownIt from 'markdown-it';
import footnote from 'markdown-it-footnote';
import taskLists from 'markdown-it-task-lists';
import { parseDocument } from 'htmlparser2';
import { isTag, isText, type AnyNode, type Element } from 'domhandler';

export type Bag = Map<string, number>;

export interface Facts {
  keys: Bag;
  words: Bag;
  /** Key families the facts state (undefined: all). */
  families?: Set<string>;
}

export const FAMILIES = ['h', 'p', 'li', 'cell', 'quote', 'code', 'strong', 'em', 's', 'sup', 'sub', 'a', 'fn', 'img', 'math'] as const;

export const familyOf = (key: string) => /^[a-z]+/.exec(key)![0];

export function words(text: string): string[] {
  return (
    text
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}\p{M}]+/gu)
      // A lone mark (the variation selector of a "↩︎" back link) is no word.
      ?.filter((w) => /[\p{L}\p{N}]/u.test(w)) ?? []
  );
}

const add = (bag: Bag, key: string, n = 1) => bag.set(key, (bag.get(key) ?? 0) + n);

/** A link target as compared: internal targets are one key, external ones without case, trailing slash or fragment-less noise. */
export function targetKey(href: string): string {
  const h = href.trim();
  if (h.startsWith('#') || h === '') return '#';
  return h
    .toLowerCase()
    .replace(/\/+$/, '')
    .replace(/^mailto:/, 'mailto:');
}

const SKIP = new Set(['script', 'style', 'head', 'template', 'noscript', 'annotation', 'annotation-xml']);
const NOTES = /^(doc-)?(foot|end)notes?(-list|-item|-end-of-document|-section)?$|^footnotes$/i;
const tokens = (e: Element) => [e.attribs.class ?? '', e.attribs.role ?? '', e.attribs.id ?? ''].join(' ').split(/\s+/);

function closest(n: AnyNode | null, test: (e: Element) => boolean): Element | undefined {
  for (let p = n; p; p = p.parent) if (isTag(p) && test(p)) return p;
  return undefined;
}

function text(n: AnyNode): string {
  if (isText(n)) return n.data;
  if (!isTag(n)) return 'children' in n ? (n.children as AnyNode[]).map(text).join('') : '';
  if (SKIP.has(n.name)) return '';
  // An equation's words are its letters and digits one by one: how a converter splits math into tokens (MathML
  // elements, runs of OMML) says nothing about what it kept.
  if (n.name === 'math') return ` ${mathChars(n.children.map(text).join(''))} `;
  const inner = n.children.map(text).join('');
  return /^(p|div|li|td|th|h[1-6]|tr|br|pre|blockquote|section|table|ul|ol|dd|dt|mtd|mtr)$/.test(n.name) ? ` ${inner} ` : inner;
}

/** The letters and digits of math text, space-separated. */
export const mathChars = (s: string) => [...s.normalize('NFKC')].filter((c) => /[\p{L}\p{N}]/u.test(c)).join(' ');

const MARKS: Array<[string, (e: Element) => boolean]> = [
  ['strong', (e) => e.name === 'strong' || e.name === 'b' || /font-weight\s*:\s*(bold|[6-9]00)/i.test(e.attribs.style ?? '')],
  ['em', (e) => e.name === 'em' || e.name === 'i' || /font-style\s*:\s*italic/i.test(e.attribs.style ?? '')],
  ['s', (e) => ['s', 'del', 'strike'].includes(e.name) || /text-decoration[^;]*line-through/i.test(e.attribs.style ?? '')],
  // A note reference's superscript (inside or around its link) is the note, not superscript text.
  [
    'sup',
    (e) =>
      e.name === 'sup' &&
      !tokens(e).some((t) => /footnote|noteref/.test(t)) &&
      !(e.children.length === 1 && isTag(e.children[0]!) && e.children[0].name === 'a') &&
      !closest(e.parent, (a) => a.name === 'a' && tokens(a).some((t) => /footnote|noteref/.test(t))),
  ],
  ['sub', (e) => e.name === 'sub'],
];

/** The facts of an HTML document or fragment (any converter's). */
export function htmlFacts(html: string): Facts {
  const doc = parseDocument(html, { lowerCaseTags: true, lowerCaseAttributeNames: true });
  const keys: Bag = new Map();
  const ids = new Map<string, Element>();
  const all: Element[] = [];
  const collect = (n: AnyNode) => {
    if (isTag(n)) {
      if (SKIP.has(n.name)) return;
      all.push(n);
      if (n.attribs.id) ids.set(n.attribs.id, n);
    }
    if ('children' in n) for (const c of n.children as AnyNode[]) collect(c);
  };
  collect(doc);
  const inNotes = (n: AnyNode) => !!closest(n, (e) => tokens(e).some((t) => NOTES.test(t)));
  const noteTargets = new Set<Element>();
  for (const e of all) {
    const name = e.name;
    if (/^h[1-6]$/.test(name)) {
      if (words(text(e)).length) add(keys, name);
    } else if (name === 'p') {
      if (!words(text(e)).length || inNotes(e) || closest(e.parent, (x) => ['li', 'td', 'th'].includes(x.name))) continue;
      add(keys, 'p');
    } else if (name === 'li') {
      if (inNotes(e)) continue;
      const list = closest(e.parent, (x) => x.name === 'ul' || x.name === 'ol');
      if (!list) continue;
      let depth = 0;
      for (let p: AnyNode | null = e.parent; p && !(isTag(p) && (p.name === 'td' || p.name === 'th')); p = p.parent) {
        if (isTag(p) && (p.name === 'ul' || p.name === 'ol')) depth++;
      }
      add(keys, `li:${depth}:${list.name}`);
    } else if (name === 'td' || name === 'th') add(keys, 'cell');
    else if (name === 'blockquote') add(keys, 'quote');
    else if (name === 'pre') add(keys, 'code');
    else if (name === 'img') add(keys, 'img');
    else if (name === 'math' || (name === 'span' && tokens(e).includes('math'))) add(keys, 'math');
    else if (name === 'a' && e.attribs.href !== undefined) {
      const href = e.attribs.href;
      const target = href.startsWith('#') ? ids.get(decodeURIComponent(href.slice(1))) : undefined;
      const marked = [...tokens(e), ...(e.parent && isTag(e.parent) && e.parent.name === 'sup' ? tokens(e.parent) : [])].some((t) =>
        /^(footnote-ref|doc-noteref|footnote-reference)$/.test(t),
      );
      if (!inNotes(e) && href.startsWith('#') && (marked || (target && inNotes(target)))) {
        add(keys, 'fn');
        if (target) noteTargets.add(target);
        continue;
      }
      // Back links from a note to its reference are not links of the document.
      if (inNotes(e) && (tokens(e).some((t) => /back/.test(t)) || (target && !inNotes(target)))) continue;
      if (words(text(e)).length || e.children.some((c) => isTag(c) && c.name === 'img')) add(keys, `a:${targetKey(href)}`);
    }
    if (closest(e, (x) => /^h[1-6]$/.test(x.name))) continue;
    for (const [kind, test] of MARKS) {
      // The outermost element of a kind only, so nested marks count their words once.
      if (test(e) && !closest(e.parent, test)) for (const w of words(text(e))) add(keys, `${kind}:${w}`);
    }
  }
  const wordBag: Bag = new Map();
  for (const w of words(text(doc))) add(wordBag, w);
  return { keys, words: wordBag };
}

const md = new MarkdownIt('commonmark', { html: true, linkify: true }).enable(['table', 'strikethrough', 'linkify']).use(footnote).use(taskLists);
md.linkify.set({ fuzzyLink: false, fuzzyEmail: false });
// `$…$` and `$$…$$` (pandoc's tex_math_dollars rules, enough to count equations): a span of class math.
md.inline.ruler.before('escape', 'fidelity_math', (state, silent) => {
  const src = state.src;
  const start = state.pos;
  if (src[start] !== '$' || (start > 0 && src[start - 1] === '\\')) return false;
  const display = src[start + 1] === '$';
  const open = display ? 2 : 1;
  if (/\s/.test(src[start + open] ?? ' ')) return false;
  let end = start + open;
  for (; end < src.length; end++) {
    if (src[end] === '\\') {
      end++;
      continue;
    }
    if (src[end] === '$' && !/\s/.test(src[end - 1]!) && (!display || src[end + 1] === '$')) break;
  }
  if (end >= src.length) return false;
  if (!silent) {
    const t = state.push('html_inline', '', 0);
    t.content = `<span class="math">${md.utils.escapeHtml(src.slice(start + open, end))}</span>`;
  }
  state.pos = end + open;
  return true;
});

/** The facts of Markdown (rendered by markdown-it with GFM tables, strikethrough, footnotes, task lists and `$` math). */
export function markdownFacts(markdown: string): Facts {
  return htmlFacts(md.render(markdown));
}

/** Facts as kept in a facts file: keys as "key*count …", words as text. */
export interface FactsRecord {
  keys: string;
  text: string;
  families?: string[];
}

export function factsFrom(record: FactsRecord): Facts {
  const keys: Bag = new Map();
  for (const k of record.keys.split(/\s+/).filter(Boolean)) {
    const m = /^(.*?)(?:\*(\d+))?$/.exec(k)!;
    add(keys, m[1]!, Number(m[2] ?? 1));
  }
  const wordBag: Bag = new Map();
  for (const w of words(record.text)) add(wordBag, w);
  return { keys, words: wordBag, families: record.families ? new Set(record.families) : undefined };
}

export function factsRecord(f: Facts): FactsRecord {
  const keys = [...f.keys].map(([k, n]) => (n > 1 ? `${k}*${n}` : k)).join(' ');
  const text = [...f.words].flatMap(([w, n]) => Array(n).fill(w)).join(' ');
  return { keys, text, ...(f.families ? { families: [...f.families] } : {}) };
}

const size = (b: Bag) => [...b.values()].reduce((a, n) => a + n, 0);
function common(a: Bag, b: Bag): number {
  let n = 0;
  for (const [k, c] of a) n += Math.min(c, b.get(k) ?? 0);
  return n;
}

export interface Counts {
  ref: number;
  out: number;
  matched: number;
}

export const f1 = (c: Counts) => (c.ref + c.out === 0 ? 1 : (2 * c.matched) / (c.ref + c.out));

/** Structure and text counts of an output against a reference (on the reference's families). */
export function compare(ref: Facts, out: Facts): { structure: Counts; text: Counts } {
  const keep = (b: Bag) => (ref.families ? new Map([...b].filter(([k]) => ref.families!.has(familyOf(k)))) : b);
  const rk = keep(ref.keys);
  const ok = keep(out.keys);
  return {
    structure: { ref: size(rk), out: size(ok), matched: common(rk, ok) },
    text: { ref: size(ref.words), out: size(out.words), matched: common(ref.words, out.words) },
  };
}

export function addCounts(into: Counts, c: Counts): void {
  into.ref += c.ref;
  into.out += c.out;
  into.matched += c.matched;
}
