/**
 * Document model (src/docx/read) → CommonMark + GFM. Round trips depend on two things done here:
 * - escaping: every character that could start Markdown syntax is escaped where it could (always for
 *   `\ * [ ] < ` ~ |`, at a line start for `# > + - =` and `1.`, `_` at word boundaries, `&` before an
 *   entity-like name), so text written is text read;
 * - emphasis placement: marks open and close around runs with white space moved outside, and a delimiter that
 *   would not be left-/right-flanking where it lands, or that a renderer could pair another way (a run that
 *   may both open and close, CommonMark's rule of 3), is written as its HTML tag instead (<strong>, <em>,
 *   <s>), which CommonMark renders the same.
 * Links, images and source islands pass markdown-safety.ts first: what is written is safe to render.
 * Tables with merged cells or block content become HTML tables (with a warning); images are data URIs
 * (png, jpeg, gif, webp as Markdown images; other kinds as <img>) or, without data, their alt text.
 */
import type { Block, DocModel, Inline, Marks, TableRow } from '../docx/read/model.js';
import { OutputBudget } from '../budget/index.js';
import { equationTex } from '../docx/math/tex-write.js';
import { codeInlines, htmlBlocks, htmlEscape, type HtmlContext } from './docx-html.js';
import { markdownDestination, markdownTitle, safeMarkdownModel } from './markdown-safety.js';
import { DocxImages, imageUses, MarkdownImages } from './docx-images.js';
import { ByteSink, type TextSink } from './output-sink.js';

interface Ctx {
  warnings: Set<string>;
  notes: Map<string, number>;
  /** Note numbers referenced as `[^n]` (not only from inside an HTML table, where Markdown is not read). */
  referenced: Set<number>;
  html: HtmlContext;
  /** Pictures: inline when shown once, by reference (data written once) when repeated (docx-images.ts). */
  images: MarkdownImages;
}

type MarkKind = 's' | 'b' | 'i' | 'u' | 'sup' | 'sub';
const ORDER: MarkKind[] = ['s', 'b', 'i', 'u', 'sup', 'sub'];
const MD_DELIM: Partial<Record<MarkKind, string>> = { s: '~~', b: '**', i: '*' };
const HTML_TAG: Record<MarkKind, string> = { s: 's', b: 'strong', i: 'em', u: 'u', sup: 'sup', sub: 'sub' };

interface Delim {
  open: boolean;
  kind: MarkKind;
  pair: number;
}
type Piece = string | Delim;

const markSet = (m: Marks): MarkKind[] => ORDER.filter((k) => m[k]);

