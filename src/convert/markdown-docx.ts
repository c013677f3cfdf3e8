/**
 * Markdown → WordprocessingML straight from markdown-it's tokens, through the shared writer (src/docx/wordml):
 * no HTML string, no DOM. It writes what the HTML walk writes for the DOM markdown-it's HTML parses to (the
 * equivalence test in test/convert holds the two together), so it knows only markdown-it's own token types
 * and those of the plugins Folio uses; a stream with raw HTML, or a token it does not know, goes the DOM way
 * (markdownDocxBody returns undefined before writing anything).
 *
 * Bounds: the walk is one linear pass over the tokens (nesting is markdown-it's, capped by maxNesting), the
 * element count is capped as the DOM path caps it, footnote copies are capped by the writer, tables keep
 * Word's column limit, and images go through the same data-URI budgets.
 */
import { addTex } from './markdown-math-docx.js';
import { bookmarkName } from '../docx/wordml/bookmarks.js';
import { copyPara } from '../docx/wordml/paragraph-props.js';
import { runWith } from '../docx/wordml/run-props.js';
import { cellContext, copyCtx, rootCtx, WordWriter, type Ctx } from '../docx/wordml/writer.js';
import {
  cellWidthXml,
  cellXml,
  columnChunks,
  emptyRowPartXml,
  evenGrid,
  MAX_SOURCE_COLUMNS,
  nextTableNumber,
  rowStartXml,
  TABLE_FULL_WIDTH,
  TABLE_LOOK,
  TABLE_STYLE,
  tableLookXml,
  TABLE_PART_SEPARATOR,
  tableStartXml,
  wideTableWarnings,
} from '../docx/wordml/table.js';
import { codeLanguage, HEADING_PT, HEADING_STYLE } from './html-elements.js';
import { itemContext, listContext } from './html-lists.js';
import { jcOf } from './html-style.js';
import { bodyOptions, collectBody, type ConvertedBody, type ConvertOptions } from './html-to-docx.js';
import { MAX_ELEMENTS, tooManyElements } from './html-walker.js';
import { islands, wrapIsland } from './markdown-islands.js';
import { ImageStore } from './images.js';
import { TASK_CHECKED, TASK_UNCHECKED, type MarkdownParse, type MdToken } from './markdown.js';

/** How deep notes may reference notes, as in the HTML walk. */
const MAX_NOTE_NESTING = 2;
const NO_RUN = {};
const STYLE_ALIGN = /^text-align:(left|right|center)$/;

// Block tokens this writes; anything else (a plugin's, a highlighter's output) sends the document the DOM way.
const KNOWN_BLOCK = new Set([
  'paragraph_open',
  'paragraph_close',
  'heading_open',
  'heading_close',
  'blockquote_open',
  'blockquote_close',
  'bullet_list_open',
  'bullet_list_close',
  'ordered_list_open',
  'ordered_list_close',
  'list_item_open',
  'list_item_close',
  'inline',
  'fence',
  'code_block',
  'hr',
  'table_open',
  'table_close',
  'thead_open',
  'thead_close',
  'tbody_open',
  'tbody_close',
  'tr_open',
  'tr_close',
  'th_open',
  'th_close',
  'td_open',
  'td_close',
  'footnote_block_open',
  'footnote_block_close',
  'footnote_open',
  'footnote_close',
  'footnote_anchor',
]);
const KNOWN_INLINE = new Set([
  'text',
  'softbreak',
  'hardbreak',
  'code_inline',
  'em_open',
  'em_close',
  'strong_open',
  'strong_close',
  's_open',
  's_close',
  'link_open',
  'link_close',
  'image',
  'footnote_ref',
  'footnote_anchor',
  'html_inline',
  'math_inline',
]);

type NoteIndex = Map<number, { open: number; close: number }>;

/**
 * Whether the direct writer knows every token, and the element count the DOM would have stays in bounds.
 * The same pass fills `notes` (footnote_open and footnote_close index by note id), which saves the writer
 * one more pass over every token.
 */
