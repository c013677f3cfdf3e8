/**
 * The shared WordprocessingML body writer. A walker (the HTML DOM walk, the Markdown token walk) drives it
 * with a context (the formatting in effect) and text, and it assembles paragraphs of runs, merges adjacent
 * runs that look the same, opens and closes hyperlinks and bookmarks, and collects the parts the body refers
 * to (relationships, numbering, footnotes). Text follows HTML's white-space rules unless the context is
 * preformatted, so every walker gets the same words in the same runs.
 */
import { footnoteReferenceXml, Footnotes } from './footnotes.js';
import { Numbering } from './numbering.js';
import { copyPara, horizontalRuleProps, pPrXml, type NumPr, type ParaProps } from './paragraph-props.js';
import { Relationships } from './relationships.js';
import { copyRun, rPrXml, runWith, type RunProps } from './run-props.js';
import { xmlAttr, xmlText } from './escape.js';

/** Content of a paragraph before it is written: text (merged with its neighbours) or one run's XML (br, tab, drawing, note reference). */
export type Piece =
  | { kind: 'text'; text: string; rPr: string; link?: string }
  | { kind: 'raw'; xml: string; rPr: string; link?: string }
  /** Paragraph content that is not a run: an equation (m:oMath, m:oMathPara; math.ts). */
  | { kind: 'math'; xml: string; rPr: string; link?: string };

export interface Para {
  props: ParaProps;
  pieces: Piece[];
  pre: boolean;
  /** Whether the last emitted character was collapsible white space (HTML white-space collapsing). */
  spaceBefore: boolean;
  /** Bookmarks to open at the start of the paragraph (ids of elements). */
  bookmarks: string[];
}

/** A story being written: the body, a table cell, a footnote. */
export interface Frame {
  blocks: string[];
  para: Para | null;
  /** Whether the last block is a table (a cell must end in a paragraph). */
  lastIsTable: boolean;
}

export interface ListInfo {
  numId: number;
  depth: number;
}

/** The formatting in effect where the walk is: inherited by children, copied (never changed) for them. */
export interface Ctx {
  run: RunProps;
  link?: string; // hyperlink XML opening attributes (r:id="" or w:anchor="")
  para: ParaProps; // template for paragraphs created in this block
  pre: boolean;
  list?: ListInfo;
  /** The li's first paragraph still to receive the number. */
  item?: { numPr?: NumPr };
  quoteDepth: number;
  indent: number; // accumulated left indentation of containers (twips)
  fontPt: number;
  widthTwips: number; // available width for images/tables here
}

/** A child context: a copy with every field present (one object shape; see copyRun). */
export function copyCtx(c: Ctx): Ctx {
  return {
    run: c.run,
    link: c.link,
    para: c.para,
    pre: c.pre,
    list: c.list,
    item: c.item,
    quoteDepth: c.quoteDepth,
    indent: c.indent,
    fontPt: c.fontPt,
    widthTwips: c.widthTwips,
  };
}

export function notPre(c: Ctx): Ctx {
  const out = copyCtx(c);
  out.pre = false;
  return out;
}

/** A context at the top of a story (body, footnote): no inherited formatting. */
export function rootCtx(para: ParaProps, fontPt: number, widthTwips: number): Ctx {
  return {
    run: copyRun(undefined),
    link: undefined,
    para,
    pre: false,
    list: undefined,
    item: undefined,
    quoteDepth: 0,
    indent: 0,
    fontPt,
    widthTwips,
  };
}

/** The context of a table cell's content: the table's run formatting, none of its block's paragraph setup. */
/**
 * A cell's context. `bold`: the cell gets direct bold runs — a header cell outside a header row, or any header
 * cell when the writer's tables cannot rely on the table style (see WriterOptions.styledHeaderRows).
 */
