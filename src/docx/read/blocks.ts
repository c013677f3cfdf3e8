/**
 * A sequence of body-level elements (the body, a table cell, a note, a text box) → blocks. Word has flat
 * paragraphs; the structure is rebuilt from their properties:
 * - heading level: a direct outline level, else the style chain (heading N, Title, outlineLvl);
 * - lists: w:numPr (direct, or from the style) through numbering.xml; items nest by level, a new list starts
 *   when the numbering instance changes at a level; paragraphs without numbering but indented to an open
 *   item's level (or styled List Paragraph) continue that item;
 * - block quotes: Quote-like styles, and left indentation beyond the enclosing item's (720 twips a level, the
 *   convention of Folio's writer and pandoc's);
 * - code blocks: code styles (Source Code, HTML Preformatted...) or paragraphs whose every run is set in a
 *   monospace font; consecutive code paragraphs are one block;
 * - horizontal rules: empty paragraphs with a border (or the Horizontal Rule style).
 */
import { FolioError } from '../../errors.js';
import { mathText } from '../math/ast.js';
import { attr, child, childElements, decodeXml, walk, type XElement, type XNode } from '../xml.js';
import { nestedTooDeeply, QUOTE_STEP, type ReadContext } from './context.js';
import { InlineReader, type Floating } from './inlines.js';
import {
  CODE_LANGUAGE_TAG,
  SOURCE_TAG,
  sourceFingerprint,
  type Block,
  type Inline,
  type ListItem,
  type ParaFormat,
  type TableCell,
  type TableRow,
} from './model.js';
import type { LevelInfo } from './numbering.js';
import { isOn, MONOSPACE } from './styles.js';

/** Quote levels one paragraph can open (Markdown readers nest further, but no real document does). */
const MAX_QUOTE_DEPTH = 8;

interface ParaInfo {
  kind: 'heading' | 'para' | 'code' | 'hr';
  level: number;
  quoteStyle: boolean;
  list?: { numId: string; ilvl: number; lvl: LevelInfo };
  ind?: number;
  listParagraph: boolean;
  inlines: Inline[];
  f: ParaFormat;
}

interface OpenList {
  block: Extract<Block, { t: 'list' }>;
  numId: string;
  ilvl: number;
  indent: number;
}

const val = (e: XElement | undefined, name: string): string | undefined => {
  const c = e && child(e, name);
  return c ? attr(c, 'w:val') : undefined;
};

const num = (s: string | undefined): number | undefined => {
  const n = Number(s);
  return s !== undefined && Number.isFinite(n) ? n : undefined;
};

export function readBlocks(ctx: ReadContext, nodes: XNode[], depth: number): Block[] {
  const b = new BlockBuilder(ctx, depth);
  b.nodes(nodes, depth);
  return b.root;
}

class BlockBuilder {
  readonly root: Block[] = [];
  private lists: OpenList[] = [];
  private lastCode?: Extract<Block, { t: 'code' }>;
  /** Inlines of a paragraph whose mark was deleted (tracked): they join the next paragraph. */
  private carried: Inline[] = [];
  /** How carried inlines meet the next paragraph's (a deleted mark: as words; a drop cap: within a word). */
  private carriedJoin: 'space' | 'none' = 'space';
  /** Running counts per numId and level, so a list interrupted and resumed keeps its numbers. */
  private readonly counters = new Map<string, number[]>();
  /** Text boxes met in the paragraph being read. */
  private boxes: Floating[] = [];

  constructor(
    private readonly ctx: ReadContext,
    private readonly depth: number,
  ) {}