function writable(parse: MarkdownParse, notes: NoteIndex): boolean {
  const { tokens, md } = parse;
  if (md.options.breaks || md.options.highlight) return false;
  // A loop rather than a recursive closure: this visits every token, and inline children nest one level only.
  let elements = 0;
  let noteOpen = -1;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (!KNOWN_BLOCK.has(t.type)) return false;
    if (t.type === 'footnote_open') noteOpen = i;
    else if (t.type === 'footnote_close' && noteOpen >= 0) {
      notes.set((tokens[noteOpen]!.meta as { id: number }).id, { open: noteOpen, close: i });
      noteOpen = -1;
    }
    if (t.nesting !== -1 && t.type !== 'inline' && !t.hidden) elements++;
    const children = t.children;
    if (!children) continue;
    for (const c of children) {
      if (!KNOWN_INLINE.has(c.type)) return false;
      if (c.type === 'html_inline' && c.content !== TASK_CHECKED && c.content !== TASK_UNCHECKED) return false;
      if (c.nesting !== -1 && c.type !== 'text' && c.type !== 'softbreak') elements++;
      if (c.children) {
        // An image's alt text: text and inline formatting, written as plain text.
        for (const g of c.children) if (!KNOWN_INLINE.has(g.type)) return false;
      }
    }
  }
  if (elements > MAX_ELEMENTS) throw tooManyElements();
  return true;
}

/** The body for a parsed Markdown document, or undefined when it must go through the DOM. */
export function markdownDocxBody(parse: MarkdownParse, options: ConvertOptions): ConvertedBody | undefined {
  const notes: NoteIndex = new Map();
  if (!writable(parse, notes)) return undefined;
  const opts = bodyOptions(options);
  const w = new WordWriter({
    relIdPrefix: opts.relIdPrefix,
    firstNumId: opts.firstNumId,
    firstFootnoteId: opts.firstFootnoteId,
    styledHeaderRows: opts.styledHeaderRows,
  });
  const images = new ImageStore(w.relationships, w.warnings, opts.mediaPrefix, opts.firstDrawingId);
  const writer = new MarkdownWriter(parse, w, images, opts.textWidthTwips, notes);
  writer.write();
  w.flush();
  return collectBody(w, images.media, w.frame.blocks.join(''));
}

interface Open {
  /** The closing token type this entry waits for. */
  close: string;
  ctx: Ctx;
  /** For headings and code blocks: the block count when opened (an empty one still writes a paragraph). */
  blocksBefore: number;
  /** List items: close as an item (an empty item still shows its number). */
  item: boolean;
}

class MarkdownWriter {
  private readonly tokens: MdToken[];
  /**
   * Each note's tokens without its back-references, made once: markdown-it-footnote writes one per reference,
   * so a note cited n times holds n of them, and skipping them on each of the n copies was n².
   */
  private readonly noteTokens = new Map<number, MdToken[]>();
  private readonly noteInline = new Map<MdToken, MdToken[]>();
  private noteDepth = 0;

  constructor(
    private readonly parse: MarkdownParse,
    private readonly w: WordWriter,
    private readonly images: ImageStore,
    private readonly widthTwips: number,
    /** footnote_open index by note id, and its footnote_close (see writable). */
    private readonly notes: NoteIndex,
  ) {
    this.tokens = parse.tokens;
  }

  write(): void {
    const root = rootCtx(copyPara(undefined), 12, this.widthTwips);
    // Top-level blocks Word cannot carry are written as source islands (markdown-islands.ts), as the HTML walk does.
    let pos = 0;
    for (const island of islands(this.parse)) {
      this.blocks(this.tokens, pos, island.start, root, -1);
      this.w.flush();
      const from = this.w.frame.blocks.length;
      this.blocks(this.tokens, island.start, island.end, root, -1);
      this.w.flush();
      wrapIsland(this.w, from, island.source);
      pos = island.end;
    }
    this.blocks(this.tokens, pos, this.tokens.length, root, -1);
  }

  /** A note's tokens (between footnote_open and footnote_close) without back-references, and its level. */
  private note(id: number, open: number, close: number): MdToken[] {
    let list = this.noteTokens.get(id);
    if (!list) {
      list = [];
      for (let i = open + 1; i < close; i++) {
        const t = this.tokens[i]!;
        if (t.type === 'footnote_anchor') continue;
        if (t.type === 'inline' && t.children?.some((c) => c.type === 'footnote_anchor')) {
          this.noteInline.set(
            t,
            t.children.filter((c) => c.type !== 'footnote_anchor'),
          );
        }
        list.push(t);
      }
      this.noteTokens.set(id, list);
    }
    return list;
  }

