/**
 * The HTML → WordprocessingML walk: one pass over an htmlparser2 DOM (parsed from HTML, or built from
 * Markdown tokens) that turns elements into the shared writer's paragraphs and runs (src/docx/wordml). The
 * cascade (css.ts) gives each element its declarations; lists, tables and footnotes have modules of their own.
 *
 * Bounds: element nesting deeper than MAX_DEPTH is flattened to its text (iteratively), a document of more
 * than MAX_ELEMENTS elements is refused before it is walked, and images are embedded only within budget.
 */
import { addTexMath } from './markdown-math-docx.js';
import { parseDocument } from 'htmlparser2';
import type { AnyNode, Document, Element } from 'domhandler';
import { Cascade, cssColor, lengthTwips, type Declarations } from './css.js';
import { boundHtmlDepth } from './depth-guard.js';
import { FolioError } from '../errors.js';
import { bookmarkName } from '../docx/wordml/bookmarks.js';
import { copyPara } from '../docx/wordml/paragraph-props.js';
import { runWith, type RunProps } from '../docx/wordml/run-props.js';
import { copyCtx, rootCtx, WordWriter, type Ctx } from '../docx/wordml/writer.js';
import { textOf } from './dom-text.js';
import { BLOCKS, codeLanguage, HEADING_PT, HEADING_STYLE, SKIP } from './html-elements.js';
import { footnoteRef, footnoteTargets, isFootnoteContainer } from './html-footnotes.js';
import { list, listItem } from './html-lists.js';
import { applyBlockCss, backgroundColor, HIGHLIGHTS, jcOf, runFromCss } from './html-style.js';
import { table } from './html-tables.js';
import { ImageStore } from './images.js';
import { ISLAND_ELEMENT, wrapIsland } from './markdown-islands.js';
import type { FragmentOptions } from './html-to-docx.js';

const MAX_DEPTH = 160;
/** Elements per document (HTML, or the DOM built from Markdown). */
export const MAX_ELEMENTS = 1_000_000;
const START_TAG = /<[a-zA-Z]/g;

export function tooManyElements(): FolioError {
  return new FolioError('UNPROCESSABLE_DOCUMENT', `The document has more than ${MAX_ELEMENTS.toLocaleString('en')} elements, too many to convert`);
}

/** Images are runs without formatting of their own. */
const NO_RUN: RunProps = {};

/**
 * Members are read by the walk's own modules (lists, tables, footnotes), which take the converter as their
 * first argument; nothing outside src/convert sees this class.
 */
export class HtmlConverter {
  readonly w: WordWriter;
  readonly images: ImageStore;
  cascade!: Cascade;
  footnoteTargets = new Map<string, Element>();
  footnoteDepth = 0;
  implicitListId?: number;
  title?: string;
  /** The key of the source islands of HTML rendered from Markdown (markdown-islands.ts); none otherwise. */
  islandKey?: string;

  constructor(readonly opts: Required<FragmentOptions>) {
    this.w = new WordWriter({
      relIdPrefix: opts.relIdPrefix,
      firstNumId: opts.firstNumId,
      firstFootnoteId: opts.firstFootnoteId,
      styledHeaderRows: opts.styledHeaderRows,
    });
    this.images = new ImageStore(this.w.relationships, this.w.warnings, opts.mediaPrefix, opts.firstDrawingId);
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
      if (isFootnoteContainer(el)) footnoteContainers.push(el);
      for (let i = el.children.length - 1; i >= 0; i--) stack.push(el.children[i]!);
    }
    this.footnoteTargets = footnoteTargets(footnoteContainers);
    this.cascade = new Cascade(doc, sheets);
    this.w.warnings.push(...this.cascade.warnings);
    for (const container of footnoteContainers) container.attribs['data-folio-footnotes'] = '1';

