/**
 * The HTML → WordprocessingML engine. htmlparser2 builds the DOM the way a browser would tolerate it, the
 * cascade (css.ts) resolves <style> and style="" declarations, and one walk over the DOM writes OOXML strings
 * directly: paragraphs and runs, lists (one w:num per list so every list restarts), tables (gridSpan/vMerge,
 * repeating header rows), hyperlinks (relationships), footnotes, and data-URI images (EMU from pixels).
 *
 * Bounds: element nesting deeper than MAX_DEPTH is flattened to its text (iteratively), images are decoded
 * only when the data URI and the pixel count stay under budget, and nothing is ever fetched.
 */
import { parseDocument } from 'htmlparser2';
import type { AnyNode, Document, Element } from 'domhandler';
import { imageSize } from 'image-size';
import { Cascade, boxSides, cssColor, fontSizePt, lengthTwips, parseBorder, type BorderSpec, type Declarations } from './css.js';
import { xmlAttr, xmlText } from './text.js';
import { boundHtmlDepth } from './depth-guard.js';
import { FolioError } from '../errors.js';
import type { GfmExtension } from './markdown.js';

export interface ConvertOptions {
  pageSize?: 'A4' | 'Letter';
  /** Markdown input only: the GFM extensions to enable (default all; [] is strict CommonMark). */
  markdownExtensions?: readonly GfmExtension[];
}

/** Everything a package (or a host document, for a fragment) needs to hold the converted body. */
export interface ConvertedBody {
  bodyXml: string;
  relationships: Relationship[];
  media: MediaPart[];
  /** <w:abstractNum> elements, then <w:num> elements, for numbering.xml. */
  abstractNums: string[];
  nums: string[];
  /** <w:footnote> elements (user footnotes only; the separators are the package's). */
  footnotes: string[];
  title?: string;
  warnings: string[];
}

export interface Relationship {
  id: string;
  type: 'hyperlink' | 'image';
  target: string;
  external: boolean;
}

export interface MediaPart {
  /** Path inside the package, e.g. word/media/image1.png. */
  path: string;
  bytes: Uint8Array;
  contentType: string;
  extension: string;
}

export interface FragmentOptions {
  /** Text width in twips for scaling images and sizing tables (default: A4 with 1" margins). */
  textWidthTwips?: number;
  /** Relationship id prefix; ids are `${relIdPrefix}${n}` (default 'rIdC'). Must not collide in the host. */
  relIdPrefix?: string;
  /** First w:abstractNumId / w:numId to allocate (default 1). */
  firstNumId?: number;
  /** First footnote id (default 1). */
  firstFootnoteId?: number;
  /** First wp:docPr id for drawings (default 1). */
  firstDrawingId?: number;
  /** Media file name prefix inside word/media/ (default 'image'). */
  mediaPrefix?: string;
}

export type WordFragment = ConvertedBody;

const MAX_DEPTH = 160;
/** Elements per document (HTML, or the DOM built from Markdown). */
const MAX_ELEMENTS = 1_000_000;
const START_TAG = /<[a-zA-Z]/g;

function tooManyElements(): FolioError {
  return new FolioError('UNPROCESSABLE_DOCUMENT', `The document has more than ${MAX_ELEMENTS.toLocaleString('en')} elements, too many to convert`);
}
/** Word footnotes per document, and the XML of all of them (each reference copies its note). */
const MAX_FOOTNOTES = 100_000;
const MAX_FOOTNOTE_CHARS = 64_000_000;
const MAX_DATA_URI_CHARS = 20 * 1024 * 1024;
const MAX_IMAGE_PIXELS = 50_000_000;
/** Images embedded per document, and the data-URI text decoded for them in all. */
const MAX_IMAGES = 2000;
const MAX_DATA_URI_TOTAL_CHARS = 64 * 1024 * 1024;
const EMU_PER_PX = 9525;
const PAGE = {
  A4: { w: 11906, h: 16838 },
  Letter: { w: 12240, h: 15840 },
} as const;
export const PAGE_MARGIN = 1440;

export function pageGeometry(size: 'A4' | 'Letter' = 'A4') {
  const p = PAGE[size];
  return { width: p.w, height: p.h, margin: PAGE_MARGIN, textWidth: p.w - 2 * PAGE_MARGIN };
}

// ---- run and paragraph properties -----------------------------------------------------------------------

interface RunProps {
  rStyle?: string;
  font?: string;
  bold?: boolean;
  italic?: boolean;
  caps?: boolean;
  smallCaps?: boolean;
  strike?: boolean;
  color?: string;
  sizePt?: number;
  highlight?: string;
  underline?: boolean;
  shade?: string;
  vertAlign?: 'superscript' | 'subscript';
  rtl?: boolean;
  /** The <w:rPr> XML, computed once: a RunProps is never changed after its first use. */
  xml?: string;
  /** Runs derived from this one by a single property (`runWith`), so each element reuses them. */
  derived?: Map<string, RunProps>;
}

/**
 * A copy of a run's properties with every field present: all RunProps share one object shape, which keeps
 * the walk's property reads monomorphic (spread copies of objects with different optional fields do not).
 */
function copyRun(r: RunProps | undefined): RunProps {
  if (!r) {
    return {
      rStyle: undefined,
      font: undefined,
      bold: undefined,
      italic: undefined,
      caps: undefined,
      smallCaps: undefined,
      strike: undefined,
      color: undefined,
      sizePt: undefined,
      highlight: undefined,
      underline: undefined,
      shade: undefined,
      vertAlign: undefined,
      rtl: undefined,
      xml: undefined,
      derived: undefined,
    };
  }
  return {
    rStyle: r.rStyle,
    font: r.font,
    bold: r.bold,
    italic: r.italic,
    caps: r.caps,
    smallCaps: r.smallCaps,
    strike: r.strike,
    color: r.color,
    sizePt: r.sizePt,
    highlight: r.highlight,
    underline: r.underline,
    shade: r.shade,
    vertAlign: r.vertAlign,
    rtl: r.rtl,
    xml: undefined,
    derived: undefined,
  };
}

type RunField = Exclude<keyof RunProps, 'xml' | 'derived'>;

/** `run` with one property changed, shared between all elements that derive the same way from `run`. */
function runWith<K extends RunField>(run: RunProps, key: K, value: RunProps[K]): RunProps {
  const id = `${key}\u0000${String(value)}`;
  let derived = run.derived?.get(id);
  if (!derived) {
    derived = copyRun(run);
    derived[key] = value;
    (run.derived ??= new Map()).set(id, derived);
  }
  return derived;
}

/** Run properties XML, memoised per (immutable) RunProps object: text runs share their context's props. */
function rPrXml(p: RunProps): string {
  return (p.xml ??= buildRPr(p));
}

function buildRPr(p: RunProps): string {
  let s = '';
  if (p.rStyle) s += `<w:rStyle w:val="${p.rStyle}"/>`;
  if (p.font) {
    const f = xmlAttr(p.font);
    s += `<w:rFonts w:ascii="${f}" w:hAnsi="${f}" w:cs="${f}" w:eastAsia="${f}"/>`;
  }
  if (p.bold) s += '<w:b/><w:bCs/>';
  if (p.italic) s += '<w:i/><w:iCs/>';
  if (p.caps) s += '<w:caps/>';
  if (p.smallCaps) s += '<w:smallCaps/>';
  if (p.strike) s += '<w:strike/>';
  if (p.color) s += `<w:color w:val="${p.color}"/>`;
  if (p.sizePt) {
    const hp = Math.max(2, Math.min(3276, Math.round(p.sizePt * 2)));
    s += `<w:sz w:val="${hp}"/><w:szCs w:val="${hp}"/>`;
  }
  if (p.highlight) s += `<w:highlight w:val="${p.highlight}"/>`;
  if (p.underline) s += '<w:u w:val="single"/>';
  if (p.shade) s += `<w:shd w:val="clear" w:color="auto" w:fill="${p.shade}"/>`;
  if (p.vertAlign) s += `<w:vertAlign w:val="${p.vertAlign}"/>`;
  if (p.rtl) s += '<w:rtl/>';
  return s ? `<w:rPr>${s}</w:rPr>` : '';
}

interface ParaProps {
  style?: string;
  keepNext?: boolean;
  pageBreakBefore?: boolean;
  numPr?: { numId: number; ilvl: number };
  borderBottom?: BorderSpec;
  borderAll?: BorderSpec;
  shade?: string;
  bidi?: boolean;
  before?: number;
  after?: number;
  line?: number; // 240ths of a line (auto) when lineRule auto
  lineExact?: number; // twips
  indLeft?: number;
  indRight?: number;
  indFirst?: number;
  jc?: string;
  outlineLvl?: number;
}

/** A copy of paragraph properties with every field present (one object shape; see copyRun). */
function copyPara(p: ParaProps | undefined): ParaProps {
  if (!p) {
    return {
      style: undefined,
      keepNext: undefined,
      pageBreakBefore: undefined,
      numPr: undefined,
      borderBottom: undefined,
      borderAll: undefined,
      shade: undefined,
      bidi: undefined,
      before: undefined,
      after: undefined,
      line: undefined,
      lineExact: undefined,
      indLeft: undefined,
      indRight: undefined,
      indFirst: undefined,
      jc: undefined,
      outlineLvl: undefined,
    };
  }
  return {
    style: p.style,
    keepNext: p.keepNext,
    pageBreakBefore: p.pageBreakBefore,
    numPr: p.numPr,
    borderBottom: p.borderBottom,
    borderAll: p.borderAll,
    shade: p.shade,
    bidi: p.bidi,
    before: p.before,
    after: p.after,
    line: p.line,
    lineExact: p.lineExact,
    indLeft: p.indLeft,
    indRight: p.indRight,
    indFirst: p.indFirst,
    jc: p.jc,
    outlineLvl: p.outlineLvl,
  };
}