  /**
   * Writes tokens [from, to) in `root`. `noteLevel`: inside a footnote, the level of the note's own
   * paragraphs, which the HTML walk writes in the note's context rather than as <p> blocks.
   */
  private blocks(tokens: MdToken[], from: number, to: number, root: Ctx, noteLevel: number): void {
    const w = this.w;
    const stack: Open[] = [];
    let ctx = root;
    for (let i = from; i < to; i++) {
      const t = tokens[i]!;
      switch (t.type) {
        case 'inline': {
          const children = noteLevel >= 0 ? (this.noteInline.get(t) ?? t.children) : t.children;
          if (children) this.inline(children, ctx);
          continue;
        }
        case 'paragraph_open': {
          if (t.hidden) continue;
          w.flush();
          const inner = copyCtx(ctx);
          if (t.level !== noteLevel) {
            inner.para = copyPara(ctx.para);
            if (!inner.para.style || inner.para.style === 'ListParagraph') inner.para.style = ctx.quoteDepth ? 'Quote' : inner.para.style;
          }
          stack.push({ close: 'paragraph_close', ctx, blocksBefore: 0, item: false });
          ctx = inner;
          continue;
        }
        case 'heading_open': {
          w.flush();
          const inner = copyCtx(ctx);
          inner.para = copyPara(ctx.para);
          inner.para.style = HEADING_STYLE[t.tag];
          inner.fontPt = HEADING_PT[t.tag]!;
          inner.para.numPr = undefined;
          stack.push({ close: 'heading_close', ctx, blocksBefore: w.frame.blocks.length, item: false });
          ctx = inner;
          continue;
        }
        case 'blockquote_open': {
          w.flush();
          const inner = copyCtx(ctx);
          inner.para = copyPara(ctx.para);
          inner.quoteDepth = ctx.quoteDepth + 1;
          inner.indent = ctx.indent + 720;
          inner.para.style = 'Quote';
          inner.para.indLeft = inner.indent;
          stack.push({ close: 'blockquote_close', ctx, blocksBefore: 0, item: false });
          ctx = inner;
          continue;
        }
        case 'bullet_list_open':
        case 'ordered_list_open': {
          w.flush();
          const ordered = t.type === 'ordered_list_open';
          const level = ctx.list ? Math.min(8, ctx.list.depth + 1) : 0;
          let start = 1;
          const startAttr = ordered ? t.attrGet('start') : null;
          if (startAttr !== null) {
            const n = parseInt(String(startAttr), 10);
            if (Number.isFinite(n)) start = Math.max(0, Math.min(32767, n));
          }
          const numId = w.numbering.list({ ordered, format: ordered ? 'decimal' : 'bullet', level, baseIndent: Math.round(ctx.indent), start });
          stack.push({ close: ordered ? 'ordered_list_close' : 'bullet_list_close', ctx, blocksBefore: 0, item: false });
          ctx = listContext(ctx, numId, level);
          continue;
        }
        case 'list_item_open': {
          w.flush();
          const inner = itemContext(ctx, ctx.list!);
          // A Word paragraph carries one number: the item's own (empty) numbered paragraph comes before a
          // nested list or table that starts the item, rather than after it.
          if (startsWithListOrTable(tokens, i + 1)) {
            w.ensurePara(inner);
            w.flush();
          }
          stack.push({ close: 'list_item_close', ctx, blocksBefore: 0, item: true });
          ctx = inner;
          continue;
        }
        case 'fence':
        case 'code_block': {
          w.flush();
          const inner = copyCtx(ctx);
          inner.para = copyPara(ctx.para);
          inner.para.style = 'SourceCode';
          inner.pre = true;
          const before = w.frame.blocks.length;
          const code = copyCtx(inner);
          code.run = runWith(inner.run, 'rStyle', 'VerbatimChar');
          if (t.content) w.addText(t.content, code);
          if (w.frame.blocks.length === before && !w.frame.para) w.ensurePara(inner);
          w.flush();
          // The language (the info string's first word, as markdown-it's class="language-…") in a content control.
          const lang = t.type === 'fence' && t.info ? this.parse.md.utils.unescapeAll(t.info).trim().split(/\s+/)[0] : '';
          if (lang) codeLanguage(w, before, lang);
          continue;
        }
        case 'hr':
          w.horizontalRule(ctx);
          continue;
        case 'table_open':
          w.flush();
          i = this.table(tokens, i, ctx);
          continue;
        case 'footnote_block_open':
          // Written at the references, as notes.
          while (i < to && tokens[i]!.type !== 'footnote_block_close') i++;
          continue;
        case 'footnote_anchor':
          continue;
      }
      if (t.nesting === -1 && !t.hidden) {
        const open = stack.pop();
        if (!open) continue;
        if (open.item && ctx.item?.numPr) w.ensurePara(ctx);
        if (t.type === 'heading_close' && w.frame.blocks.length === open.blocksBefore && !w.frame.para) w.ensurePara(ctx);
        w.flush();
        ctx = open.ctx;
      }
    }
  }