export function cellContext(ctx: Ctx, bold: boolean, widthTwips: number): Ctx {
  const cellCtx = copyCtx(ctx);
  cellCtx.run = bold ? runWith(ctx.run, 'bold', true) : ctx.run;
  cellCtx.para = copyPara(ctx.para);
  cellCtx.para.style = undefined;
  cellCtx.para.numPr = undefined;
  cellCtx.para.indLeft = undefined;
  cellCtx.para.keepNext = undefined;
  cellCtx.list = undefined;
  cellCtx.item = undefined;
  cellCtx.quoteDepth = 0;
  cellCtx.indent = 0;
  cellCtx.widthTwips = widthTwips;
  cellCtx.pre = false;
  return cellCtx;
}

export const HAS_CONTENT = /[^ \t\n\r\f]/;
const NEEDS_COLLAPSE = /[\t\n\r\f]| {2}/;
const WHITE_RUN = /[ \t\n\r\f]+/g;

/** The text without trailing HTML white space (space, tab, LF, CR, FF). */
function trimCollapsibleEnd(text: string): string {
  let end = text.length;
  for (;;) {
    const c = text.charCodeAt(end - 1);
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0x0c) end--;
    else break;
  }
  return end === text.length ? text : text.slice(0, end);
}

/** Appends the `<w:r>` of text merged from consecutive text pieces with the same run properties as `last`. */
function pushTextRun(out: string[], last: Piece | undefined, runText: string): void {
  if (last && last.kind === 'text' && runText) out.push('<w:r>', last.rPr, '<w:t xml:space="preserve">', xmlText(runText), '</w:t></w:r>');
}

export interface WriterOptions {
  relIdPrefix: string;
  firstNumId: number;
  firstFootnoteId: number;
  /**
   * Header rows (w:tblHeader) take their bold look from the table style's first-row formatting
   * (TABLE_STYLE's definition, see table.ts) instead of direct bold runs. True for whole documents, whose
   * styles.xml we write; false for fragments inserted into a template, whose table style is the template's.
   */
  styledHeaderRows?: boolean;
}

export class WordWriter {
  frame: Frame = { blocks: [], para: null, lastIsTable: false };
  /** A page break asked for (CSS break-before/after) that the next paragraph takes. */
  pendingPageBreak = false;
  readonly relationships: Relationships;
  readonly numbering: Numbering;
  readonly footnotes: Footnotes;
  readonly warnings: string[] = [];
  private nextBookmark = 1;
  /** See WriterOptions.styledHeaderRows. */
  readonly styledHeaderRows: boolean;

  constructor(opts: WriterOptions) {
    this.styledHeaderRows = opts.styledHeaderRows ?? false;
    this.relationships = new Relationships(opts.relIdPrefix);
    this.numbering = new Numbering(opts.firstNumId);
    this.footnotes = new Footnotes(opts.firstFootnoteId);
  }

  /** The open paragraph, or a new one from the context's template (taking a list item's number once). */
  ensurePara(ctx: Ctx): Para {
    let p = this.frame.para;
    if (p) return p;
    const props = copyPara(ctx.para);
    if (ctx.item?.numPr) {
      props.numPr = ctx.item.numPr;
      ctx.item.numPr = undefined;
    } else if (ctx.list) {
      // A continuation paragraph of an item (text, code, quote): aligned with the item's text, un-numbered,
      // and kept in the item's list level: numId 0 is "no numbering" (ECMA-376 §17.9.18) and ilvl the level,
      // as LibreOffice's own DOCX export writes the un-numbered paragraphs of a list item. A reader that
      // rebuilds lists (pandoc's) then sees the paragraph inside the item instead of after the list.
      props.style ??= 'ListParagraph';
      props.numPr = { numId: 0, ilvl: ctx.list.depth };
      props.indLeft ??= ctx.indent;
    }
    if (ctx.indent && props.indLeft === undefined && !props.numPr) props.indLeft = ctx.indent;
    if (this.pendingPageBreak) {
      props.pageBreakBefore = true;
      this.pendingPageBreak = false;
    }
    p = { props, pieces: [], pre: ctx.pre, spaceBefore: true, bookmarks: [] };
    this.frame.para = p;
    return p;
  }