function pPrXml(p: ParaProps): string {
  let s = '';
  if (p.style) s += `<w:pStyle w:val="${p.style}"/>`;
  if (p.keepNext) s += '<w:keepNext/>';
  if (p.pageBreakBefore) s += '<w:pageBreakBefore/>';
  if (p.numPr) s += `<w:numPr><w:ilvl w:val="${p.numPr.ilvl}"/><w:numId w:val="${p.numPr.numId}"/></w:numPr>`;
  if (p.borderAll) {
    const b = p.borderAll;
    const one = (side: string) => `<w:${side} w:val="${b.style}" w:sz="${b.sz}" w:space="4" w:color="${b.color}"/>`;
    s += `<w:pBdr>${one('top')}${one('left')}${one('bottom')}${one('right')}</w:pBdr>`;
  } else if (p.borderBottom) {
    const b = p.borderBottom;
    s += `<w:pBdr><w:bottom w:val="${b.style}" w:sz="${b.sz}" w:space="1" w:color="${b.color}"/></w:pBdr>`;
  }
  if (p.shade) s += `<w:shd w:val="clear" w:color="auto" w:fill="${p.shade}"/>`;
  if (p.bidi) s += '<w:bidi/>';
  if (p.before !== undefined || p.after !== undefined || p.line !== undefined || p.lineExact !== undefined) {
    s += '<w:spacing';
    if (p.before !== undefined) s += ` w:before="${clampTw(p.before)}"`;
    if (p.after !== undefined) s += ` w:after="${clampTw(p.after)}"`;
    if (p.lineExact !== undefined) s += ` w:line="${clampTw(p.lineExact)}" w:lineRule="atLeast"`;
    else if (p.line !== undefined) s += ` w:line="${clampTw(p.line)}" w:lineRule="auto"`;
    s += '/>';
  }
  if (p.indLeft !== undefined || p.indRight !== undefined || p.indFirst !== undefined) {
    s += '<w:ind';
    if (p.indLeft !== undefined) s += ` w:left="${Math.round(p.indLeft)}"`;
    if (p.indRight !== undefined) s += ` w:right="${Math.round(p.indRight)}"`;
    if (p.indFirst !== undefined) s += p.indFirst >= 0 ? ` w:firstLine="${Math.round(p.indFirst)}"` : ` w:hanging="${Math.round(-p.indFirst)}"`;
    s += '/>';
  }
  if (p.jc) s += `<w:jc w:val="${p.jc}"/>`;
  if (p.outlineLvl !== undefined) s += `<w:outlineLvl w:val="${p.outlineLvl}"/>`;
  return s ? `<w:pPr>${s}</w:pPr>` : '';
}

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

function clampTw(n: number): number {
  return Math.max(0, Math.min(31680, Math.round(n)));
}

// ---- paragraph assembly ---------------------------------------------------------------------------------

type Piece = { kind: 'text'; text: string; rPr: string; link?: string } | { kind: 'raw'; xml: string; rPr: string; link?: string }; // br, tab, drawing, footnote reference

/** The `<w:r>` of text merged from consecutive text pieces with the same run properties as `last`. */
function textRunXml(last: Piece | undefined, runText: string): string {
  return last && last.kind === 'text' && runText ? `<w:r>${last.rPr}<w:t xml:space="preserve">${xmlText(runText)}</w:t></w:r>` : '';
}

interface Para {
  props: ParaProps;
  pieces: Piece[];
  pre: boolean;
  /** Whether the last emitted character was collapsible white space (HTML white-space collapsing). */
  spaceBefore: boolean;
  /** Bookmarks to open at the start of the paragraph (ids of elements). */
  bookmarks: string[];
}

interface Frame {
  blocks: string[];
  para: Para | null;
  /** Whether the last block is a table (a cell must end in a paragraph). */
  lastIsTable: boolean;
}

interface ListInfo {
  numId: number;
  depth: number;
}

interface Ctx {
  run: RunProps;
  link?: string; // hyperlink XML opening attributes (r:id="" or w:anchor="")
  para: ParaProps; // template for paragraphs created in this block
  pre: boolean;
  list?: ListInfo;
  /** The li's first paragraph still to receive the number. */
  item?: { numPr?: { numId: number; ilvl: number } };
  quoteDepth: number;
  indent: number; // accumulated left indentation of containers (twips)
  fontPt: number;
  widthTwips: number; // available width for images/tables here
}