  nodes(nodes: XNode[], depth: number): void {
    if (depth > this.ctx.limits.maxDepth) throw nestedTooDeeply(this.ctx.limits.maxDepth);
    for (const n of nodes) {
      if (n.type !== 'el') continue;
      switch (n.name) {
        case 'w:p':
          this.paragraph(n);
          break;
        case 'w:tbl':
          this.closeLists();
          this.lastCode = undefined;
          this.place(this.root, 0, this.table(n));
          break;
        case 'w:sdt': {
          const content = child(n, 'w:sdtContent');
          if (!content || this.source(n, content, depth)) break;
          // A code block's language (model.ts CODE_LANGUAGE_TAG); the control also ends the code block.
          const tag = val(child(n, 'w:sdtPr'), 'w:tag');
          const lang = tag?.startsWith(CODE_LANGUAGE_TAG) ? tag.slice(CODE_LANGUAGE_TAG.length) : undefined;
          if (lang !== undefined) this.lastCode = undefined;
          this.nodes(content.children, depth + 1);
          if (lang !== undefined && this.lastCode) {
            if (lang && !/[\s`]/.test(lang)) this.lastCode.lang = lang;
            this.lastCode = undefined;
          }
          break;
        }
        case 'w:customXml':
        case 'w:ins':
        case 'w:moveTo':
          this.nodes(n.children, depth + 1);
          break;
        case 'mc:AlternateContent': {
          const c = child(n, 'mc:Choice') ?? child(n, 'mc:Fallback');
          if (c) this.nodes(c.children, depth + 1);
          break;
        }
        case 'w:altChunk': {
          // An embedded chunk (HTML, RTF, text or a DOCX) read in place (reader.ts altChunk).
          const blocks = this.ctx.altChunk(attr(n, 'r:id'));
          if (blocks.length) {
            this.closeLists();
            this.lastCode = undefined;
            for (const b of blocks) this.root.push(b);
          }
          break;
        }
        default:
          break;
      }
    }
  }

  /** A content control of Folio's Markdown writer keeping a block's Markdown (model.ts SOURCE_TAG), while unedited. */
  private source(sdt: XElement, content: XElement, depth: number): boolean {
    const tag = val(child(sdt, 'w:sdtPr'), 'w:tag');
    if (!tag?.startsWith(SOURCE_TAG)) return false;
    // `folio-md:<id>:<fingerprint>`; the Markdown is island <id> of the islands part (islands.ts).
    const colon = tag.indexOf(':', SOURCE_TAG.length);
    if (colon < 0 || tag.slice(colon + 1) !== sourceFingerprint(textOf(content))) return false;
    const markdown = this.ctx.island(tag.slice(SOURCE_TAG.length, colon));
    if (markdown === undefined) return false;
    this.closeLists();
    this.lastCode = undefined;
    this.place(this.root, 0, { t: 'source', markdown, blocks: readBlocks(this.ctx, content.children, depth + 1) });
    return true;
  }

  private info(p: XElement): ParaInfo | undefined {
    const pPr = child(p, 'w:pPr');
    const styleId = val(pPr, 'w:pStyle');
    const style = this.ctx.styles.paragraph(styleId);
    const { inlines, floating } = InlineReader.read(this.ctx, p);
    const markRPr = pPr && child(pPr, 'w:rPr');
    const markDeleted = !!markRPr && !!child(markRPr, 'w:del');
    let all = inlines;
    if (this.carried.length) {
      // Two paragraphs joined by a deleted mark read as two runs of words: a space between them when neither
      // side has one (as pandoc's reader joins them); a drop cap is the first letter of its word.
      const last = this.carried[this.carried.length - 1];
      const first = inlines[0];
      const space = this.carriedJoin === 'space' && last?.t === 'text' && first?.t === 'text' && /\S$/.test(last.text) && /^\S/.test(first.text);
      all = [...this.carried, ...(space ? [{ t: 'text' as const, text: ' ', m: {} }] : []), ...inlines];
      this.carried = [];
    }
    this.boxes.push(...floating);
    // A deleted paragraph mark joins the paragraph to the next one (its content, if any left, is carried); an
    // emptied paragraph whose mark is deleted is gone, number and all. A drop cap (a frame holding the first
    // letter or word, w:framePr w:dropCap) belongs to the paragraph it starts.
    const frame = pPr && child(pPr, 'w:framePr');
    const dropCap = !!frame && /^(drop|margin)$/.test(attr(frame, 'w:dropCap') ?? '');
    if (markDeleted || (dropCap && all.length)) {
      this.carried = all;
      this.carriedJoin = dropCap ? 'none' : 'space';
      return undefined;
    }
    const f: ParaFormat = {};
    const jc = val(pPr, 'w:jc');
    if (jc === 'left' || jc === 'start') f.align = 'left';
    else if (jc === 'center') f.align = 'center';
    else if (jc === 'right' || jc === 'end') f.align = 'right';
    else if (jc === 'both' || jc === 'distribute') f.align = 'justify';
    const indEl = pPr && child(pPr, 'w:ind');
    const ind = indEl ? num(attr(indEl, 'w:left') ?? attr(indEl, 'w:start')) : undefined;
    if (indEl) {
      f.indRight = num(attr(indEl, 'w:right') ?? attr(indEl, 'w:end'));
      const hanging = num(attr(indEl, 'w:hanging'));
      f.firstLine = hanging !== undefined ? -hanging : num(attr(indEl, 'w:firstLine'));
    }
    const shd = pPr && child(pPr, 'w:shd');
    const fill = shd && attr(shd, 'w:fill');
    if (fill && /^[0-9a-f]{6}$/i.test(fill) && fill.toUpperCase() !== 'FFFFFF') f.shading = fill.toUpperCase();

    // Numbering: direct (numId 0 switches a style's list off), else the style's.
    const numPr = pPr && child(pPr, 'w:numPr');
    let numId = numPr ? val(numPr, 'w:numId') : undefined;
    let ilvl = numPr ? (num(val(numPr, 'w:ilvl')) ?? 0) : 0;
    const clampLevel = (l: number) => Math.min(Math.max(Math.trunc(l) || 0, 0), 8);
    const fromStyle = numId === undefined;
    if (fromStyle) {
      numId = style.numId;
      ilvl = style.ilvl ?? num(val(numPr, 'w:ilvl')) ?? 0;
    }
    ilvl = clampLevel(ilvl); // Word has nine levels: a hostile ilvl cannot nest lists deeper
    const lvl = numId !== undefined && numId !== '0' ? this.ctx.numbering.level(numId, ilvl) : undefined;
    // Numbering that shows no marker (a continuation paragraph of a list item) places the paragraph at its level.
    const levelInd = lvl?.hidden ? lvl.indent : undefined;

    // Headings come from the style chain (as Word's Heading styles, Title and outline levels of styles); a
    // direct w:outlineLvl only puts body text in the navigation pane and stays a paragraph (pandoc agrees).
    let level = style.heading ?? 0;
    level = Math.min(level, 6);
    const hasContent = all.some((i) => (i.t !== 'text' && i.t !== 'anchor' && i.t !== 'br') || (i.t === 'text' && /\S/.test(i.text)));
    const pBdr = pPr && child(pPr, 'w:pBdr');
    const ruled = !!pBdr && (isBorder(child(pBdr, 'w:bottom')) || isBorder(child(pBdr, 'w:top')));
    let kind: ParaInfo['kind'] = level ? 'heading' : 'para';
    const numbered = !!lvl && !lvl.hidden;
    if (!hasContent && (ruled || style.names.includes('horizontal rule'))) kind = 'hr';
    else if (level === 0 && hasContent) {
      // A code style whose every run is set in a proportional font (an "HTML Preformatted" paragraph retyped in
      // Times) is text. Without a code style, a paragraph set entirely in a monospace font is code only when it
      // is not a list item and does not read as prose (looksLikeProse): Courier is also a typewriter look.
      const fonts = directFonts(p);
      if (style.code && !(fonts.runs > 0 && fonts.proportional === fonts.runs)) kind = 'code';
      else if (fonts.runs > 0 && fonts.mono === fonts.runs && !numbered && !looksLikeProse(plainText(all))) kind = 'code';
    } else if (level === 0 && style.code) kind = 'code';
    // A heading stays a heading however it is numbered ("1.2 Scope", by its style or directly), as pandoc, mammoth
    // and Word's outline read it, except Folio's own list items holding a heading (a direct number there); a rule
    // numbered by its style is no item.
    const numberedHeading = kind === 'heading' && (fromStyle || !this.ctx.writtenByFolio);
    const list = lvl && !lvl.hidden && !numberedHeading && !(kind === 'hr' && fromStyle) ? { numId: numId!, ilvl, lvl } : undefined;
    if (!hasContent && kind !== 'hr' && !(kind === 'code' && (this.lastCode || style.code)) && !list) return undefined;
    return {
      kind,
      level,
      quoteStyle: !!style.quote,
      list,
      ind: ind ?? levelInd,
      listParagraph: style.names.some((n) => n === 'list paragraph' || n.startsWith('list continue')),
      inlines: all,
      f,
    };
  }

  private paragraph(p: XElement): void {
    this.ctx.count();
    this.boxes = [];
    const info = this.info(p);
    // Text boxes anchored ahead of the paragraph's text come before it, the others after it (document order),
    // at the top level; those of a list item stay in the item, after its paragraph.
    const inItem = !!info?.list;
    if (!inItem) for (const box of this.boxes) if (box.before) this.boxBlocks(box, this.root);
    const item = info ? this.placeParagraph(info) : undefined;
    for (const box of this.boxes) if (inItem || !box.before) this.boxBlocks(box, item ?? this.root);
  }

  private boxBlocks(box: Floating, into: Block[]): void {
    const blocks = readBlocks(this.ctx, box.content.children, this.depth + 1);
    if (into !== this.root) {
      into.push(...blocks);
      return;
    }
    // A text box interrupts the lists and code around it: what follows starts again.
    if (blocks.length) {
      this.closeLists();
      this.lastCode = undefined;
    }
    for (const b of blocks) this.root.push(b);
  }

  /** Places a paragraph; returns the blocks of the list item it made, if it is one. */
  private placeParagraph(info: ParaInfo): Block[] | undefined {
    const block = this.block(info);
    if (info.list) return this.listItem(info, block);
    const open = this.continuation(info);
    if (open) {
      this.lists.splice(this.lists.indexOf(open) + 1);
      const item = open.block.items[open.block.items.length - 1]!;
      const extra = (info.ind ?? open.indent) - open.indent;
      this.place(item.blocks, this.quoteDepth(info, extra), block);
      return undefined;
    }
    this.closeLists();
    this.place(this.root, this.quoteDepth(info, info.ind ?? 0), block);
    return undefined;
  }

  /**
   * Quote levels of a paragraph: only a quote style makes a block quote (its indentation beyond its
   * container's nests it further). Indentation alone does not: hanging indents, indented body text,
   * bibliography entries and indented lines in table cells are paragraphs (pandoc reads any left indentation
   * as a quote; the documents of the corpora indent far more often for layout). The one exception is a
   * document Folio wrote (ReadContext.writtenByFolio).
   */
  private quoteDepth(info: ParaInfo, extra: number): number {
    // Bounded: an indentation of millions of twips must not nest thousands of quotes.
    const steps = Math.min(Math.round(extra / QUOTE_STEP), MAX_QUOTE_DEPTH);
    if (info.quoteStyle) return Math.max(1, steps);
    // Folio's own writer says "inside a quote" by 720 twips of indentation a level (lists, code and headings
    // in quotes have their own styles): its documents are read back by that convention.
    if (!this.ctx.writtenByFolio || info.kind === 'hr') return 0;
    return extra >= QUOTE_STEP / 2 ? Math.max(1, steps) : 0;
  }

  /** The open list item a paragraph without numbering continues, if any. */
  private continuation(info: ParaInfo): OpenList | undefined {
    if (this.lists.length === 0) return undefined;
    if (info.ind === undefined) return info.listParagraph ? this.lists[this.lists.length - 1] : undefined;
    for (let i = this.lists.length - 1; i >= 0; i--) if (this.lists[i]!.indent <= info.ind) return this.lists[i];
    return undefined;
  }

  private block(info: ParaInfo): Block {
    if (info.kind === 'hr') return { t: 'hr' };
    if (info.kind === 'code') return { t: 'code', text: plainText(info.inlines), inlines: info.inlines };
    if (info.kind === 'heading') return { t: 'heading', level: info.level, inlines: info.inlines, f: info.f };
    return { t: 'para', inlines: info.inlines, f: info.f };
  }

  private listItem(info: ParaInfo, block: Block): Block[] {
    const { numId, ilvl, lvl } = info.list!;
    while (this.lists.length && this.lists[this.lists.length - 1]!.ilvl > ilvl) this.lists.pop();
    let top = this.lists[this.lists.length - 1];
    // Another numbering instance at the same level starts another list, except between bulleted ones: items of
    // two bullet instances side by side look like one list (pandoc writes one instance per task item).
    if (top && top.ilvl === ilvl && top.numId !== numId && (lvl.ordered || top.block.ordered)) {
      this.lists.pop();
      top = this.lists[this.lists.length - 1];
    }
    const counts = this.counters.get(numId) ?? [];
    this.counters.set(numId, counts);
    if (!top || top.ilvl < ilvl) {
      const container = top ? top.block.items[top.block.items.length - 1]!.blocks : this.root;
      const list: Extract<Block, { t: 'list' }> = { t: 'list', ordered: lvl.ordered, start: lvl.start + (counts[ilvl] ?? 0), items: [] };
      this.ctx.count();
      this.lastCode = undefined;
      if (container === this.root) this.place(this.root, 0, list);
      else container.push(list);
      top = { block: list, numId, ilvl, indent: lvl.indent };
      this.lists.push(top);
    }
    counts[ilvl] = (counts[ilvl] ?? 0) + 1;
    counts.length = ilvl + 1; // deeper levels start again

    const item: ListItem = { blocks: [] };
    if (block.t === 'para' || block.t === 'heading') {
      const checked = leadingCheck(block.inlines);
      if (checked !== undefined) item.checked = checked;
    }
    if (item.checked === undefined && lvl.check !== undefined) item.checked = lvl.check;
    top.block.items.push(item);
    this.lastCode = undefined;
    const extra = (info.ind ?? lvl.indent) - lvl.indent;
    this.place(item.blocks, this.quoteDepth(info, extra), block);
    return item.blocks;
  }

  private closeLists(): void {
    this.lists = [];
  }

  /** Appends a block to a container at a quote depth, joining the quotes (and code block) already there. */
  private place(container: Block[], depth: number, block: Block): void {
    let cur = container;
    for (let d = 0; d < depth; d++) {
      const last = cur[cur.length - 1];
      if (last?.t === 'quote') cur = last.blocks;
      else {
        const q: Block = { t: 'quote', blocks: [] };
        this.ctx.count();
        cur.push(q);
        cur = q.blocks;
      }
    }
    const last = cur[cur.length - 1];
    if (block.t === 'code' && last && last === this.lastCode) {
      last.text += '\n' + block.text;
      last.inlines.push({ t: 'br' }, ...block.inlines);
      return;
    }
    cur.push(block);
    this.lastCode = block.t === 'code' ? block : undefined;
  }

  private table(tbl: XElement): Block {
    if (this.depth + 1 > this.ctx.limits.maxDepth) throw nestedTooDeeply(this.ctx.limits.maxDepth);
    const tblPr = child(tbl, 'w:tblPr');
    const borders = tblPr && child(tblPr, 'w:tblBorders');
    const bordered = borders ? childElements(borders).some(isBorder) : this.ctx.styles.tableBordered(val(tblPr, 'w:tblStyle'));
    const rows: TableRow[] = [];
    /** Grid column → the cell a vertical merge started in. */
    const merging = new Map<number, TableCell>();
    let cells = 0;
    let headerRun = true;
    for (const tr of flatten(tbl, 'w:tr')) {
      const trPr = child(tr, 'w:trPr');
      const header: boolean = headerRun && !!trPr && isOn(child(trPr, 'w:tblHeader'));
      headerRun = header;
      const before = Math.min(Math.max(num(val(trPr, 'w:gridBefore')) ?? 0, 0), 64);
      const after = Math.min(Math.max(num(val(trPr, 'w:gridAfter')) ?? 0, 0), 64);
      let col = before;
      const row: TableRow = { header, cells: [] };
      // Grid columns a row skips (w:gridBefore/After) are empty cells, so columns stay aligned.
      const empty = (): TableCell => ({ blocks: [], colspan: 1, rowspan: 1 });
      for (let i = 0; i < before; i++) row.cells.push(empty());
      for (const tc of flatten(tr, 'w:tc')) {
        if (++cells > this.ctx.limits.maxTableCells) {
          throw this.tooLarge();
        }
        this.ctx.count();
        const tcPr = child(tc, 'w:tcPr');
        const span = Math.min(Math.max(num(val(tcPr, 'w:gridSpan')) ?? 1, 1), 1000);
        const vm = tcPr && child(tcPr, 'w:vMerge');
        const vmVal = vm ? (attr(vm, 'w:val') ?? 'continue') : undefined;
        const origin = merging.get(col);
        if (vmVal === 'continue' && origin) {
          origin.rowspan++;
          col += span;
          continue;
        }
        const shd = tcPr && child(tcPr, 'w:shd');
        const fill = shd && attr(shd, 'w:fill');
        const cell: TableCell = {
          blocks: readBlocks(this.ctx, tc.children, this.depth + 1),
          colspan: span,
          rowspan: 1,
          shading: fill && /^[0-9a-f]{6}$/i.test(fill) && fill.toUpperCase() !== 'FFFFFF' ? fill.toUpperCase() : undefined,
        };
        if (vmVal === 'restart') merging.set(col, cell);
        else merging.delete(col);
        row.cells.push(cell);
        col += span;
      }
      for (let i = 0; i < after; i++) row.cells.push(empty());
      rows.push(row);
    }
    return { t: 'table', rows, bordered };
  }

  private tooLarge(): FolioError {
    return new FolioError('UNPROCESSABLE_DOCUMENT', `A table has more than ${this.ctx.limits.maxTableCells} cells; it is too large to convert`);
  }
}

/** Rows of a table / cells of a row, also when wrapped in content controls or custom XML. */
function flatten(parent: XElement, name: string): XElement[] {
  const out: XElement[] = [];
  const go = (e: XElement, d: number) => {
    for (const c of e.children) {
      if (c.type !== 'el') continue;
      if (c.name === name) out.push(c);
      else if (d < 8 && (c.name === 'w:sdt' || c.name === 'w:sdtContent' || c.name === 'w:customXml' || c.name === 'w:ins')) go(c, d + 1);
    }
  };
  go(parent, 0);
  return out;
}

function isBorder(e: XElement | undefined): boolean {
  const v = e && attr(e, 'w:val');
  return v !== undefined && v !== 'nil' && v !== 'none';
}

/** Runs with text in the paragraph, and how many set a monospace or a proportional font directly. */
function directFonts(p: XElement): { runs: number; mono: number; proportional: number } {
  const out = { runs: 0, mono: 0, proportional: 0 };
  walk(p, (e) => {
    if (e.name === 'w:del' || e.name === 'w:moveFrom') return 'skip';
    if (e.name !== 'w:r') return undefined;
    if (!childElements(e, 'w:t').length) return 'skip';
    out.runs++;
    const fonts = child(child(e, 'w:rPr') ?? e, 'w:rFonts');
    const font = fonts && (attr(fonts, 'w:ascii') ?? attr(fonts, 'w:hAnsi'));
    if (font) {
      if (MONOSPACE.test(font.trim())) out.mono++;
      else out.proportional++;
    }
    return 'skip';
  });
  return out;
}

/** Characters and words that prose does not have and code does. */
const CODE_SIGNS =
  /[{}=<>;\\|`~^$@#[\]]|\(\)|::|->|=>|\/\/|\/\*|^\s{2,}|\t|\b(def|class|function|var|let|const|import|return|public|private|void|int|printf|echo|SELECT|FROM)\b/;

/**
 * Prose punctuation: a line that starts like a sentence (a capital letter, a quote or a digit), has at least
 * four words, ends like one (. ! ? : or a closing quote/parenthesis after one) or holds a comma between
 * words, and has none of CODE_SIGNS. A monospaced paragraph that reads so is text set in a typewriter font.
 */
export function looksLikeProse(text: string): boolean {
  const t = text.trim();
  if (CODE_SIGNS.test(text)) return false;
  const words = t.split(/\s+/).filter((w) => /\p{L}/u.test(w));
  if (words.length < 4) return false;
  const sentence = /^[\p{Lu}"'“‘(0-9]/u.test(t) && /[.!?:]["'”’)]?$/.test(t);
  return sentence || /\p{L},\s+\p{L}/u.test(t);
}

/** The text of inlines as a code block holds it: breaks are new lines, pictures and notes are dropped. */
export function plainText(inlines: Inline[]): string {
  let s = '';
  for (const i of inlines) {
    if (i.t === 'text') s += i.text;
    else if (i.t === 'br') s += '\n';
    else if (i.t === 'link') s += plainText(i.children);
    else if (i.t === 'check') s += i.checked ? '☒' : '☐';
    else if (i.t === 'math') s += mathText(i.row);
  }
  return s;
}

/** A task item's checkbox at the start of its first paragraph: removed from the text, returned. */
function leadingCheck(all: Inline[]): boolean | undefined {
  // Bookmarks before the checkbox do not count.
  const at = all.findIndex((i) => i.t !== 'anchor');
  if (at < 0) return undefined;
  const inlines = at === 0 ? all : all.slice(at);
  const result = leadingCheckAt(inlines);
  if (at > 0) all.splice(at, all.length - at, ...inlines);
  return result;
}

function leadingCheckAt(inlines: Inline[]): boolean | undefined {
  const first = inlines[0];
  if (first?.t === 'check') {
    inlines.shift();
    const next = inlines[0];
    if (next?.t === 'text') next.text = next.text.replace(/^[ \t\u00a0]/, '');
    if (next?.t === 'text' && next.text === '') inlines.shift();
    return first.checked;
  }
  if (first?.t === 'text') {
    const m = /^([☐☑☒])[ \t\u00a0]?/.exec(first.text);
    if (m) {
      first.text = first.text.slice(m[0].length);
      if (first.text === '') inlines.shift();
      return m[1] !== '☐';
    }
  }
  return undefined;
}

/** The text of an element's w:t descendants, in order (what sourceFingerprint is taken of). */
function textOf(root: XElement): string {
  let out = '';
  walk(root, (e) => {
    if (e.name === 'w:t') for (const t of e.children) if (t.type === 'text') out += decodeXml(t.raw);
  });
  return out;
}