  /** Closes the open paragraph (if any) into the current frame. */
  flush(): void {
    const p = this.frame.para;
    if (!p) return;
    this.frame.para = null;
    // Trailing collapsible white space, and the newline that ends a <pre>, are not content (further blank
    // lines at the end of a <pre> are).
    const pieces = p.pieces;
    if (p.pre) {
      const last = pieces[pieces.length - 1];
      if (last && last.kind === 'raw' && last.xml === '<w:br/>') pieces.pop();
    } else {
      for (let i = pieces.length - 1; i >= 0; i--) {
        const piece = pieces[i]!;
        if (piece.kind !== 'text') break;
        piece.text = trimCollapsibleEnd(piece.text);
        if (piece.text) break;
        pieces.pop();
      }
    }
    let bm = '';
    let bmEnd = '';
    for (const name of p.bookmarks) {
      const id = this.nextBookmark++;
      bm += `<w:bookmarkStart w:id="${id}" w:name="${xmlAttr(name)}"/>`;
      bmEnd += `<w:bookmarkEnd w:id="${id}"/>`;
    }
    // The paragraph's parts are collected and joined once: `+=` and template literals make a cons string per
    // concatenation, a tree the final join of the body then walks node by node (measured: the body's join
    // was a tenth of the 1 MB Markdown walk); a joined paragraph is one flat string.
    const out: string[] = ['<w:p>', pPrXml(p.props), bm];
    let openLink: string | undefined;
    let last: Piece | undefined;
    let runText = '';
    // No closure for "close the run": flush runs once per paragraph, and a closure per call is an allocation
    // (plus a keepNames wrapper under tsx) on the hottest output path.
    for (const piece of pieces) {
      if (piece.link !== openLink) {
        pushTextRun(out, last, runText);
        runText = '';
        last = undefined;
        if (openLink) out.push('</w:hyperlink>');
        if (piece.link) out.push('<w:hyperlink ', piece.link, '>');
        openLink = piece.link;
      }
      if (piece.kind === 'text') {
        if (last && last.kind === 'text' && last.rPr === piece.rPr) runText += piece.text;
        else {
          pushTextRun(out, last, runText);
          runText = piece.text;
        }
        last = piece;
      } else if (piece.kind === 'math') {
        pushTextRun(out, last, runText);
        runText = '';
        out.push(piece.xml);
        last = piece;
      } else {
        pushTextRun(out, last, runText);
        runText = '';
        out.push('<w:r>', piece.rPr, piece.xml, '</w:r>');
        last = piece;
      }
    }
    pushTextRun(out, last, runText);
    if (openLink) out.push('</w:hyperlink>');
    out.push(bmEnd, '</w:p>');
    this.frame.blocks.push(out.join(''));
    this.frame.lastIsTable = false;
  }

  /** Text in the context's formatting: preformatted (lines and tabs kept) or collapsed as HTML does. */
  addText(text: string, ctx: Ctx): void {
    if (ctx.pre) {
      const p = this.ensurePara(ctx);
      if (!p.pieces.length && text.startsWith('\n')) text = text.slice(1);
      const rPr = rPrXml(ctx.run);
      const lines = text.replace(/\r\n?/g, '\n').split('\n');
      lines.forEach((line, i) => {
        if (i > 0) p.pieces.push({ kind: 'raw', xml: '<w:br/>', rPr, link: ctx.link });
        const parts = line.split('\t');
        parts.forEach((part, j) => {
          if (j > 0) p.pieces.push({ kind: 'raw', xml: '<w:tab/>', rPr, link: ctx.link });
          if (part) p.pieces.push({ kind: 'text', text: part, rPr, link: ctx.link });
        });
      });
      return;
    }
    // Most text nodes are the white space between block tags, or words that need no collapsing.
    let collapsed = !HAS_CONTENT.test(text) ? (text ? ' ' : '') : NEEDS_COLLAPSE.test(text) ? text.replace(WHITE_RUN, ' ') : text;
    if (collapsed === ' ' || collapsed === '') {
      // White space alone never opens a paragraph.
      const p = this.frame.para;
      if (!p || p.spaceBefore) return;
      p.pieces.push({ kind: 'text', text: ' ', rPr: rPrXml(ctx.run), link: ctx.link });
      p.spaceBefore = true;
      return;
    }
    const p = this.ensurePara(ctx);
    if (p.spaceBefore && collapsed.startsWith(' ')) collapsed = collapsed.slice(1);
    p.pieces.push({ kind: 'text', text: collapsed, rPr: rPrXml(ctx.run), link: ctx.link });
    p.spaceBefore = collapsed.endsWith(' ');
  }

