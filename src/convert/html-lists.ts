/**
 * HTML lists → numbered paragraphs: <ul>/<ol> (and <menu>, <dir>) become a w:num (src/docx/wordml/numbering.ts)
 * at the list's level, each <li> a paragraph carrying the number, later paragraphs of an item continue it
 * un-numbered. Nested lists go one level deeper (Word has nine).
 */
import type { Element } from 'domhandler';
import type { Declarations } from './css.js';
import { bookmarkName } from '../docx/wordml/bookmarks.js';
import { copyPara } from '../docx/wordml/paragraph-props.js';
import { copyCtx, rootCtx, type Ctx, type ListInfo } from '../docx/wordml/writer.js';
import { applyBlockCss, runFromCss } from './html-style.js';
import type { HtmlConverter } from './html-walker.js';

/** An HTML type="" attribute or CSS list-style-type → w:numFmt. */
export function listFormat(type: string | undefined, ordered: boolean): string | undefined {
  if (!type) return undefined;
  switch (type.trim()) {
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

/** The context a list's items are walked in: its numbering at its level, no inherited paragraph style. */
export function listContext(ctx: Ctx, numId: number, level: number): Ctx {
  const inner = copyCtx(ctx);
  inner.para = copyPara(ctx.para);
  inner.para.style = undefined;
  inner.para.numPr = undefined;
  inner.list = { numId, depth: level };
  inner.item = undefined;
  inner.para.indLeft = undefined;
  return inner;
}

/** The context of one item of `list`: its first paragraph takes the number; the rest align with its text. */
export function itemContext(ctx: Ctx, list: ListInfo): Ctx {
  const inner = copyCtx(ctx);
  inner.list = list;
  inner.para = copyPara(ctx.para);
  inner.para.style = undefined;
  inner.para.indLeft = undefined;
  inner.item = { numPr: { numId: list.numId, ilvl: list.depth } };
  inner.indent = ctx.indent + 720 * (list.depth - (ctx.list ? list.depth : 0) + 1);
  return inner;
}

export function list(conv: HtmlConverter, el: Element, tag: string, decl: Declarations | undefined, ctx: Ctx, depth: number): void {
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
  const numId = conv.w.numbering.list({ ordered, format: fmt, level, bulletStyle: cssType, baseIndent: Math.round(ctx.indent), start });
  const inner = listContext(ctx, numId, level);
  const styled = runFromCss(inner.run, decl, ctx);
  inner.run = styled.run;
  inner.fontPt = styled.fontPt;
  // Stray inline content directly in a list gets a paragraph of its own, as any other child does.
  for (const child of el.children) conv.walk(child, inner, depth + 1);
  conv.w.flush();
}

export function listItem(conv: HtmlConverter, el: Element, decl: Declarations | undefined, ctx: Ctx, depth: number): void {
  const list = ctx.list ?? { numId: implicitList(conv), depth: 0 };
  const inner = itemContext(ctx, list);
  if (el.attribs.value && ctx.list) {
    // <li value="n"> restarts the count: a fresh w:num on the same definition with a start override.
    const n = parseInt(el.attribs.value, 10);
    if (Number.isFinite(n)) {
      const numId = conv.w.numbering.restart(list.numId, list.depth, n);
      list.numId = numId;
      inner.item = { numPr: { numId, ilvl: list.depth } };
    }
  }
  applyBlockCss(inner, decl, ctx);
  if (inner.para.indLeft !== undefined) inner.para.indLeft = undefined;
  if (el.attribs.id) conv.w.ensurePara(inner).bookmarks.push(bookmarkName(el.attribs.id));
  const first = el.children.find((c) => c.type !== 'text' || /[^ \t\n\r\f]/.test((c as unknown as { data: string }).data));
  if (first?.type === 'tag' && ['ul', 'ol', 'menu', 'dir', 'table'].includes((first as Element).name)) {
    // A Word paragraph carries one number: the item's own (empty) numbered paragraph comes before the
    // nested list or table, rather than after it.
    conv.w.ensurePara(inner);
    conv.w.flush();
  }
  conv.walkChildren(el, inner, depth + 1);
  if (inner.item?.numPr) {
    // An empty item still shows its number.
    conv.w.ensurePara(inner);
  }
  conv.w.flush();
}

/**
 * The list of <li>s outside any list: one bullet list for the document. (Its id is the first one the
 * numbering allocates for it, as it has always been.)
 */
function implicitList(conv: HtmlConverter): number {
  if (conv.implicitListId !== undefined) return conv.implicitListId;
  const fake = { name: 'ul', attribs: {}, children: [] } as unknown as Element;
  const before = conv.w.numbering.peek();
  const savedPara = conv.w.frame.para;
  list(conv, fake, 'ul', undefined, rootCtx(copyPara(undefined), 12, conv.opts.textWidthTwips), 0);
  conv.w.frame.para = savedPara;
  conv.implicitListId = before;
  return before;
}