/** A child context: a copy with every field present (one object shape; see copyRun). */
function copyCtx(c: Ctx): Ctx {
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

function notPre(c: Ctx): Ctx {
  const out = copyCtx(c);
  out.pre = false;
  return out;
}

/** A context at the top of a story (body, footnote): no inherited formatting. */
function rootCtx(para: ParaProps, fontPt: number, widthTwips: number): Ctx {
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

const HAS_CONTENT = /[^ \t\n\r\f]/;
const NEEDS_COLLAPSE = /[\t\n\r\f]| {2}/;
const WHITE_RUN = /[ \t\n\r\f]+/g;

const HEADING_STYLE: Record<string, string> = { h1: 'Heading1', h2: 'Heading2', h3: 'Heading3', h4: 'Heading4', h5: 'Heading5', h6: 'Heading6' };
const HEADING_PT: Record<string, number> = { h1: 16, h2: 14, h3: 13, h4: 12, h5: 12, h6: 12 };
const SKIP = new Set([
  'script',
  'style',
  'head',
  'template',
  'noscript',
  'iframe',
  'object',
  'embed',
  'meta',
  'link',
  'title',
  'base',
  'svg',
  'math',
  'canvas',
  'audio',
  'video',
  'source',
  'track',
  'map',
  'area',
  'select',
  'option',
  'button',
  'param',
  'dialog',
]);
const BLOCKS = new Set([
  'p',
  'div',
  'section',
  'article',
  'header',
  'footer',
  'main',
  'nav',
  'aside',
  'address',
  'center',
  'details',
  'summary',
  'form',
  'fieldset',
  'legend',
  'figure',
  'figcaption',
  'body',
  'html',
  'hgroup',
  'search',
  'dl',
  'dt',
  'dd',
  'blockquote',
  'pre',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'ul',
  'ol',
  'menu',
  'dir',
  'li',
  'table',
  'hr',
  'caption',
  'listing',
  'xmp',
  'plaintext',
]);
const HIGHLIGHTS: Record<string, string> = {
  FFFF00: 'yellow',
  '00FF00': 'green',
  '00FFFF': 'cyan',
  FF00FF: 'magenta',
  FF0000: 'red',
  '0000FF': 'blue',
};

const BULLETS = ['•', '◦', '▪', '•', '◦', '▪', '•', '◦', '▪'];
const ROMAN_LEVEL = ['decimal', 'lowerLetter', 'lowerRoman', 'decimal', 'lowerLetter', 'lowerRoman', 'decimal', 'lowerLetter', 'lowerRoman'];

function listFormat(type: string | undefined, ordered: boolean): string | undefined {
  if (!type) return undefined;
  const t = type.trim();
  switch (t) {
    case '1':
    case 'decimal':
      return 'decimal';
    case 'a':
    case 'lower-alpha':
    case 'lower-latin':
      return 'lowerLetter';
    case 'A':
    case 'upper-alpha':
    case 'upper-latin':
      return 'upperLetter';
    case 'i':
    case 'lower-roman':
      return 'lowerRoman';
    case 'I':
    case 'upper-roman':
      return 'upperRoman';
    case 'decimal-leading-zero':
      return 'decimalZero';
    case 'none':
      return 'none';
    case 'disc':
    case 'circle':
    case 'square':
      return ordered ? 'decimal' : 'bullet';
  }
  return undefined;
}

function bulletChar(style: string | undefined, level: number): string {
  if (style === 'circle') return '◦';
  if (style === 'square') return '▪';
  if (style === 'disc') return '•';
  return BULLETS[level % 9]!;
}

// ---- the converter ----------------------------------------------------------------------------------------

class HtmlConverter {
  private frame: Frame = { blocks: [], para: null, lastIsTable: false };
  private cascade!: Cascade;
  readonly relationships: Relationship[] = [];
  readonly media: MediaPart[] = [];
  readonly abstractNums: string[] = [];
  readonly nums: string[] = [];
  readonly footnotes: string[] = [];
  readonly warnings: string[] = [];
  private readonly linkRels = new Map<string, string>();
  private readonly imageRels = new Map<string, { id: string; w: number; h: number } | null>();
  private nextRel = 1;
  private nextNum: number;
  private nextFootnote: number;
  private nextDrawing: number;
  private nextMedia = 1;
  private pendingPageBreak = false;
  private footnoteTargets = new Map<string, Element>();
  private footnoteDepth = 0;
  private footnoteChars = 0;
  private decodedImageChars = 0;
  title?: string;

  constructor(private readonly opts: Required<FragmentOptions>) {
    this.nextNum = opts.firstNumId;
    this.nextFootnote = opts.firstFootnoteId;
    this.nextDrawing = opts.firstDrawingId;
  }

  /** `depthBounded`: the HTML is known to nest shallowly (generated from Markdown without raw HTML). */
  convert(html: string, depthBounded = false): string {
    if (html.charCodeAt(0) === 0xfeff) html = html.slice(1);
    // Refused before parsing: the DOM of millions of elements is what costs (time and heap), not the text.
    // Every start tag begins with "<" and a letter, so this over-counts at most (tags in comments, scripts).
    START_TAG.lastIndex = 0;
    let tags = 0;
    while (START_TAG.test(html)) if (++tags > MAX_ELEMENTS) throw tooManyElements();
    return this.convertDom(
      parseDocument(depthBounded ? html : boundHtmlDepth(html), {
        lowerCaseTags: true,
        lowerCaseAttributeNames: true,
        decodeEntities: true,
        recognizeSelfClosing: false,
      }),
    );
  }

  /** Converts a parsed document (from htmlparser2, or built from Markdown tokens by markdownToDom). */
  convertDom(doc: Document): string {
    const sheets: string[] = [];
    const footnoteContainers: Element[] = [];
    // One iterative pass: collect <style> text, the <title>, footnote sections (so references can pull them).
    const stack: AnyNode[] = [...doc.children].reverse();
    let elements = 0;
    while (stack.length) {
      const n = stack.pop()!;
      if (n.type !== 'tag' && n.type !== 'script' && n.type !== 'style') continue;
      const el = n as Element;
      if (++elements > MAX_ELEMENTS) throw tooManyElements();
      if (el.name === 'style') {
        sheets.push(textOf(el));
        continue;
      }
      if (el.name === 'title' && this.title === undefined) this.title = textOf(el).trim().slice(0, 500);
      if (el.name === 'section' || el.name === 'div' || el.name === 'aside') {
        const cls = ` ${el.attribs.class ?? ''} `; // only for these three: a string per element adds up
        if (cls.includes(' footnotes ') || el.attribs.role === 'doc-endnotes' || el.attribs.id === 'footnotes') footnoteContainers.push(el);
      }
      for (let i = el.children.length - 1; i >= 0; i--) stack.push(el.children[i]!);
    }
    for (const container of footnoteContainers) {
      const items: Element[] = [];
      collect(container, (e) => e.name === 'li' && !!e.attribs.id, items);
      for (const li of items) this.footnoteTargets.set(li.attribs.id!, li);
    }
    this.cascade = new Cascade(doc, sheets);
    this.warnings.push(...this.cascade.warnings);
    for (const container of footnoteContainers) container.attribs['data-folio-footnotes'] = '1';

    const ctx = rootCtx(copyPara(undefined), 12, this.opts.textWidthTwips);
    this.walkChildren(doc, ctx, 0);
    this.flush();
    return this.frame.blocks.join('');
  }

  // -- output primitives

  private ensurePara(ctx: Ctx): Para {
    let p = this.frame.para;
    if (p) return p;
    const props = copyPara(ctx.para);
    if (ctx.item?.numPr) {
      props.numPr = ctx.item.numPr;
      ctx.item.numPr = undefined;
    } else if (ctx.list && !props.style) {
      // A continuation paragraph of an item: aligned with the item's text, un-numbered.
      props.style = 'ListParagraph';
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
  private flush(): void {
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
    let body = '';
    let openLink: string | undefined;
    let last: Piece | undefined;
    let runText = '';
    // No closure for "close the run": flush runs once per paragraph, and a closure per call is an allocation
    // (plus a keepNames wrapper under tsx) on the hottest output path.
    for (const piece of pieces) {
      if (piece.link !== openLink) {
        body += textRunXml(last, runText);
        runText = '';
        last = undefined;
        if (openLink) body += '</w:hyperlink>';
        if (piece.link) body += `<w:hyperlink ${piece.link}>`;
        openLink = piece.link;
      }
      if (piece.kind === 'text') {
        if (last && last.kind === 'text' && last.rPr === piece.rPr) runText += piece.text;
        else {
          body += textRunXml(last, runText);
          runText = piece.text;
        }
        last = piece;
      } else {
        body += textRunXml(last, runText);
        runText = '';
        body += `<w:r>${piece.rPr}${piece.xml}</w:r>`;
        last = piece;
      }
    }
    body += textRunXml(last, runText);
    if (openLink) body += '</w:hyperlink>';
    let bm = '';
    let bmEnd = '';
    for (const name of p.bookmarks) {
      const id = this.nextBookmark++;
      bm += `<w:bookmarkStart w:id="${id}" w:name="${xmlAttr(name)}"/>`;
      bmEnd += `<w:bookmarkEnd w:id="${id}"/>`;
    }
    this.frame.blocks.push(`<w:p>${pPrXml(p.props)}${bm}${body}${bmEnd}</w:p>`);
    this.frame.lastIsTable = false;
  }
  private nextBookmark = 1;

  private addText(text: string, ctx: Ctx): void {
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

  private addRaw(xml: string, ctx: Ctx, run: RunProps = ctx.run): void {
    const p = this.ensurePara(ctx);
    p.pieces.push({ kind: 'raw', xml, rPr: rPrXml(run), link: ctx.link });
    p.spaceBefore = xml === '<w:br/>';
  }

  // -- walking

  private walkChildren(parent: Document | Element, ctx: Ctx, depth: number): void {
    for (const child of parent.children) this.walk(child, ctx, depth);
  }

  private walk(node: AnyNode, ctx: Ctx, depth: number): void {
    if (node.type === 'text') {
      this.addText(node.data, ctx);
      return;
    }
    if (node.type !== 'tag') return; // comments, directives, script/style nodes
    const el = node as Element;
    if (depth >= MAX_DEPTH) {
      // Too deep to be a real document: keep the words, drop the structure (iteratively, no recursion).
      this.addText(' ' + textOf(el) + ' ', ctx);
      return;
    }
    const tag = el.name;
    if (SKIP.has(tag)) return;
    if (el.attribs['data-folio-footnotes'] && this.footnoteTargets.size) return; // rendered at the references
    if (el.attribs.hidden !== undefined) return;
    const decl = this.cascade.declarations(el);
    if (decl) {
      const display = decl.get('display');
      if (display === 'none' || decl.get('visibility') === 'hidden') return;
    }
    const isBlock = BLOCKS.has(tag) || (decl?.get('display') === 'block' && tag !== 'img');
    if (!isBlock) {
      this.inline(el, tag, decl, ctx, depth);
      return;
    }
    this.block(el, tag, decl, ctx, depth);
  }

  private runFromCss(run: RunProps, decl: Declarations | undefined, ctx: Ctx): { run: RunProps; fontPt: number } {
    let fontPt = ctx.fontPt;
    if (!decl) return { run, fontPt };
    const r = copyRun(run);
    const fw = decl.get('font-weight');
    if (fw) r.bold = fw === 'bold' || fw === 'bolder' || parseInt(fw, 10) >= 600;
    const fs = decl.get('font-style');
    if (fs) r.italic = fs === 'italic' || fs === 'oblique';
    const td = decl.get('text-decoration-line') ?? decl.get('text-decoration');
    if (td) {
      if (td.includes('underline')) r.underline = true;
      if (td.includes('line-through')) r.strike = true;
      if (td.trim() === 'none') {
        r.underline = false;
        r.strike = false;
      }
    }
    const color = cssColor(decl.get('color'));
    if (color) r.color = color;
    const ff = decl.get('font-family');
    if (ff) {
      const first = ff
        .split(',')[0]!
        .trim()
        .replace(/^["']|["']$/g, '');
      const generic: Record<string, string> = {
        monospace: 'Courier New',
        serif: 'Times New Roman',
        'sans-serif': 'Arial',
        cursive: 'Comic Sans MS',
        'system-ui': 'Calibri',
      };
      r.font = (generic[first.toLowerCase()] ?? first).slice(0, 31);
    }
    const fsz = decl.get('font-size');
    if (fsz) {
      const pt = fontSizePt(fsz, ctx.fontPt);
      if (pt && pt > 0 && pt < 1600) {
        r.sizePt = pt;
        fontPt = pt;
      }
    }
    const tt = decl.get('text-transform');
    if (tt === 'uppercase') r.caps = true;
    if (decl.get('font-variant') === 'small-caps') r.smallCaps = true;
    const va = decl.get('vertical-align');
    if (va === 'super') r.vertAlign = 'superscript';
    else if (va === 'sub') r.vertAlign = 'subscript';
    return { run: r, fontPt };
  }

  private inline(el: Element, tag: string, decl: Declarations | undefined, ctx: Ctx, depth: number): void {
    let run: RunProps = ctx.run;
    let link = ctx.link;
    let pre = ctx.pre;
    switch (tag) {
      case 'br':
        this.addRaw('<w:br/>', ctx);
        return;
      case 'wbr':
        return;
      case 'textarea':
        // A browser shows a text area's content; a document keeps it as text.
        this.addText(textOf(el), ctx);
        return;
      case 'img':
        this.image(el, decl, ctx);
        return;
      case 'input': {
        const type = (el.attribs.type ?? '').toLowerCase();
        if (type === 'checkbox' || type === 'radio') {
          const checked = el.attribs.checked !== undefined;
          this.addText(type === 'checkbox' ? (checked ? '☒ ' : '☐ ') : checked ? '◉ ' : '○ ', notPre(ctx));
          const p = this.frame.para;
          if (p) p.spaceBefore = true;
        } else if (el.attribs.value) this.addText(el.attribs.value, ctx);
        return;
      }
      case 'strong':
      case 'b':
        run = runWith(run, 'bold', true);
        break;
      case 'em':
      case 'i':
      case 'cite':
      case 'dfn':
      case 'var':
        run = runWith(run, 'italic', true);
        break;
      case 'u':
      case 'ins':
        run = runWith(run, 'underline', true);
        break;
      case 's':
      case 'del':
      case 'strike':
        run = runWith(run, 'strike', true);
        break;
      case 'sub':
        run = runWith(run, 'vertAlign', 'subscript');
        break;
      case 'sup':
        if (this.footnoteRef(el, ctx)) return;
        run = runWith(run, 'vertAlign', 'superscript');
        break;
      case 'small':
        run = runWith(run, 'sizePt', Math.max(1, ctx.fontPt * 0.83));
        break;
      case 'big':
        run = runWith(run, 'sizePt', ctx.fontPt * 1.2);
        break;
      case 'mark':
        run = runWith(run, 'highlight', 'yellow');
        break;
      case 'code':
      case 'kbd':
      case 'samp':
      case 'tt':
        run = runWith(run, 'rStyle', 'VerbatimChar');
        break;
      case 'q':
        break;
      case 'abbr':
      case 'acronym':
      case 'span':
      case 'font':
      case 'label':
      case 'time':
      case 'data':
      case 'bdi':
      case 'bdo':
      case 'nobr':
        if (tag === 'font') {
          const c = cssColor(el.attribs.color);
          if (c) run = runWith(run, 'color', c);
          if (el.attribs.face) run = runWith(run, 'font', el.attribs.face.split(',')[0]!.trim().slice(0, 31));
        }
        break;
      case 'a': {
        if (this.footnoteRef(el, ctx)) return;
        const href = (el.attribs.href ?? '').trim();
        const target = this.linkTarget(href);
        if (target) {
          link = target;
          run = runWith(run, 'rStyle', 'Hyperlink');
        }
        if (el.attribs.id || el.attribs.name) this.ensurePara(ctx).bookmarks.push(bookmarkName(el.attribs.id ?? el.attribs.name!));
        break;
      }
      default:
        break;
    }
    if (el.attribs.dir === 'rtl') run = runWith(run, 'rtl', true);
    const styled = this.runFromCss(run, decl, ctx);
    run = styled.run;
    const bg = cssColor(decl?.get('background-color') ?? backgroundColor(decl?.get('background')));
    if (bg) {
      const hl = HIGHLIGHTS[bg];
      if (hl && tag === 'mark') run = runWith(run, 'highlight', hl);
      else run = runWith(runWith(run, 'shade', bg), 'highlight', undefined);
    }
    const ws = decl?.get('white-space');
    if (ws) pre = ws.startsWith('pre');
    if (tag === 'q') this.addText('“', ctx);
    const inner = copyCtx(ctx);
    inner.run = run;
    inner.link = link;
    inner.pre = pre;
    inner.fontPt = styled.fontPt;
    this.walkChildren(el, inner, depth + 1);
    if (tag === 'q') this.addText('”', ctx);
  }

  private linkTarget(href: string): string | undefined {
    if (!href) return undefined;
    if (href.startsWith('#')) {
      if (href.length < 2) return undefined;
      return `w:anchor="${xmlAttr(bookmarkName(decodeURIComponentSafe(href.slice(1))))}" w:history="1"`;
    }
    // Any scheme is a link target (irc:, custom app schemes …) except those that run or embed something, or
    // reach local files: javascript:, vbscript:, data:, file:.
    if (/^\s*(javascript|vbscript|data|file):/i.test(href)) return undefined;
    if (href.length > 2000) return undefined;
    let id = this.linkRels.get(href);
    if (!id) {
      id = this.relId();
      this.linkRels.set(href, id);
      this.relationships.push({ id, type: 'hyperlink', target: href, external: true });
    }
    return `r:id="${id}" w:history="1"`;
  }

  private relId(): string {
    return `${this.opts.relIdPrefix}${this.nextRel++}`;
  }

  /** A footnote reference (markdown-it-footnote or pandoc HTML): emits a Word footnote. Returns false when not one. */
  private footnoteRef(el: Element, ctx: Ctx): boolean {
    if (!this.footnoteTargets.size) return false;
    let a: Element | undefined = el;
    if (el.name === 'sup') {
      const only = el.children.filter((c) => c.type === 'tag') as Element[];
      if (only.length !== 1 || only[0]!.name !== 'a') return false;
      a = only[0];
    }
    const cls = ` ${el.attribs.class ?? ''} ${a!.attribs.class ?? ''} `;
    const isRef = cls.includes(' footnote-ref ') || a!.attribs.role === 'doc-noteref';
    const href = a!.attribs.href ?? '';
    if (!isRef || !href.startsWith('#')) return false;
    const li = this.footnoteTargets.get(decodeURIComponentSafe(href.slice(1)));
    if (!li || this.footnoteDepth > 2) return false;
    const id = this.nextFootnote++;
    // Render the note's body in a frame of its own, then come back to the paragraph we are in.
    const saved = this.frame;
    this.frame = { blocks: [], para: null, lastIsTable: false };
    this.footnoteDepth++;
    const notePara = copyPara(undefined);
    notePara.style = 'FootnoteText';
    const noteCtx = rootCtx(notePara, 10, this.opts.textWidthTwips);
    for (const child of withoutBackrefs(li)) {
      if (child.type === 'tag' && (child as Element).name === 'p') {
        this.flush();
        const pctx = copyCtx(noteCtx);
        for (const c of withoutBackrefs(child as Element)) this.walk(c, pctx, 1);
        this.flush();
      } else this.walk(child, noteCtx, 1);
    }
    this.flush();
    this.footnoteDepth--;
    const blocks = this.frame.blocks;
    this.frame = saved;
    if (!blocks.length) blocks.push('<w:p><w:pPr><w:pStyle w:val="FootnoteText"/></w:pPr></w:p>');
    const refRun = '<w:r><w:rPr><w:rStyle w:val="FootnoteReference"/></w:rPr><w:footnoteRef/></w:r><w:r><w:t xml:space="preserve"> </w:t></w:r>';
    blocks[0] = blocks[0]!.replace(/^(<w:p>(?:<w:pPr>.*?<\/w:pPr>)?)/, `$1${refRun}`);
    const note = `<w:footnote w:id="${id}">${blocks.join('')}</w:footnote>`;
    // Every reference gets a copy of its note (Word has no shared notes): many references to one long note
    // would multiply its size without bound.
    this.footnoteChars += note.length;
    if (this.footnoteChars > MAX_FOOTNOTE_CHARS || this.footnotes.length >= MAX_FOOTNOTES) {
      throw new FolioError(
        'UNPROCESSABLE_DOCUMENT',
        `The document's footnotes are too large to convert (more than ${MAX_FOOTNOTES.toLocaleString('en')} footnote references or ${MAX_FOOTNOTE_CHARS / 1_000_000} MB of footnote text)`,
      );
    }
    this.footnotes.push(note);
    this.addRaw(`<w:footnoteReference w:id="${id}"/>`, ctx, { rStyle: 'FootnoteReference' });
    return true;
  }

  private block(el: Element, tag: string, decl: Declarations | undefined, ctx: Ctx, depth: number): void {
    if (tag === 'table') {
      this.flush();
      this.breakBefore(decl);
      this.table(el, decl, ctx, depth);
      this.breakAfter(decl);
      return;
    }
    if (tag === 'hr') {
      this.flush();
      if (this.footnoteTargets.size && ` ${el.attribs.class ?? ''} `.includes(' footnotes-sep ')) return;
      const props: ParaProps = { style: 'HorizontalRule', borderBottom: { style: 'single', sz: 6, color: 'auto' } };
      if (ctx.item?.numPr) {
        // A rule as the first thing of a list item: the item's numbered paragraph is the rule.
        props.numPr = ctx.item.numPr;
        ctx.item.numPr = undefined;
      } else if (ctx.indent) props.indLeft = ctx.indent;
      if (this.pendingPageBreak) {
        props.pageBreakBefore = true;
        this.pendingPageBreak = false;
      }
      this.frame.blocks.push(`<w:p>${pPrXml(props)}</w:p>`);
      this.frame.lastIsTable = false;
      return;
    }
    this.flush();
    this.breakBefore(decl);
    const inner = copyCtx(ctx);
    inner.para = copyPara(ctx.para);
    const para = inner.para;
    // Paragraph-level properties a block's own paragraphs start from.
    switch (tag) {
      case 'h1':
      case 'h2':
      case 'h3':
      case 'h4':
      case 'h5':
      case 'h6': {
        const cls = ` ${el.attribs.class ?? ''} `;
        para.style = tag === 'h1' && cls.includes(' title ') ? 'Title' : HEADING_STYLE[tag];
        inner.fontPt = HEADING_PT[tag]!;
        para.numPr = undefined;
        break;
      }
      case 'p':
        if (!para.style || para.style === 'ListParagraph') para.style = ctx.quoteDepth ? 'Quote' : para.style;
        break;
      case 'pre':
      case 'listing':
      case 'xmp':
      case 'plaintext':
        para.style = 'SourceCode';
        inner.pre = true;
        break;
      case 'blockquote':
        inner.quoteDepth = ctx.quoteDepth + 1;
        inner.indent = ctx.indent + 720;
        para.style = 'Quote';
        para.indLeft = inner.indent;
        break;
      case 'figcaption':
      case 'caption':
        para.style = 'Caption';
        break;
      case 'figure':
        para.jc = para.jc ?? 'center';
        break;
      case 'dt':
        para.style = 'DefinitionTerm';
        inner.run = runWith(inner.run, 'bold', true);
        break;
      case 'dd':
        para.style = 'Definition';
        inner.indent = ctx.indent + 720;
        para.indLeft = inner.indent;
        break;
      case 'ul':
      case 'ol':
      case 'menu':
      case 'dir':
        this.list(el, tag, decl, ctx, depth);
        this.breakAfter(decl);
        return;
      case 'li':
        this.listItem(el, decl, ctx, depth);
        return;
      case 'center':
        para.jc = 'center';
        break;
      case 'address':
        inner.run = runWith(inner.run, 'italic', true);
        break;
      case 'legend':
      case 'summary':
        inner.run = runWith(inner.run, 'bold', true);
        break;
    }
    const align = (el.attribs.align ?? '').toLowerCase();
    if (align === 'center' || align === 'right' || align === 'left' || align === 'justify') para.jc = jcOf(align);
    if (el.attribs.dir === 'rtl') para.bidi = true;
    this.applyBlockCss(inner, decl, ctx);
    if (el.attribs.id) {
      const p = this.ensurePara(inner);
      p.bookmarks.push(bookmarkName(el.attribs.id));
    }
    const blocksBefore = this.frame.blocks.length;
    this.walkChildren(el, inner, depth + 1);
    if (this.frame.blocks.length === blocksBefore && !this.frame.para && (inner.pre || HEADING_STYLE[tag])) {
      // An empty heading or code block is still one (Word shows an empty styled paragraph).
      this.ensurePara(inner);
    }
    this.flush();
    this.breakAfter(decl);
  }

  private applyBlockCss(inner: Ctx, decl: Declarations | undefined, ctx: Ctx): void {
    const styled = this.runFromCss(inner.run, decl, inner);
    inner.run = styled.run;
    inner.fontPt = styled.fontPt;
    if (!decl) return;
    const para = inner.para;
    const ta = decl.get('text-align');
    if (ta) para.jc = jcOf(ta);
    if (decl.get('direction') === 'rtl') para.bidi = true;
    const em = inner.fontPt * 20;
    let [mt, , mb, ml] = [decl.get('margin-top'), undefined, decl.get('margin-bottom'), decl.get('margin-left')];
    let mr = decl.get('margin-right');
    const margin = decl.get('margin');
    if (margin) {
      const s = boxSides(margin);
      mt ??= s[0];
      mr ??= s[1];
      mb ??= s[2];
      ml ??= s[3];
    }
    const top = lengthTwips(mt, 0, em);
    const bottom = lengthTwips(mb, 0, em);
    const left = lengthTwips(ml, ctx.widthTwips, em);
    const right = lengthTwips(mr, ctx.widthTwips, em);
    const padLeft = lengthTwips(decl.get('padding-left'), ctx.widthTwips, em);
    if (top !== undefined) para.before = top;
    if (bottom !== undefined) para.after = bottom;
    if (left !== undefined || padLeft !== undefined) {
      inner.indent = Math.max(0, (inner.indent ?? 0) + (left ?? 0) + (padLeft ?? 0));
      para.indLeft = inner.indent;
    }
    if (right !== undefined && right > 0) para.indRight = right;
    const ti = lengthTwips(decl.get('text-indent'), ctx.widthTwips, em);
    if (ti !== undefined) para.indFirst = ti;
    const lh = decl.get('line-height');
    if (lh && lh !== 'normal') {
      if (/^\d*\.?\d+$/.test(lh.trim())) para.line = parseFloat(lh) * 240;
      else if (lh.trim().endsWith('%')) para.line = (parseFloat(lh) / 100) * 240;
      else {
        const tw = lengthTwips(lh, 0, em);
        if (tw) para.lineExact = tw;
      }
    }
    const bg = cssColor(decl.get('background-color') ?? backgroundColor(decl.get('background')));
    if (bg) para.shade = bg;
    const border = parseBorder(decl.get('border'));
    if (border && border.style !== 'nil') para.borderAll = border;
    const bb = parseBorder(decl.get('border-bottom'));
    if (bb && bb.style !== 'nil') para.borderBottom = bb;
  }

  private breakBefore(decl: Declarations | undefined): void {
    const v = decl?.get('page-break-before') ?? decl?.get('break-before');
    if (v === 'always' || v === 'page' || v === 'left' || v === 'right') this.pendingPageBreak = true;
  }

  private breakAfter(decl: Declarations | undefined): void {
    const v = decl?.get('page-break-after') ?? decl?.get('break-after');
    if (v === 'always' || v === 'page' || v === 'left' || v === 'right') this.pendingPageBreak = true;
  }

  // -- lists

  private list(el: Element, tag: string, decl: Declarations | undefined, ctx: Ctx, depth: number): void {
    const ordered = tag === 'ol';
    const level = ctx.list ? Math.min(8, ctx.list.depth + 1) : 0;
    const cssType = decl?.get('list-style-type') ?? decl?.get('list-style')?.split(/\s+/)[0];
    let fmt = listFormat(el.attribs.type, ordered) ?? listFormat(cssType, ordered) ?? (ordered ? 'decimal' : 'bullet');
    if (!ordered && fmt !== 'bullet' && fmt !== 'none' && !cssType) fmt = 'bullet';
    let start = 1;
    if (ordered && el.attribs.start !== undefined) {
      const n = parseInt(el.attribs.start, 10);
      if (Number.isFinite(n)) start = Math.max(0, Math.min(32767, n));
    }
    const reversed = false;
    void reversed;
    const baseIndent = Math.round(ctx.indent);
    // Lists of the same look share one w:abstractNum. Bullet lists also share their w:num (nothing to
    // restart); every ordered list gets a w:num of its own with a startOverride, so each one restarts.
    const signature = `${ordered ? 'o' : 'u'}|${fmt}|${level}|${cssType ?? ''}|${baseIndent}|${start}`;
    let abstractId = this.abstractBySignature.get(signature);
    if (abstractId === undefined) {
      abstractId = this.nextNum++;
      this.abstractBySignature.set(signature, abstractId);
      let lvls = '';
      for (let i = 0; i < 9; i++) {
        const left = baseIndent + 720 * (i - level + 1);
        const lvlFmt = i === level ? fmt : ordered ? ROMAN_LEVEL[i]! : 'bullet';
        const text = lvlFmt === 'bullet' ? bulletChar(i === level ? cssType : undefined, i) : lvlFmt === 'none' ? '' : `%${i + 1}.`;
        lvls +=
          `<w:lvl w:ilvl="${i}"><w:start w:val="${i === level ? start : 1}"/><w:numFmt w:val="${lvlFmt}"/>` +
          `<w:lvlText w:val="${xmlAttr(text)}"/><w:lvlJc w:val="left"/>` +
          `<w:pPr><w:ind w:left="${Math.max(360, left)}" w:hanging="360"/></w:pPr></w:lvl>`;
      }
      this.abstractNums.push(`<w:abstractNum w:abstractNumId="${abstractId}"><w:multiLevelType w:val="multilevel"/>${lvls}</w:abstractNum>`);
    }
    let numId: number | undefined = ordered ? undefined : this.bulletNumBySignature.get(signature);
    if (numId === undefined) {
      numId = this.nextNum++;
      this.numToAbstract.set(numId, abstractId);
      if (!ordered) this.bulletNumBySignature.set(signature, numId);
      this.nums.push(
        ordered
          ? `<w:num w:numId="${numId}"><w:abstractNumId w:val="${abstractId}"/><w:lvlOverride w:ilvl="${level}"><w:startOverride w:val="${start}"/></w:lvlOverride></w:num>`
          : `<w:num w:numId="${numId}"><w:abstractNumId w:val="${abstractId}"/></w:num>`,
      );
    }
    const inner = copyCtx(ctx);
    inner.para = copyPara(ctx.para);
    inner.para.style = undefined;
    inner.para.numPr = undefined;
    inner.list = { numId, depth: level };
    inner.item = undefined;
    inner.para.indLeft = undefined;
    const styled = this.runFromCss(inner.run, decl, ctx);
    inner.run = styled.run;
    inner.fontPt = styled.fontPt;
    for (const child of el.children) {
      if (child.type === 'tag' && (child as Element).name !== 'li' && !BLOCKS.has((child as Element).name)) {
        // Stray inline content directly in a list: give it a paragraph of its own.
        this.walk(child, inner, depth + 1);
        continue;
      }
      this.walk(child, inner, depth + 1);
    }
    this.flush();
  }

  private listItem(el: Element, decl: Declarations | undefined, ctx: Ctx, depth: number): void {
    const list = ctx.list ?? { numId: this.implicitList(), depth: 0 };
    const left = ctx.indent + 720 * (1 + (ctx.list ? 0 : 0)) + (list.depth - (ctx.list?.depth ?? 0)) * 0;
    const inner = copyCtx(ctx);
    inner.list = list;
    inner.para = copyPara(ctx.para);
    inner.para.style = undefined;
    inner.para.indLeft = undefined;
    inner.item = { numPr: { numId: list.numId, ilvl: list.depth } };
    inner.indent = ctx.indent + 720 * (list.depth + 1) - (ctx.list ? 720 * list.depth : 0);
    // Continuation paragraphs of the item align with its text.
    inner.indent = this.levelIndent(ctx, list);
    inner.para.indLeft = undefined;
    void left;
    if (el.attribs.value && ctx.list) {
      // <li value="n"> restarts the count: a fresh w:num on the same definition with a start override.
      const n = parseInt(el.attribs.value, 10);
      if (Number.isFinite(n)) {
        const numId = this.nextNum++;
        const abstract = this.abstractOf(list.numId);
        this.nums.push(
          `<w:num w:numId="${numId}"><w:abstractNumId w:val="${abstract}"/><w:lvlOverride w:ilvl="${list.depth}"><w:startOverride w:val="${Math.max(0, Math.min(32767, n))}"/></w:lvlOverride></w:num>`,
        );
        this.numToAbstract.set(numId, abstract);
        list.numId = numId;
        inner.item = { numPr: { numId, ilvl: list.depth } };
      }
    }
    this.applyBlockCss(inner, decl, ctx);
    if (inner.para.indLeft !== undefined) inner.para.indLeft = undefined;
    if (el.attribs.id) this.ensurePara(inner).bookmarks.push(bookmarkName(el.attribs.id));
    const first = el.children.find((c) => c.type !== 'text' || /[^ \t\n\r\f]/.test((c as unknown as { data: string }).data));
    if (first?.type === 'tag' && ['ul', 'ol', 'menu', 'dir', 'table'].includes((first as Element).name)) {
      // A Word paragraph carries one number: the item's own (empty) numbered paragraph comes before the
      // nested list or table, rather than after it.
      this.ensurePara(inner);
      this.flush();
    }
    this.walkChildren(el, inner, depth + 1);
    if (inner.item?.numPr) {
      // An empty item still shows its number.
      this.ensurePara(inner);
    }
    this.flush();
  }

  private abstractOf(numId: number): number {
    return this.numToAbstract.get(numId) ?? numId;
  }
  private readonly abstractBySignature = new Map<string, number>();
  private readonly bulletNumBySignature = new Map<string, number>();
  private readonly numToAbstract = new Map<number, number>();

  private levelIndent(ctx: Ctx, list: ListInfo): number {
    return ctx.indent + 720 * (list.depth - (ctx.list ? list.depth : 0) + 1);
  }

  private implicitListId?: number;
  private implicitList(): number {
    if (this.implicitListId !== undefined) return this.implicitListId;
    const fake = { name: 'ul', attribs: {}, children: [] } as unknown as Element;
    const before = this.nextNum;
    const savedFrame = this.frame.para;
    this.list(fake, 'ul', undefined, rootCtx(copyPara(undefined), 12, this.opts.textWidthTwips), 0);
    this.frame.para = savedFrame;
    this.implicitListId = before;
    return before;
  }

  // -- images

  private image(el: Element, decl: Declarations | undefined, ctx: Ctx): void {
    const src = (el.attribs.src ?? '').trim();
    const alt = el.attribs.alt ?? '';
    const placeholder = () => {
      if (alt) this.addText(alt, ctx);
    };
    if (!/^data:/i.test(src)) {
      this.warnings.push(src ? 'an image with a non-data URI was dropped (never fetched)' : 'an image without a source was dropped');
      placeholder();
      return;
    }
    let entry = this.imageRels.get(src);
    if (entry === undefined) {
      entry = this.embedDataUri(src);
      this.imageRels.set(src, entry);
    }
    if (!entry) {
      placeholder();
      return;
    }
    // Size: attributes, then CSS; one given dimension keeps the aspect ratio; never wider than the text.
    const attrPx = (v: string | undefined, base: number) => {
      if (!v) return undefined;
      const t = v.trim();
      if (t.endsWith('%')) return (parseFloat(t) / 100) * base;
      const tw = lengthTwips(t);
      return tw === undefined ? undefined : tw / 15;
    };
    const maxPx = ctx.widthTwips / 15;
    let w = attrPx(decl?.get('width'), maxPx) ?? attrPx(el.attribs.width, maxPx);
    let h = attrPx(decl?.get('height'), 0) ?? attrPx(el.attribs.height, 0);
    if (h === 0) h = undefined;
    if (w && !h) h = (w * entry.h) / entry.w;
    else if (h && !w) w = (h * entry.w) / entry.h;
    w ??= entry.w;
    h ??= entry.h;
    if (w > maxPx) {
      h = (h * maxPx) / w;
      w = maxPx;
    }
    const cx = Math.max(1, Math.round(w * EMU_PER_PX));
    const cy = Math.max(1, Math.round(h * EMU_PER_PX));
    const id = this.nextDrawing++;
    const descr = xmlAttr(alt.slice(0, 2000));
    const title = el.attribs.title ? ` title="${xmlAttr(el.attribs.title.slice(0, 500))}"` : '';
    const xml =
      `<w:drawing><wp:inline distT="0" distB="0" distL="0" distR="0"><wp:extent cx="${cx}" cy="${cy}"/>` +
      `<wp:effectExtent l="0" t="0" r="0" b="0"/><wp:docPr id="${id}" name="Picture ${id}" descr="${descr}"${title}/>` +
      `<wp:cNvGraphicFramePr><a:graphicFrameLocks xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" noChangeAspect="1"/></wp:cNvGraphicFramePr>` +
      `<a:graphic xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture">` +
      `<pic:pic xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:nvPicPr><pic:cNvPr id="0" name="image${id}" descr="${descr}"/><pic:cNvPicPr/></pic:nvPicPr>` +
      `<pic:blipFill><a:blip r:embed="${entry.id}"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill>` +
      `<pic:spPr bwMode="auto"><a:xfrm><a:off x="0" y="0"/><a:ext cx="${cx}" cy="${cy}"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></pic:spPr></pic:pic>` +
      `</a:graphicData></a:graphic></wp:inline></w:drawing>`;
    this.addRaw(xml, ctx, {});
  }

  private embedDataUri(src: string): { id: string; w: number; h: number } | null {
    if (src.length > MAX_DATA_URI_CHARS) {
      this.warnings.push('an image data URI over 20 MB was dropped');
      return null;
    }
    // Decoding is bounded per document too: many distinct data URIs just under the per-image cap would
    // otherwise decode without limit.
    if (this.media.length >= MAX_IMAGES || this.decodedImageChars + src.length > MAX_DATA_URI_TOTAL_CHARS) {
      this.warnings.push(
        `images past the document's image budget (${MAX_IMAGES} images or ${MAX_DATA_URI_TOTAL_CHARS / 1024 / 1024} MB of data URIs) were dropped`,
      );
      return null;
    }
    this.decodedImageChars += src.length;
    const comma = src.indexOf(',');
    if (comma < 0) return null;
    const header = src.slice(5, comma).toLowerCase();
    if (!header.endsWith(';base64')) {
      this.warnings.push('a non-base64 image data URI was dropped');
      return null;
    }
    let bytes: Uint8Array;
    try {
      const b = Buffer.from(src.slice(comma + 1).replace(/\s+/g, ''), 'base64');
      bytes = new Uint8Array(b.buffer, b.byteOffset, b.length);
    } catch {
      return null;
    }
    const kind = sniffImage(bytes);
    if (!kind) {
      this.warnings.push('an image in a format Word cannot show (not PNG, JPEG, GIF or BMP) was dropped');
      return null;
    }
    let dims: { width?: number; height?: number };
    try {
      dims = imageSize(bytes);
    } catch {
      this.warnings.push('an unreadable image was dropped');
      return null;
    }
    const w = dims.width ?? 0;
    const h = dims.height ?? 0;
    if (w <= 0 || h <= 0 || w * h > MAX_IMAGE_PIXELS) {
      this.warnings.push('an image over the pixel budget was dropped');
      return null;
    }
    const id = this.relId();
    const name = `${this.opts.mediaPrefix}${this.nextMedia++}.${kind.ext}`;
    this.media.push({ path: `word/media/${name}`, bytes, contentType: kind.type, extension: kind.ext });
    this.relationships.push({ id, type: 'image', target: `media/${name}`, external: false });
    return { id, w, h };
  }

  // -- tables

  private table(el: Element, decl: Declarations | undefined, ctx: Ctx, depth: number): void {
    interface Cell {
      el: Element;
      row: number;
      col: number;
      cs: number;
      rs: number;
      header: boolean;
    }
    const rows: Element[] = [];
    const headRows = new Set<Element>();
    const footRows: Element[] = [];
    let caption: Element | undefined;
    const cols: Element[] = [];
    for (const child of el.children) {
      if (child.type !== 'tag') continue;
      const c = child as Element;
      if (c.name === 'tr') rows.push(c);
      else if (c.name === 'thead' || c.name === 'tbody' || c.name === 'tfoot') {
        for (const r of c.children) {
          if (r.type === 'tag' && (r as Element).name === 'tr') {
            if (c.name === 'tfoot') footRows.push(r as Element);
            else rows.push(r as Element);
            if (c.name === 'thead') headRows.add(r as Element);
          }
        }
      } else if (c.name === 'caption') caption = c;
      else if (c.name === 'colgroup') {
        for (const col of c.children) if (col.type === 'tag' && (col as Element).name === 'col') cols.push(col as Element);
      } else if (c.name === 'col') cols.push(c);
    }
    rows.push(...footRows);
    // Content misplaced in table structure (outside any cell) goes before the table, as browsers place it
    // ("foster parenting").
    for (const node of fosterParented(el)) this.walk(node, ctx, depth + 1);
    this.flush();
    if (caption) {
      const capCtx = copyCtx(ctx);
      capCtx.para = copyPara(undefined);
      capCtx.para.style = 'TableCaption';
      capCtx.para.keepNext = true;
      this.block(caption, 'caption', this.cascade.declarations(caption), capCtx, depth + 1);
      this.flush();
    }
    if (!rows.length) return;
    // Lay cells on the grid, honouring colspan/rowspan (Word: at most 63 columns).
    const MAX_COLS = 63;
    const occupied: Array<Array<Cell | undefined>> = rows.map(() => []);
    const cells: Cell[][] = rows.map(() => []);
    let ncols = 0;
    rows.forEach((tr, r) => {
      let col = 0;
      for (const child of tr.children) {
        if (child.type !== 'tag') continue;
        const td = child as Element;
        if (td.name !== 'td' && td.name !== 'th') continue;
        while (occupied[r]![col]) col++;
        if (col >= MAX_COLS) {
          this.warnings.push(`table cells past column ${MAX_COLS} (Word's limit) were dropped`);
          break;
        }
        let cs = clampInt(td.attribs.colspan, 1, 1, MAX_COLS - col);
        const rsRaw = parseInt(td.attribs.rowspan ?? '1', 10);
        let rs = rsRaw === 0 ? rows.length - r : clampInt(td.attribs.rowspan, 1, 1, rows.length - r);
        if (rs < 1) rs = 1;
        if (cs < 1) cs = 1;
        const cell: Cell = { el: td, row: r, col, cs, rs, header: td.name === 'th' };
        cells[r]!.push(cell);
        for (let rr = r; rr < r + rs; rr++) for (let cc = col; cc < col + cs; cc++) occupied[rr]![cc] = cell;
        col += cs;
        ncols = Math.max(ncols, col);
      }
    });
    if (ncols === 0) return;
    // Header rows: <thead> rows, or leading rows made only of <th>.
    const isHeader = rows.map((tr) => headRows.has(tr));
    if (!headRows.size) {
      for (let r = 0; r < rows.length; r++) {
        if (cells[r]!.length && cells[r]!.every((c) => c.header) && rows.length > 1) isHeader[r] = true;
        else break;
      }
    }
    // Width: the table's own width or the available width, split by declared column widths.
    const avail = ctx.widthTwips - (ctx.indent > 0 ? ctx.indent : 0);
    const tableW = lengthTwips(decl?.get('width') ?? widthAttr(el.attribs.width), avail);
    const total = Math.max(ncols * 200, Math.min(avail, tableW ?? avail));
    const colW: Array<number | undefined> = new Array(ncols).fill(undefined);
    cols.forEach((c, i) => {
      if (i < ncols) colW[i] = lengthTwips(this.cascade.declarations(c)?.get('width') ?? widthAttr(c.attribs.width), total);
    });
    for (const row of cells) {
      for (const c of row) {
        if (c.cs !== 1 || colW[c.col] !== undefined) continue;
        const d = this.cascade.declarations(c.el);
        const w = lengthTwips(d?.get('width') ?? widthAttr(c.el.attribs.width), total);
        if (w !== undefined && w > 0) colW[c.col] = w;
      }
    }
    const known = colW.reduce<number>((s, w) => s + (w ?? 0), 0);
    const unknown = colW.filter((w) => w === undefined).length;
    const rest = unknown ? Math.max(200 * unknown, total - known) / unknown : 0;
    let grid = colW.map((w) => Math.round(w ?? rest));
    const sum = grid.reduce((s, w) => s + w, 0);
    if (sum > total && sum > 0) grid = grid.map((w) => Math.max(100, Math.round((w * total) / sum)));
    const gridSum = grid.reduce((s, w) => s + w, 0);

    let tblPr = '<w:tblStyle w:val="TableGrid"/>';
    tblPr += tableW !== undefined ? `<w:tblW w:w="${Math.round(gridSum)}" w:type="dxa"/>` : `<w:tblW w:w="5000" w:type="pct"/>`;
    const talign = (el.attribs.align ?? '').toLowerCase();
    const marginAuto = decl?.get('margin-left') === 'auto' || /^\S+\s+auto/.test(decl?.get('margin') ?? '');
    if (talign === 'center' || marginAuto) tblPr += '<w:jc w:val="center"/>';
    else if (talign === 'right') tblPr += '<w:jc w:val="right"/>';
    if (ctx.indent > 0) tblPr += `<w:tblInd w:w="${Math.round(ctx.indent)}" w:type="dxa"/>`;
    const tborder =
      parseBorder(decl?.get('border')) ??
      (el.attribs.border !== undefined
        ? el.attribs.border === '0'
          ? { style: 'nil', sz: 4, color: 'auto' }
          : { style: 'single', sz: Math.max(4, Math.min(96, parseInt(el.attribs.border, 10) * 6 || 4)), color: 'auto' }
        : undefined);
    if (tborder) {
      const b = (side: string) => `<w:${side} w:val="${tborder.style}" w:sz="${tborder.sz}" w:space="0" w:color="${tborder.color}"/>`;
      // The outer border from the table; inner lines follow it (collapse) unless cells say otherwise.
      tblPr += `<w:tblBorders>${b('top')}${b('left')}${b('bottom')}${b('right')}${b('insideH')}${b('insideV')}</w:tblBorders>`;
    }
    const tbg = cssColor(decl?.get('background-color') ?? backgroundColor(decl?.get('background')));
    if (tbg) tblPr += `<w:shd w:val="clear" w:color="auto" w:fill="${tbg}"/>`;
    tblPr += '<w:tblLook w:val="04A0" w:firstRow="1" w:lastRow="0" w:firstColumn="0" w:lastColumn="0" w:noHBand="0" w:noVBand="1"/>';

    let xml = `<w:tbl><w:tblPr>${tblPr}</w:tblPr><w:tblGrid>${grid.map((w) => `<w:gridCol w:w="${w}"/>`).join('')}</w:tblGrid>`;
    const savedPageBreak = this.pendingPageBreak;
    this.pendingPageBreak = false;
    for (let r = 0; r < rows.length; r++) {
      const tr = rows[r]!;
      const trDecl = this.cascade.declarations(tr);
      let trPr = '';
      if (isHeader[r]) trPr += '<w:tblHeader/>';
      xml += `<w:tr>${trPr ? `<w:trPr>${trPr}</w:trPr>` : ''}`;
      let c = 0;
      while (c < ncols) {
        const cell = occupied[r]![c];
        if (!cell) {
          xml += `<w:tc><w:tcPr><w:tcW w:w="${grid[c]}" w:type="dxa"/></w:tcPr><w:p/></w:tc>`;
          c++;
          continue;
        }
        const span = Math.min(cell.cs, ncols - c);
        let width = 0;
        for (let k = c; k < c + span; k++) width += grid[k]!;
        let tcPr = `<w:tcW w:w="${width}" w:type="dxa"/>`;
        if (span > 1) tcPr += `<w:gridSpan w:val="${span}"/>`;
        if (cell.row !== r) {
          xml += `<w:tc><w:tcPr>${tcPr}<w:vMerge/></w:tcPr><w:p/></w:tc>`;
          c += span;
          continue;
        }
        if (cell.rs > 1) tcPr += '<w:vMerge w:val="restart"/>';
        const cDecl = this.cascade.declarations(cell.el);
        tcPr += cellBorders(cDecl);
        const bg =
          cssColor(cDecl?.get('background-color') ?? backgroundColor(cDecl?.get('background')) ?? cell.el.attribs.bgcolor) ??
          cssColor(trDecl?.get('background-color') ?? backgroundColor(trDecl?.get('background')) ?? tr.attribs.bgcolor);
        if (bg) tcPr += `<w:shd w:val="clear" w:color="auto" w:fill="${bg}"/>`;
        const va = (cDecl?.get('vertical-align') ?? cell.el.attribs.valign ?? trDecl?.get('vertical-align') ?? '').toLowerCase();
        if (va === 'middle') tcPr += '<w:vAlign w:val="center"/>';
        else if (va === 'bottom') tcPr += '<w:vAlign w:val="bottom"/>';
        // Cell content in a frame of its own.
        const saved = this.frame;
        this.frame = { blocks: [], para: null, lastIsTable: false };
        const cellCtx = copyCtx(ctx);
        cellCtx.run = cell.header ? runWith(ctx.run, 'bold', true) : ctx.run;
        cellCtx.para = copyPara(ctx.para);
        cellCtx.para.style = undefined;
        cellCtx.para.numPr = undefined;
        cellCtx.para.indLeft = undefined;
        cellCtx.para.keepNext = undefined;
        cellCtx.list = undefined;
        cellCtx.item = undefined;
        cellCtx.quoteDepth = 0;
        cellCtx.indent = 0;
        cellCtx.widthTwips = width;
        cellCtx.pre = false;
        const align = (cell.el.attribs.align ?? tr.attribs.align ?? '').toLowerCase();
        if (align) cellCtx.para.jc = jcOf(align);
        const trStyled = this.runFromCss(cellCtx.run, trDecl, cellCtx);
        cellCtx.run = trStyled.run;
        const trTa = trDecl?.get('text-align');
        if (trTa) cellCtx.para.jc = jcOf(trTa);
        if (cell.header && !cellCtx.para.jc) cellCtx.para.jc = undefined;
        this.applyBlockCss(cellCtx, stripBoxProps(cDecl), cellCtx);
        cellCtx.para.indLeft = undefined;
        cellCtx.indent = 0;
        if (cell.el.attribs.id) this.ensurePara(cellCtx).bookmarks.push(bookmarkName(cell.el.attribs.id));
        this.walkChildren(cell.el, cellCtx, depth + 2);
        this.flush();
        const { blocks, lastIsTable } = this.frame;
        this.frame = saved;
        if (!blocks.length || lastIsTable) blocks.push('<w:p/>');
        xml += `<w:tc><w:tcPr>${tcPr}</w:tcPr>${blocks.join('')}</w:tc>`;
        c += span;
      }
      xml += '</w:tr>';
    }
    xml += '</w:tbl>';
    this.pendingPageBreak = savedPageBreak;
    if (this.pendingPageBreak) {
      this.frame.blocks.push('<w:p><w:pPr><w:pageBreakBefore/><w:spacing w:before="0" w:after="0"/></w:pPr></w:p>');
      this.frame.lastIsTable = false;
      this.pendingPageBreak = false;
    }
    this.frame.blocks.push(xml);
    this.frame.lastIsTable = true;
  }
}

const TABLE_PARTS: Record<string, ReadonlySet<string>> = {
  table: new Set(['tr', 'thead', 'tbody', 'tfoot', 'caption', 'colgroup', 'col', 'script', 'style', 'template']),
  thead: new Set(['tr', 'script', 'style', 'template']),
  tbody: new Set(['tr', 'script', 'style', 'template']),
  tfoot: new Set(['tr', 'script', 'style', 'template']),
  tr: new Set(['td', 'th', 'script', 'style', 'template']),
};

/** Nodes inside a table's structure but outside its cells and caption, in document order. */
function fosterParented(table: Element, out: AnyNode[] = []): AnyNode[] {
  // A part's own stray nodes first, then those of its row groups and rows (recursion is bounded: table >
  // row group > row is as deep as table structure goes).
  const allowed = TABLE_PARTS[table.name]!;
  let nested: Element[] | undefined;
  for (const c of table.children) {
    if (c.type === 'text') {
      if (HAS_CONTENT.test(c.data)) out.push(c);
    } else if (c.type === 'tag') {
      if (!allowed.has(c.name)) out.push(c);
      else if (c.name !== 'td' && c.name !== 'th' && TABLE_PARTS[c.name]) (nested ??= []).push(c);
    }
  }
  if (nested) for (const part of nested) fosterParented(part, out);
  return out;
}

const BOX_PROPS = [
  'border',
  'border-bottom',
  'border-top',
  'border-left',
  'border-right',
  'background',
  'background-color',
  'margin',
  'margin-left',
  'margin-right',
  'margin-top',
  'margin-bottom',
  'padding-left',
  'width',
  'height',
];
// Declarations are shared read-only maps (see Cascade.declarations), so their stripped copies can be too.
const stripped = new WeakMap<Declarations, Declarations>();

function stripBoxProps(decl: Declarations | undefined): Declarations | undefined {
  if (!decl) return decl;
  let out = stripped.get(decl);
  if (!out) {
    out = new Map(decl);
    for (const p of BOX_PROPS) out.delete(p);
    stripped.set(decl, out);
  }
  return out;
}

function cellBorders(decl: Declarations | undefined): string {
  if (!decl) return '';
  const all = parseBorder(decl.get('border'));
  const sides: Array<[string, BorderSpec | undefined]> = [
    ['top', parseBorder(decl.get('border-top')) ?? all],
    ['left', parseBorder(decl.get('border-left')) ?? all],
    ['bottom', parseBorder(decl.get('border-bottom')) ?? all],
    ['right', parseBorder(decl.get('border-right')) ?? all],
  ];
  if (!sides.some(([, b]) => b)) return '';
  let s = '<w:tcBorders>';
  for (const [side, b] of sides) if (b) s += `<w:${side} w:val="${b.style}" w:sz="${b.sz}" w:space="0" w:color="${b.color}"/>`;
  return s + '</w:tcBorders>';
}

function widthAttr(v: string | undefined): string | undefined {
  if (!v) return undefined;
  return /^\d+(\.\d+)?$/.test(v.trim()) ? `${v.trim()}px` : v.trim();
}

function clampInt(v: string | undefined, dflt: number, min: number, max: number): number {
  const n = parseInt(v ?? '', 10);
  if (!Number.isFinite(n)) return Math.max(min, Math.min(max, dflt));
  return Math.max(min, Math.min(max, n));
}

function jcOf(align: string): string | undefined {
  switch (align.trim().toLowerCase()) {
    case 'center':
      return 'center';
    case 'right':
    case 'end':
      return 'right';
    case 'justify':
      return 'both';
    case 'left':
    case 'start':
      return 'left';
  }
  return undefined;
}

function backgroundColor(bg: string | undefined): string | undefined {
  if (!bg) return undefined;
  for (const tok of bg.split(/\s+(?![^(]*\))/)) if (cssColor(tok)) return tok;
  return undefined;
}

function isBackref(el: Element): boolean {
  const cls = ` ${el.attribs.class ?? ''} `;
  return el.name === 'a' && (cls.includes(' footnote-backref ') || cls.includes(' footnote-back ') || el.attribs.role === 'doc-backlink');
}

function bookmarkName(id: string): string {
  // Word bookmark names: ≤ 40 characters, no spaces; a stable hash suffix keeps long ids distinct.
  let name = id.replace(/[^\p{L}\p{N}_]/gu, '_');
  if (!/^\p{L}/u.test(name)) name = `_${name}`;
  if (name.length > 40) {
    let h = 0;
    for (let i = 0; i < id.length; i++) h = (h * 31 + id.charCodeAt(i)) | 0;
    name = name.slice(0, 31) + '_' + (h >>> 0).toString(16).padStart(8, '0');
  }
  return name;
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Text content without recursion (safe for 100,000-deep trees). */
function textOf(root: Element): string {
  let out = '';
  const stack: AnyNode[] = [root];
  while (stack.length) {
    const n = stack.pop()!;
    if (n.type === 'text') out += (n as unknown as { data: string }).data;
    else if ('children' in n && (n === root || ((n as Element).name !== 'script' && (n as Element).name !== 'style'))) {
      const kids = (n as Element).children;
      for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]!);
    }
  }
  return out;
}

// A note's children without its back-references: markdown-it-footnote writes one back-reference (and a
// space) per reference, so a note cited n times holds n of them, and skipping them on each of the n
// renderings was n². The spaces left between them collapse to one (notes are never preformatted here:
// the walk gives them a fresh context), so runs of white-space-only text keep their first node only.
const noteChildren = new WeakMap<Element, AnyNode[]>();

function withoutBackrefs(el: Element): AnyNode[] {
  let kids = noteChildren.get(el);
  if (!kids) {
    kids = [];
    let lastWhite = false;
    for (const c of el.children) {
      if (c.type === 'tag' && isBackref(c as Element)) continue;
      const white = c.type === 'text' && !HAS_CONTENT.test(c.data);
      if (white && lastWhite) continue;
      lastWhite = white;
      kids.push(c);
    }
    noteChildren.set(el, kids);
  }
  return kids;
}

function collect(root: Element, pred: (e: Element) => boolean, out: Element[]): void {
  const stack: AnyNode[] = [...root.children];
  while (stack.length) {
    const n = stack.pop()!;
    if (n.type !== 'tag') continue;
    const e = n as Element;
    if (pred(e)) out.push(e);
    else for (const c of e.children) stack.push(c);
  }
}

function sniffImage(b: Uint8Array): { ext: string; type: string } | undefined {
  if (b.length > 8 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47) return { ext: 'png', type: 'image/png' };
  if (b.length > 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return { ext: 'jpeg', type: 'image/jpeg' };
  if (b.length > 6 && b[0] === 0x47 && b[1] === 0x49 && b[2] === 0x46) return { ext: 'gif', type: 'image/gif' };
  if (b.length > 2 && b[0] === 0x42 && b[1] === 0x4d) return { ext: 'bmp', type: 'image/bmp' };
  return undefined;
}

function fragmentDefaults(opts: FragmentOptions): Required<FragmentOptions> {
  return {
    textWidthTwips: opts.textWidthTwips ?? pageGeometry('A4').textWidth,
    relIdPrefix: opts.relIdPrefix ?? 'rIdC',
    firstNumId: opts.firstNumId ?? 1,
    firstFootnoteId: opts.firstFootnoteId ?? 1,
    firstDrawingId: opts.firstDrawingId ?? 1,
    mediaPrefix: opts.mediaPrefix ?? 'image',
  };
}

/** HTML → body XML plus the parts it references. Used by htmlToDocx and, for insertion, by annotate. */
export function htmlToWordFragment(html: string, opts: FragmentOptions = {}): WordFragment {
  return fragment(html, opts, false);
}

function fragment(html: string, opts: FragmentOptions, depthBounded: boolean): WordFragment {
  const conv = new HtmlConverter(fragmentDefaults(opts));
  return collectFragment(conv, conv.convert(html, depthBounded));
}

function collectFragment(conv: HtmlConverter, bodyXml: string): WordFragment {
  return {
    bodyXml,
    relationships: conv.relationships,
    media: conv.media,
    abstractNums: conv.abstractNums,
    nums: conv.nums,
    footnotes: conv.footnotes,
    title: conv.title,
    warnings: [...new Set(conv.warnings)],
  };
}

/** A DOM built from Markdown (markdownToDom) → body XML plus its parts, as convertHtml. */
export function convertMarkdownDom(doc: Document, options: ConvertOptions): ConvertedBody {
  const conv = new HtmlConverter(fragmentDefaults(bodyOptions(options)));
  return collectFragment(conv, conv.convertDom(doc));
}

function bodyOptions(options: ConvertOptions): FragmentOptions {
  return { textWidthTwips: pageGeometry(options.pageSize).textWidth, relIdPrefix: 'rId', firstNumId: 1 };
}

export function convertHtml(html: string, options: ConvertOptions, depthBounded = false): ConvertedBody {
  return fragment(html, bodyOptions(options), depthBounded);
}