  /** One run of non-text content (br, tab, drawing, footnote reference). */
  addRaw(xml: string, ctx: Ctx, run: RunProps = ctx.run): void {
    const p = this.ensurePara(ctx);
    p.pieces.push({ kind: 'raw', xml, rPr: rPrXml(run), link: ctx.link });
    p.spaceBefore = xml === '<w:br/>';
  }

  /** An equation (m:oMath or m:oMathPara, wordml/math.ts) in the paragraph. */
  addMath(xml: string, ctx: Ctx): void {
    const p = this.ensurePara(ctx);
    p.pieces.push({ kind: 'math', xml, rPr: '', link: ctx.link });
    p.spaceBefore = false;
  }

  /** A checkbox (☒/☐) or radio button (◉/○) as text; the space after it separates it from what follows. */
  addCheckbox(checked: boolean, ctx: Ctx, radio = false): void {
    this.addText(radio ? (checked ? '◉ ' : '○ ') : checked ? '☒ ' : '☐ ', notPre(ctx));
    const p = this.frame.para;
    if (p) p.spaceBefore = true;
  }

  /** A horizontal rule (closes the open paragraph); as a list item's first content, it carries the number. */
  horizontalRule(ctx: Ctx): void {
    this.flush();
    const props = horizontalRuleProps();
    if (ctx.item?.numPr) {
      props.numPr = ctx.item.numPr;
      ctx.item.numPr = undefined;
    } else if (ctx.indent) props.indLeft = ctx.indent;
    if (this.pendingPageBreak) {
      props.pageBreakBefore = true;
      this.pendingPageBreak = false;
    }
    this.frame.blocks.push(`<w:p>${pPrXml(props)}</w:p>`);
    this.frame.lastIsTable = false;
  }

  /** Starts a story of its own (a table cell, a footnote); endFrame returns its blocks and restores this one. */
  beginFrame(): Frame {
    const saved = this.frame;
    this.frame = { blocks: [], para: null, lastIsTable: false };
    return saved;
  }

  endFrame(saved: Frame): Frame {
    const done = this.frame;
    this.frame = saved;
    return done;
  }

  /** A table's XML as the next block. A pending page break goes on an empty paragraph before it. */
  addTable(xml: string): void {
    if (this.pendingPageBreak) {
      this.frame.blocks.push('<w:p><w:pPr><w:pageBreakBefore/><w:spacing w:before="0" w:after="0"/></w:pPr></w:p>');
      this.frame.lastIsTable = false;
      this.pendingPageBreak = false;
    }
    this.frame.blocks.push(xml);
    this.frame.lastIsTable = true;
  }

  /** A footnote made of what `write` writes in a fresh frame; the reference goes where the walk is. */
  footnote(ctx: Ctx, write: () => void): void {
    const id = this.footnotes.reserve();
    const saved = this.beginFrame();
    write();
    this.flush();
    const { blocks } = this.endFrame(saved);
    this.footnotes.add(id, blocks);
    this.addRaw(footnoteReferenceXml(id), ctx, FOOTNOTE_REFERENCE_RUN);
  }
}

const FOOTNOTE_REFERENCE_RUN: RunProps = { rStyle: 'FootnoteReference' };