  private inline(children: MdToken[], root: Ctx): void {
    const w = this.w;
    const stack: Ctx[] = [];
    let ctx = root;
    for (let i = 0; i < children.length; i++) {
      const t = children[i]!;
      switch (t.type) {
        case 'text':
          if (t.content) w.addText(t.content, ctx);
          break;
        case 'softbreak':
          w.addText('\n', ctx);
          break;
        case 'hardbreak':
          w.addRaw('<w:br/>', ctx);
          w.addText('\n', ctx);
          break;
        case 'code_inline': {
          const code = copyCtx(ctx);
          code.run = runWith(ctx.run, 'rStyle', 'VerbatimChar');
          if (t.content) w.addText(t.content, code);
          break;
        }
        case 'em_open':
        case 'strong_open':
        case 's_open': {
          const inner = copyCtx(ctx);
          inner.run = runWith(ctx.run, t.type === 'em_open' ? 'italic' : t.type === 'strong_open' ? 'bold' : 'strike', true);
          stack.push(ctx);
          ctx = inner;
          break;
        }
        case 'link_open': {
          const inner = copyCtx(ctx);
          const target = w.relationships.hyperlink(String(t.attrGet('href') ?? '').trim(), String(t.attrGet('title') ?? '') || undefined);
          if (target) {
            inner.link = target;
            inner.run = runWith(ctx.run, 'rStyle', 'Hyperlink');
          }
          stack.push(ctx);
          ctx = inner;
          break;
        }
        case 'em_close':
        case 'strong_close':
        case 's_close':
        case 'link_close':
          ctx = stack.pop() ?? root;
          break;
        case 'image':
          this.image(t, ctx);
          break;
        case 'footnote_ref':
          this.footnoteRef(children, i, ctx);
          break;
        case 'html_inline':
          // Only the task-list checkboxes come this way (see writable).
          w.addCheckbox(t.content === TASK_CHECKED, ctx);
          break;
        case 'math_inline':
          // TeX between dollars: a Word equation (markdown-math-docx.ts).
          addTex(w, t.content, !!(t.meta as { display?: boolean } | null)?.display, ctx);
          break;
      }
    }
  }

  private image(t: MdToken, ctx: Ctx): void {
    const { md, env } = this.parse;
    const src = String(t.attrGet('src') ?? '').trim();
    const alt = t.children ? md.renderer.renderInlineAsText(t.children, md.options, env) : '';
    const img = this.images.image(src);
    if (!img) {
      if (alt) this.w.addText(alt, ctx);
      return;
    }
    const title = t.attrGet('title');
    this.w.addRaw(this.images.drawing(img, img.w, img.h, ctx.widthTwips / 15, alt, title === null ? undefined : String(title)), ctx, NO_RUN);
  }

  /** A reference becomes a Word footnote holding a copy of its note; too deep, a superscript link as HTML shows it. */
  private footnoteRef(list: MdToken[], i: number, ctx: Ctx): void {
    const { md, env } = this.parse;
    const t = list[i]!;
    const note = this.notes.get((t.meta as { id: number }).id);
    if (note && this.noteDepth <= MAX_NOTE_NESTING) {
      this.w.footnote(ctx, () => {
        this.noteDepth++;
        const para = copyPara(undefined);
        para.style = 'FootnoteText';
        const tokens = this.note((t.meta as { id: number }).id, note.open, note.close);
        this.blocks(tokens, 0, tokens.length, rootCtx(para, 10, this.widthTwips), this.tokens[note.open]!.level + 1);
        this.noteDepth--;
      });
      return;
    }
    const rules = md.renderer.rules;
    const id = String(rules.footnote_anchor_name!(list, i, md.options, env, md.renderer));
    const subId = (t.meta as { subId?: number } | null)?.subId ?? 0;
    const sup = copyCtx(ctx);
    sup.run = runWith(ctx.run, 'vertAlign', 'superscript');
    const target = this.w.relationships.hyperlink(`#fn${id}`);
    if (target) {
      sup.link = target;
      sup.run = runWith(sup.run, 'rStyle', 'Hyperlink');
    }
    this.w.ensurePara(ctx).bookmarks.push(bookmarkName(`fnref${id}${subId > 0 ? `:${subId}` : ''}`));
    this.w.addText(String(rules.footnote_caption!(list, i, md.options, env, md.renderer)), sup);
  }