/** Escapes text for a Markdown paragraph; `lineStart` also escapes what only matters at a line's start. */
export function escapeMarkdown(text: string, lineStart: boolean): string {
  // `_` delimits emphasis only at a word boundary (judged on the text, before other escapes shift it).
  const word = /[\p{L}\p{N}]/u;
  // `$` too: a pair of them would be read back as math (pandoc, GFM and Folio's reader take `$…$` as TeX).
  let s = text.replace(/[\\`*[\]<~|_$]/g, (c, i: number) =>
    c === '_' && word.test(text[i - 1] ?? ' ') && word.test(text[i + 1] ?? ' ') ? c : '\\' + c,
  );
  s = s.replace(/&(?=#?[A-Za-z0-9]+;)/g, '\\&');
  // `!` before a link would make it an image.
  s = s.replace(/!$/, '\\!');
  if (lineStart) {
    s = s.replace(/^[ \t]+/, '');
    s = s.replace(/^([#>+=-])/, '\\$1').replace(/^(\d{1,9})([.)])/, '$1\\$2');
  }
  return s;
}

function codeSpan(text: string): string {
  const runs = text.match(/`+/g) ?? [];
  const fence = '`'.repeat(Math.max(0, ...runs.map((r) => r.length)) + 1);
  const pad = /^`|`$/.test(text) || (/^ .*[^ ].* $/.test(text) && text.length > 2) ? ' ' : '';
  return fence + pad + text + pad + fence;
}

// Targets and titles as every renderer reads them back, unchanged (markdown-safety.ts; `&` is never decoded).
const linkDestination = markdownDestination;

/**
 * Alt text and titles may hold line breaks (Word's generated image descriptions have blank lines); a blank
 * line inside `![…](…)` or `"…"` ends the paragraph and breaks the syntax, so they are written on one line.
 */
const oneLine = (t: string) => t.replace(/[ \t]*[\r\n\u2028\u2029][\s]*/g, ' ');

const linkTitle = markdownTitle;

const MD_IMAGE = /^image\/(png|jpeg|gif|webp)$/;

class InlineWriter {
  private pieces: Piece[] = [];
  private open: MarkKind[] = [];
  private pending = '';
  private pairs = 0;
  private lineStart = true;

  constructor(
    private readonly ctx: Ctx,
    private readonly mode: 'para' | 'heading' | 'cell',
  ) {}

  private emit(s: string): void {
    if (!s) return;
    this.pieces.push(s);
    this.lineStart = false;
  }

  private flushPending(): void {
    if (this.pending) {
      this.pieces.push(this.pending);
      this.pending = '';
    }
  }

  /** How many of the following inlines keep each mark: the longest-lived opens outermost. */
  private persistence = new Map<MarkKind, number>();

  /** Closes marks not wanted (and those above them), then opens the wanted ones not open. */
  private setMarks(want: MarkKind[]): void {
    want = [...want].sort((a, b) => (this.persistence.get(b) ?? 0) - (this.persistence.get(a) ?? 0));
    const keep = this.open.findIndex((k) => !want.includes(k));
    if (keep >= 0) {
      for (let i = this.open.length - 1; i >= keep; i--) this.pieces.push({ open: false, kind: this.open[i]!, pair: -1 });
      this.open.length = keep;
    }
    this.flushPending();
    for (const k of want) {
      if (!this.open.includes(k)) {
        this.pieces.push({ open: true, kind: k, pair: -1 });
        this.open.push(k);
      }
    }
  }

  write(inlines: Inline[], inherited: MarkKind[] = []): void {
    const marksOf = inlines.map((i) => (i.t === 'text' ? markSet(i.m) : i.t === 'link' ? commonMarks(i.children) : undefined));
    // runs[n][k]: how many inlines from n on keep mark k (computed backwards: linear in the paragraph).
    const runs: Array<Map<MarkKind, number>> = new Array(inlines.length);
    for (let n = inlines.length - 1; n >= 0; n--) {
      const m = new Map<MarkKind, number>();
      for (const k of marksOf[n] ?? []) m.set(k, 1 + (runs[n + 1]?.get(k) ?? 0));
      runs[n] = m;
    }
    inlines.forEach((i, n) => {
      this.persistence = runs[n]!;
      this.inline(i, inherited);
    });
  }

  private inline(i: Inline, inherited: MarkKind[]): void {
    switch (i.t) {
      case 'text': {
        const marks = [...new Set([...inherited, ...markSet(i.m)])];
        const text = i.text.replace(/[\r\n]+/g, ' ');
        if (i.m.code) {
          this.setMarks(marks);
          // Right after another code span, the two fences would run together (`a```b` is one run of four):
          // the second is written as its HTML element, which renders the same. Between its tags is Markdown, so
          // every ASCII punctuation character is a character reference (literal text to every renderer).
          const last = this.pieces[this.pieces.length - 1];
          if (typeof last === 'string' && last.endsWith('`'))
            return this.emit(`<code>${text.replace(/[!-/:-@[-`{-~]/g, (c) => `&#${c.charCodeAt(0)};`)}</code>`);
          let code = codeSpan(text);
          if (this.mode === 'cell') code = code.replace(/\|/g, '\\|');
          return this.emit(code);
        }
        // Spaces and tabs move outside delimiters; other white space (no-break space) is text.
        const lead = /^[ \t]*/.exec(text)![0];
        const core = text.slice(lead.length).replace(/[ \t]+$/, '');
        const trail = text.slice(lead.length + core.length);
        if (!core) {
          // White space without a mark ends it (`~~a~~ ~~b~~` is two strikes); with marks it stays neutral.
          const end = this.open.findIndex((k) => !marks.includes(k));
          if (end >= 0 && !inherited.length) this.setMarks(this.open.slice(0, end));
          this.pending += this.lineStart ? '' : text;
          return;
        }
        // Closing first, then the white space, then opening: delimiters hug the text.
        const keep = this.open.findIndex((k) => !marks.includes(k));
        if (keep >= 0) this.setMarks(this.open.slice(0, keep));
        this.pending += this.lineStart ? '' : lead;
        this.setMarks(marks);
        this.emit(escapeMarkdown(core, this.lineStart));
        this.pending = trail;
        return;
      }
      case 'br':
        // Emphasis may span a hard break: marks stay open.
        this.pending = '';
        if (this.mode === 'para') {
          this.pieces.push('\\\n');
          this.lineStart = true;
        } else if (this.mode === 'cell') this.emit('<br>');
        else this.pending = ' ';
        return;
      case 'link': {
        // Marks open before the link and shared by all its text stay open across it; others go inside.
        const only = i.children.length === 1 ? i.children[0] : undefined;
        // A link showing its own address (an autolink, GFM's www. and bare URLs) is marked as a whole: the
        // marks go outside (`~~<http://a.b>~~`; an autolink has no room inside).
        const bare = only?.t === 'text' && !only.m.code && [only.text, 'mailto:' + only.text, 'http://' + only.text].includes(i.href);
        const common = bare ? commonMarks(i.children) : this.open.filter((k) => commonMarks(i.children).includes(k));
        this.setMarks([...new Set([...inherited, ...common])]);
        if (
          only?.t === 'text' &&
          !only.m.code &&
          (only.text === i.href || 'mailto:' + only.text === i.href) &&
          /^[a-z][a-z0-9+.-]{1,31}:[^\s<>|]*$/i.test(i.href) &&
          !i.title
        ) {
          return this.emit(`<${only.text}>`);
        }
        const inner = new InlineWriter(this.ctx, this.mode);
        inner.lineStart = false;
        inner.write(i.children, []);
        const text = inner.finish(common);
        return this.emit(`[${text}](${linkDestination(i.href)}${linkTitle(i.title)})`);
      }
      case 'image': {
        this.setMarks([...inherited]);
        const alt = oneLine(i.alt);
        if (!i.data) return alt ? this.emit(escapeMarkdown(alt, this.lineStart)) : undefined;
        if (MD_IMAGE.test(i.data.mime)) return this.emit(`![${escapeMarkdown(alt, false)}]${this.ctx.images.target(i.data, linkTitle(i.title))}`);
        const size = (i.widthPx ? ` width="${i.widthPx}"` : '') + (i.heightPx ? ` height="${i.heightPx}"` : '');
        // HTML: each repeat writes the data again and counts it (docx-images.ts).
        // `|` as a reference: in a table cell it would end the cell inside the tag.
        return this.emit(`<img src="${this.ctx.html.images.inline(i.data)}" alt="${htmlEscape(alt).replace(/\|/g, '&#124;')}"${size}>`);
      }
      case 'note': {
        const n = this.ctx.notes.get(`${i.kind}:${i.id}`);
        if (n !== undefined) {
          this.setMarks([...inherited]);
          this.emit(`[^${n}]`);
          this.ctx.referenced.add(n);
        }
        return;
      }
      case 'check':
        this.setMarks([...inherited]);
        return this.emit(i.checked ? '☒' : '☐');
      case 'math': {
        // TeX between dollars, as pandoc writes it (tex-write.ts keeps it safe to render and on one line).
        const tex = equationTex(i.row);
        if (!tex) return;
        this.setMarks([...inherited]);
        return this.emit(i.display ? `$$${tex}$$` : `$${tex}$`);
      }
      case 'anchor':
        return;
    }
  }

  /** The Markdown of what was written; `outer` marks are left open by the caller (a link inside them). */
  finish(outer: MarkKind[] = []): string {
    this.setMarks(outer.filter((k) => this.open.includes(k)));
    this.pending = '';
    // Marks shared by every child of a link were opened outside it: drop them inside.
    const pieces = this.pieces.filter((p) => typeof p === 'string' || !outer.includes(p.kind));
    return resolveDelims(pieces, () => this.pairs++).replace(/(\\\n)+$/, '');
  }
}

/** Marks every text child of a link shares (they stay open across the link). */
function commonMarks(children: Inline[]): MarkKind[] {
  let common: MarkKind[] | undefined;
  for (const c of children) {
    if (c.t !== 'text') continue;
    const m = markSet(c.m);
    common = common ? common.filter((k) => m.includes(k)) : m;
  }
  return common ?? [];
}

const WS = /\s/u;
const PUNCT = /[\p{P}\p{S}]/u;

/** Pairs delimiters and writes each pair as Markdown where it is flanking as CommonMark needs, else as HTML. */
function resolveDelims(pieces: Piece[], _next: () => number): string {
  // Pair opens and closes (they nest properly by construction).
  const stack: Delim[] = [];
  let id = 0;
  for (const p of pieces) {
    if (typeof p === 'string') continue;
    if (p.open) {
      p.pair = id++;
      stack.push(p);
    } else {
      for (let i = stack.length - 1; i >= 0; i--) {
        if (stack[i]!.kind === p.kind) {
          p.pair = stack[i]!.pair;
          stack.splice(i, 1);
          break;
        }
      }
    }
  }
  const html = new Set<number>();
  // Underline, superscript and subscript have no Markdown form: always HTML.
  for (const p of pieces) if (typeof p !== 'string' && !MD_DELIM[p.kind]) html.add(p.pair);
  const isMd = (d: Delim) => d.pair >= 0 && !html.has(d.pair) && MD_DELIM[d.kind] !== undefined;
  // The character a delimiter shows next to its neighbours: its Markdown character, or a tag's `<` / `>`.
  const edge = (d: Delim, first: boolean) => (isMd(d) ? MD_DELIM[d.kind]![0]! : first ? '<' : '>');
  const charBefore = (k: number) => {
    for (; k >= 0; k--) {
      const p = pieces[k]!;
      if (typeof p !== 'string') return edge(p, false);
      if (p) return p[p.length - 1]!;
    }
    return '';
  };
  const charAfter = (k: number) => {
    for (; k < pieces.length; k++) {
      const p = pieces[k]!;
      if (typeof p !== 'string') return edge(p, true);
      if (p) return p[0]!;
    }
    return '';
  };
  /**
   * One pass over the delimiter runs as CommonMark sees them (one run per character: `~~**` is two runs,
   * `**` then `*` one run `***`), adding to `html` the pairs a renderer would not pair as written.
   */
  const judge = () => {
    // Openers written as Markdown and not yet closed, per character; each pair's opening run.
    const openRuns = new Map<string, number>();
    const runOf = new Map<number, { length: number; both: boolean }>();
    for (let a = 0; a < pieces.length;) {
      const first = pieces[a]!;
      if (typeof first === 'string' || !isMd(first)) {
        a++;
        continue;
      }
      const runChar = MD_DELIM[first.kind]![0]!;
      const run: Delim[] = [];
      let b = a;
      for (; b < pieces.length; b++) {
        const p = pieces[b]!;
        if (p === '') continue;
        if (typeof p === 'string' || !isMd(p) || MD_DELIM[p.kind]![0] !== runChar) break;
        run.push(p);
      }
      const before = charBefore(a - 1);
      const after = charAfter(b);
      const leftFlanking = after !== '' && !WS.test(after) && (!PUNCT.test(after) || before === '' || WS.test(before) || PUNCT.test(before));
      const rightFlanking = before !== '' && !WS.test(before) && (!PUNCT.test(before) || after === '' || WS.test(after) || PUNCT.test(after));
      const both = leftFlanking && rightFlanking;
      const length = run.reduce((n, d) => n + MD_DELIM[d.kind]!.length, 0);
      // Opening and closing the same character in one run is ambiguous.
      const mixed = run.some((d) => d.open) && run.some((d) => !d.open);
      const openBefore = openRuns.get(runChar) ?? 0;
      for (const d of run) {
        let ambiguous = mixed || (d.open && !leftFlanking) || (!d.open && !rightFlanking) || before === runChar || after === runChar;
        if (d.open) {
          // A run that may also close closes an earlier opener of its character if one is still open.
          if (both && openBefore > 0) ambiguous = true;
          runOf.set(d.pair, { length, both });
          openRuns.set(runChar, (openRuns.get(runChar) ?? 0) + 1);
        } else {
          openRuns.set(runChar, (openRuns.get(runChar) ?? 1) - 1);
          // CommonMark's rule of 3: when either run may both open and close, runs whose lengths add up to a
          // multiple of 3 (unless both are) do not pair.
          const opener = runOf.get(d.pair);
          if (opener && (both || opener.both) && (opener.length + length) % 3 === 0 && !(opener.length % 3 === 0 && length % 3 === 0))
            ambiguous = true;
        }
        if (ambiguous) html.add(d.pair);
      }
      a = b;
    }
  };
  // A pair written as HTML changes the runs and neighbours of the others: judged again until nothing
  // changes (a few rounds); past that every pair is HTML, which no renderer reads two ways.
  for (let round = 0; ; round++) {
    const size = html.size;
    judge();
    if (html.size === size) break;
    if (round === 8) {
      for (const p of pieces) if (typeof p !== 'string') html.add(p.pair);
      break;
    }
  }
  let out = '';
  for (const p of pieces) {
    if (typeof p === 'string') out += p;
    else if (html.has(p.pair) || p.pair < 0) out += `<${p.open ? '' : '/'}${HTML_TAG[p.kind]}>`;
    else out += MD_DELIM[p.kind]!;
  }
  return out;
}

function inlines(ctx: Ctx, list: Inline[], mode: 'para' | 'heading' | 'cell'): string {
  const w = new InlineWriter(ctx, mode);
  w.write(list);
  return w.finish().replace(/^[ \t\n]+|[ \t\n]+$/g, '');
}

function indent(text: string, first: string, rest: string): string {
  return text
    .split('\n')
    .map((line, i) => (i === 0 ? first + line : line === '' ? '' : rest + line))
    .join('\n');
}

function isSimpleTable(rows: TableRow[]): boolean {
  return rows.every((r) =>
    r.cells.every((c) => c.colspan === 1 && c.rowspan === 1 && c.blocks.length <= 1 && (c.blocks.length === 0 || c.blocks[0]!.t === 'para')),
  );
}

function table(ctx: Ctx, b: Extract<Block, { t: 'table' }>): string {
  if (b.rows.length === 0) return '';
  if (!isSimpleTable(b.rows)) {
    ctx.warnings.add('tables with merged cells or block content (lists, several paragraphs) were written as HTML tables');
    return htmlBlocks(ctx.html, [b]).replace(/\n\s*\n/g, '\n');
  }
  const width = Math.max(...b.rows.map((r) => r.cells.length));
  const cell = (r: TableRow, i: number) => {
    const c = r.cells[i];
    const p = c?.blocks[0];
    return p && p.t === 'para' ? inlines(ctx, p.inlines, 'cell') : '';
  };
  const align = (i: number) => {
    for (const r of b.rows) {
      const p = r.cells[i]?.blocks[0];
      if (p && p.t === 'para') return p.f.align;
    }
    return undefined;
  };
  const line = (cells: string[]) => '| ' + cells.join(' | ') + ' |';
  const cols = [...Array(width).keys()];
  const out = [line(cols.map((i) => cell(b.rows[0]!, i)))];
  out.push(
    '|' +
      cols
        .map((i) => {
          const a = align(i);
          return a === 'center' ? ':---:' : a === 'right' ? '---:' : a === 'left' ? ':---' : '---';
        })
        .join('|') +
      '|',
  );
  for (const r of b.rows.slice(1)) out.push(line(cols.map((i) => cell(r, i))));
  return out.join('\n');
}

/** The blocks' Markdown joined by blank lines; with `each`, each block's Markdown is handed to it instead. */
function blocks(ctx: Ctx, all: Block[], each?: (s: string) => void): string {
  const out: string[] = [];
  let prevList: { ordered: boolean; alt: boolean } | undefined;
  for (const b of all) {
    let s: string;
    let thisList: { ordered: boolean; alt: boolean } | undefined;
    switch (b.t) {
      case 'para':
        s = inlines(ctx, b.inlines, 'para');
        break;
      case 'heading': {
        const text = inlines(ctx, b.inlines, 'heading');
        s = '#'.repeat(b.level) + (text ? ' ' + text.replace(/(?<!\\)#+$/, (m) => m.replace(/#/g, '\\#')) : '');
        break;
      }
      case 'code': {
        // Emphasis inside a code block (keywords in bold) has no Markdown form: an HTML <pre> block keeps it.
        if (b.inlines.some((i) => i.t === 'text' && (i.m.b || i.m.i || i.m.s || i.m.u))) {
          s = `<pre><code${b.lang ? ` class="language-${htmlEscape(b.lang)}"` : ''}>${codeInlines(ctx.html, b.inlines)}</code></pre>`;
          break;
        }
        const runs = b.text.match(/^[ \t]*`{3,}/gm) ?? [];
        const fence = '`'.repeat(Math.max(3, ...runs.map((r) => r.trim().length + 1)));
        const info = b.lang ?? '';
        s = b.text === '' ? `${fence}${info}\n${fence}` : `${fence}${info}\n${b.text}\n${fence}`;
        break;
      }
      case 'hr':
        s = '___';
        break;
      case 'quote': {
        const inner = blocks(ctx, b.blocks);
        s = inner
          .split('\n')
          .map((l) => (l ? '> ' + l : '>'))
          .join('\n');
        break;
      }
      case 'list': {
        // Two lists in a row would read as one: the second takes the other marker.
        const alt = prevList !== undefined && prevList.ordered === b.ordered && !prevList.alt;
        thisList = { ordered: b.ordered, alt };
        s = listMarkdown(ctx, b, alt);
        break;
      }
      case 'table':
        s = table(ctx, b);
        break;
      case 'source':
        // Written as the source it came from (raw HTML, images by URL): its lines, without trailing blank ones.
        s = b.markdown.replace(/\s+$/, '');
        break;
    }
    prevList = thisList;
    if (s && each) each(s);
    else if (s) out.push(s);
  }
  return out.join('\n\n');
}

function listMarkdown(ctx: Ctx, b: Extract<Block, { t: 'list' }>, alt: boolean): string {
  // Loose when an item holds more than one block besides nested lists (a DOCX does not say; in Markdown such
  // items are mostly written with blank lines between their blocks).
  const loose = b.items.some((it) => it.blocks.filter((x) => x.t !== 'list').length > 1);
  const items = b.items.map((it, n) => {
    const marker = b.ordered ? `${b.start + n}${alt ? ')' : '.'} ` : alt ? '* ' : '- ';
    const task = it.checked === undefined ? '' : it.checked ? '[x] ' : '[ ] ';
    let body = loose ? blocks(ctx, it.blocks) : tightJoin(ctx, it.blocks);
    if (task && !body) body = ' ';
    return indent(task + body, marker, ' '.repeat(marker.length));
  });
  return items.join(loose ? '\n\n' : '\n');
}

/** A tight item's blocks: a paragraph and a nested list on consecutive lines. */
function tightJoin(ctx: Ctx, list: Block[]): string {
  return list
    .map((b) => blocks(ctx, [b]))
    .filter((s) => s)
    .join('\n');
}

/** Writes the model as Markdown. */
export function modelToMarkdown(doc: DocModel, warnings: Set<string>): string {
  const sink = new ByteSink(new OutputBudget(Infinity, 'Markdown'));
  writeMarkdown(doc, warnings, sink);
  return Buffer.from(sink.finish()).toString('utf8');
}

/**
 * Writes the model as Markdown into `sink`, one top-level block (and one note) at a time, so the output
 * budget sees it while it is written (output-sink.ts); repeated pictures' data once, at the end.
 */
export function writeMarkdown(doc: DocModel, warnings: Set<string>, sink: TextSink): void {
  // Links and images with unsafe targets, and islands whose Markdown is not safe to render, are taken out first.
  doc = safeMarkdownModel(doc, warnings);
  const notes = new Map<string, number>();
  doc.notes.forEach((n, i) => notes.set(`${n.kind}:${n.id}`, i + 1));
  const html = new DocxImages(sink);
  const { uses, sources } = imageUses(doc);
  const ctx: Ctx = {
    warnings,
    notes,
    referenced: new Set(),
    html: { warnings, notes, idPrefix: '', images: html },
    images: new MarkdownImages(html, uses, sources),
  };
  // The output ends with one new line and no other trailing white space: the last piece, and any pieces of
  // only white space after it, are held until the end (pieces before them are followed by text).
  let held = '';
  const put = (piece: string) => {
    if (/\S/.test(piece)) {
      sink.write(held);
      held = piece;
    } else held += piece;
  };
  let first = true;
  blocks(ctx, doc.blocks, (s) => {
    put(first ? s : '\n\n' + s);
    first = false;
  });
  // A note cited only inside an HTML table has no `[^n]` a Markdown reader would follow (an unreferenced
  // definition is not shown): it is written as a paragraph the table's link points to.
  doc.notes.forEach((n, i) =>
    put(
      '\n\n' +
        (ctx.referenced.has(i + 1)
          ? indent(blocks(ctx, n.blocks) || ' ', `[^${i + 1}]: `, '    ')
          : `<sup id="fn${i + 1}">${i + 1}</sup> ` + (blocks(ctx, n.blocks) || ' ')),
    ),
  );
  const defs = ctx.images.definitions(warnings);
  if (defs.length) put('\n\n' + defs.join('\n'));
  sink.write(held.replace(/\s+$/, '') + '\n');
}