    const ctx = rootCtx(copyPara(undefined), 12, this.opts.textWidthTwips);
    this.walkChildren(doc, ctx, 0);
    this.w.flush();
    return this.w.frame.blocks.join('');
  }

  walkChildren(parent: Document | Element, ctx: Ctx, depth: number): void {
    for (const child of parent.children) this.walk(child, ctx, depth);
  }

  walk(node: AnyNode, ctx: Ctx, depth: number): void {
    if (node.type === 'text') {
      this.w.addText(node.data, ctx);
      return;
    }
    if (node.type !== 'tag') return; // comments, directives, script/style nodes
    const el = node as Element;
    if (depth >= MAX_DEPTH) {
      // Too deep to be a real document: keep the words, drop the structure (iteratively, no recursion).
      this.w.addText(' ' + textOf(el) + ' ', ctx);
      return;
    }
    const tag = el.name;
    if (tag === ISLAND_ELEMENT && this.islandKey && el.attribs['data-key'] === this.islandKey) return this.island(el, ctx, depth);
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

  /** A source island: its content in a block content control naming its Markdown in the islands part (model.ts SOURCE_TAG). */
  island(el: Element, ctx: Ctx, depth: number): void {
    this.w.flush();
    const from = this.w.frame.blocks.length;
    this.walkChildren(el, ctx, depth + 1);
    this.w.flush();
    wrapIsland(this.w, from, el.attribs['data-src'] ?? '');
  }

  inline(el: Element, tag: string, decl: Declarations | undefined, ctx: Ctx, depth: number): void {
    let run: RunProps = ctx.run;
    let link = ctx.link;
    let pre = ctx.pre;
    // TeX math as pandoc and Folio's Markdown renderer write it (\(…\), display \[…\]): a Word equation.
    if (tag === 'span' && /(^|\s)math(\s|$)/.test(el.attribs.class ?? '') && addTexMath(this.w, textOf(el), ctx)) return;
    switch (tag) {
      case 'br':
        this.w.addRaw('<w:br/>', ctx);
        return;
      case 'wbr':
        return;
      case 'textarea':
        // A browser shows a text area's content; a document keeps it as text.
        this.w.addText(textOf(el), ctx);
        return;
      case 'img':
        this.image(el, decl, ctx);
        return;
      case 'input': {
        const type = (el.attribs.type ?? '').toLowerCase();
        if (type === 'checkbox' || type === 'radio') {
          this.w.addCheckbox(el.attribs.checked !== undefined, ctx, type === 'radio');
        } else if (el.attribs.value) this.w.addText(el.attribs.value, ctx);
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
        if (footnoteRef(this, el, ctx)) return;
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
        if (footnoteRef(this, el, ctx)) return;
        const href = (el.attribs.href ?? '').trim();
        const target = this.w.relationships.hyperlink(href, el.attribs.title);
        if (target) {
          link = target;
          run = runWith(run, 'rStyle', 'Hyperlink');
        }
        if (el.attribs.id || el.attribs.name) this.w.ensurePara(ctx).bookmarks.push(bookmarkName(el.attribs.id ?? el.attribs.name!));
        break;
      }
      default:
        break;
    }
    if (el.attribs.dir === 'rtl') run = runWith(run, 'rtl', true);
    const styled = runFromCss(run, decl, ctx);
    run = styled.run;
    const bg = cssColor(decl?.get('background-color') ?? backgroundColor(decl?.get('background')));
    if (bg) {
      const hl = HIGHLIGHTS[bg];
      if (hl && tag === 'mark') run = runWith(run, 'highlight', hl);
      else run = runWith(runWith(run, 'shade', bg), 'highlight', undefined);
    }
    const ws = decl?.get('white-space');
    if (ws) pre = ws.startsWith('pre');
    if (tag === 'q') this.w.addText('“', ctx);
    const inner = copyCtx(ctx);
    inner.run = run;
    inner.link = link;
    inner.pre = pre;
    inner.fontPt = styled.fontPt;
    this.walkChildren(el, inner, depth + 1);
    if (tag === 'q') this.w.addText('”', ctx);
  }

  block(el: Element, tag: string, decl: Declarations | undefined, ctx: Ctx, depth: number): void {
    if (tag === 'table') {
      this.w.flush();
      this.breakBefore(decl);
      table(this, el, decl, ctx, depth);
      this.breakAfter(decl);
      return;
    }
    if (tag === 'hr') {
      this.w.flush();
      // The rule markdown-it writes before its footnote section goes with the section (written as notes).
      if (this.footnoteTargets.size && ` ${el.attribs.class ?? ''} `.includes(' footnotes-sep ')) return;
      this.w.horizontalRule(ctx);
      return;
    }
    this.w.flush();
    this.breakBefore(decl);
    const start = this.w.frame.blocks.length;
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
        list(this, el, tag, decl, ctx, depth);
        this.breakAfter(decl);
        return;
      case 'li':
        listItem(this, el, decl, ctx, depth);
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
    applyBlockCss(inner, decl, ctx);
    if (el.attribs.id) {
      const p = this.w.ensurePara(inner);
      p.bookmarks.push(bookmarkName(el.attribs.id));
    }
    const blocksBefore = this.w.frame.blocks.length;
    this.walkChildren(el, inner, depth + 1);
    if (this.w.frame.blocks.length === blocksBefore && !this.w.frame.para && (inner.pre || HEADING_STYLE[tag])) {
      // An empty heading or code block is still one (Word shows an empty styled paragraph).
      this.w.ensurePara(inner);
    }
    this.w.flush();
    if (tag === 'pre') {
      // <pre><code class="language-x"> (Markdown's fenced code): the language in a content control.
      const code = el.children.find((c): c is Element => c.type === 'tag');
      const lang = code?.name === 'code' ? /(?:^|\s)language-(\S+)/.exec(code.attribs.class ?? '')?.[1] : undefined;
      if (lang) codeLanguage(this.w, start, lang);
    }
    this.breakAfter(decl);
  }

  breakBefore(decl: Declarations | undefined): void {
    const v = decl?.get('page-break-before') ?? decl?.get('break-before');
    if (v === 'always' || v === 'page' || v === 'left' || v === 'right') this.w.pendingPageBreak = true;
  }

  breakAfter(decl: Declarations | undefined): void {
    const v = decl?.get('page-break-after') ?? decl?.get('break-after');
    if (v === 'always' || v === 'page' || v === 'left' || v === 'right') this.w.pendingPageBreak = true;
  }

  image(el: Element, decl: Declarations | undefined, ctx: Ctx): void {
    const src = (el.attribs.src ?? '').trim();
    const alt = el.attribs.alt ?? '';
    const img = this.images.image(src);
    if (!img) {
      if (alt) this.w.addText(alt, ctx);
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
    if (w && !h) h = (w * img.h) / img.w;
    else if (h && !w) w = (h * img.w) / img.h;
    this.w.addRaw(this.images.drawing(img, w ?? img.w, h ?? img.h, maxPx, alt, el.attribs.title), ctx, NO_RUN);
  }
}