  /**
   * A GFM table from table_open at `start`; returns the index of its table_close. Wider than Word's 63
   * columns, it is written as several tables of at most 63 columns (table.ts), each with its own part of
   * every row, and a warning says so.
   */
  private table(tokens: MdToken[], start: number, ctx: Ctx): number {
    const w = this.w;
    const tableNo = nextTableNumber(w);
    interface Cell {
      header: boolean;
      align?: string;
      inline?: MdToken;
    }
    const rows: Array<{ header: boolean; cells: Cell[] }> = [];
    let inHead = false;
    let end = start + 1;
    let dropped = 0;
    for (; end < tokens.length; end++) {
      const t = tokens[end]!;
      if (t.type === 'table_close') break;
      if (t.type === 'thead_open') inHead = true;
      else if (t.type === 'thead_close') inHead = false;
      else if (t.type === 'tr_open') rows.push({ header: inHead, cells: [] });
      else if (t.type === 'th_open' || t.type === 'td_open') {
        const row = rows[rows.length - 1]!;
        if (row.cells.length >= MAX_SOURCE_COLUMNS) {
          dropped++;
          continue;
        }
        const style = t.attrGet('style');
        const m = style === null ? null : STYLE_ALIGN.exec(String(style));
        const next = tokens[end + 1];
        row.cells.push({ header: t.type === 'th_open', align: m?.[1], inline: next?.type === 'inline' ? next : undefined });
      }
    }
    let ncols = 0;
    for (const row of rows) ncols = Math.max(ncols, row.cells.length);
    if (!rows.length || ncols === 0) return end;
    w.warnings.push(...wideTableWarnings(tableNo, ncols, dropped));
    const avail = ctx.widthTwips - (ctx.indent > 0 ? ctx.indent : 0);
    let tblPr = TABLE_STYLE + TABLE_FULL_WIDTH;
    if (ctx.indent > 0) tblPr += `<w:tblInd w:w="${Math.round(ctx.indent)}" w:type="dxa"/>`;
    // The first row, a header row, is bold through the table style (see WriterOptions.styledHeaderRows).
    const styledFirst = w.styledHeaderRows && rows[0]!.header;
    tblPr += w.styledHeaderRows ? tableLookXml(styledFirst) : TABLE_LOOK;
    // Joined once, as the writer joins a paragraph (see WordWriter.flush): no cons string per cell.
    const xml: string[] = [];
    const savedPageBreak = w.pendingPageBreak;
    w.pendingPageBreak = false;
    // Cells of one column with the same boldness and alignment share one context: the walk never changes a
    // context it is given (a cell's has no list item to number), and a table of n rows made 2n objects a column.
    const cellContexts = new Map<string, Ctx>();
    for (const [from, to] of columnChunks(ncols)) {
      if (from > 0) xml.push(TABLE_PART_SEPARATOR);
      const grid = evenGrid(to - from, Math.max((to - from) * 200, avail));
      xml.push(tableStartXml(tblPr, grid));
      for (const [r, row] of rows.entries()) {
        xml.push(rowStartXml(row.header));
        if (from > 0 && row.cells.length <= from) {
          xml.push(emptyRowPartXml(grid), '</w:tr>');
          continue;
        }
        for (let c = from; c < to; c++) {
          const cell = row.cells[c];
          const width = grid[c - from]!;
          if (!cell) {
            xml.push(`<w:tc><w:tcPr>${cellWidthXml(width)}</w:tcPr><w:p/></w:tc>`);
            continue;
          }
          const saved = w.beginFrame();
          const bold = cell.header && !(styledFirst && r === 0);
          const key = `${c}${bold ? 'b' : ''}${cell.align ?? ''}`;
          let cellCtx = cellContexts.get(key);
          if (!cellCtx) {
            cellCtx = cellContext(ctx, bold, width);
            if (cell.align) cellCtx.para.jc = jcOf(cell.align);
            cellContexts.set(key, cellCtx);
          }
          if (cell.inline?.children) this.inline(cell.inline.children, cellCtx);
          w.flush();
          const { blocks, lastIsTable } = w.endFrame(saved);
          xml.push(cellXml(cellWidthXml(width), blocks, lastIsTable));
        }
        xml.push('</w:tr>');
      }
      xml.push('</w:tbl>');
    }
    w.pendingPageBreak = savedPageBreak;
    w.addTable(xml.join(''));
    return end;
  }
}

/** Whether the list item whose content starts at token `i` starts with a nested list or a table. */
function startsWithListOrTable(tokens: MdToken[], i: number): boolean {
  for (; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.type === 'paragraph_open' && t.hidden) continue;
    if (t.type === 'inline' && !t.children?.some((c) => c.type !== 'text' || c.content)) continue;
    return t.type === 'bullet_list_open' || t.type === 'ordered_list_open' || t.type === 'table_open';
  }
  return false;
}
