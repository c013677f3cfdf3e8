/**
 * Run-level WordprocessingML shared by every kind of fill: the runs a text value becomes, run properties
 * (copied from the field, cleaned of Word's placeholder style, kept in the schema order src/docx/wordml defines,
 * merged under converted HTML), and replacing a paragraph's content while keeping its structural markers.
 */
import { RPR_ORDER } from '../docx/wordml/run-props.js';
import {
  appendChild,
  attr,
  child,
  childElements,
  clone,
  el,
  escapeText,
  serializeNodes,
  setChildren,
  type XElement,
  type XNode,
} from '../docx/xml.js';

/** What a value becomes: inline runs, and for values that can stand alone, block content. */
export interface Produced {
  inline: XNode[];
  /** Paragraph/table content, used when the field stands alone in a block position. */
  block?: XNode[];
}

/** Markers that belong to the document structure, not to a field's text: kept when content is replaced. */
const KEEP_IN_PARAGRAPH = new Set([
  'w:pPr',
  'w:bookmarkStart',
  'w:bookmarkEnd',
  'w:commentRangeStart',
  'w:commentRangeEnd',
  'w:permStart',
  'w:permEnd',
]);

export function isPlaceholderStyle(e: XElement): boolean {
  return e.name === 'w:rStyle' && /^placeholder\s*text$/i.test(attr(e, 'w:val') ?? '');
}

export function withoutPlaceholderStyle(rPr: XElement): XElement {
  const copy = clone(rPr);
  copy.children = copy.children.filter((c) => !(c.type === 'el' && (isPlaceholderStyle(c) || c.name === 'w:rPrChange')));
  return copy;
}

/** A drawing run keeps position-neutral formatting only (no vertical alignment or hidden text). */
export function runPropsForDrawing(rPr: XElement): string {
  const copy = clone(rPr);
  copy.children = copy.children.filter((c) => !(c.type === 'el' && ['w:vertAlign', 'w:vanish', 'w:position', 'w:rPrChange'].includes(c.name)));
  return copy.children.length ? serializeNodes([copy]) : '';
}

/** Runs for a text value: `\n` becomes a line break and `\t` a tab, all in the given formatting. */
export function textRuns(text: string, rPr: XElement | undefined): XNode[] {
  const r = el('w:r');
  if (rPr && rPr.children.length) appendChild(r, clone(rPr));
  // Most values (and table cells) are one plain line: no splitting needed.
  if (!/[\r\n\t]/.test(text)) {
    if (text) appendChild(r, el('w:t', [['xml:space', 'preserve']], [{ type: 'text', raw: escapeText(text) }]));
    return [r];
  }
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  lines.forEach((line, i) => {
    if (i > 0) appendChild(r, el('w:br'));
    line.split('\t').forEach((piece, j) => {
      if (j > 0) appendChild(r, el('w:tab'));
      if (piece) appendChild(r, el('w:t', [['xml:space', 'preserve']], [{ type: 'text', raw: escapeText(piece) }]));
    });
  });
  return [r];
}

const RPR_RANK = new Map(RPR_ORDER.map((n, i) => [n, i]));

export function sortRunProps(rPr: XElement): void {
  const rank = (c: XNode) => (c.type === 'el' ? (RPR_RANK.get(c.name) ?? RPR_ORDER.length - 1.5) : RPR_ORDER.length);
  rPr.children = rPr.children
    .map((c, i) => ({ c, i }))
    .sort((a, b) => rank(a.c) - rank(b.c) || a.i - b.i)
    .map((x) => x.c);
}

/** Adds the field's run formatting under a converted HTML run, where the HTML did not set that property. */
export function mergeRunProps(run: XElement, base: XElement): void {
  let rPr = child(run, 'w:rPr');
  if (!rPr) {
    rPr = clone(base);
    run.children.unshift(rPr);
    rPr.parent = run;
    return;
  }
  const have = new Set(childElements(rPr).map((c) => c.name));
  for (const c of childElements(base)) {
    if (have.has(c.name) || c.name === 'w:rStyle') continue;
    const copy = clone(c);
    copy.parent = rPr;
    rPr.children.push(copy);
  }
  sortRunProps(rPr);
}

export function replaceParagraphContent(p: XElement, nodes: XNode[]): void {
  const keep = p.children.filter((c) => c.type === 'el' && KEEP_IN_PARAGRAPH.has(c.name));
  const pPr = keep.filter((c) => c.type === 'el' && c.name === 'w:pPr');
  const markers = keep.filter((c) => !(c.type === 'el' && c.name === 'w:pPr'));
  setChildren(p, [...pPr, ...nodes, ...markers]);
}

export function needsTrailingParagraph(container: XElement, block: XNode[]): boolean {
  const last = [...block].reverse().find((c) => c.type === 'el');
  return !!last && last.type === 'el' && last.name === 'w:tbl' && container.name === 'w:tc';
}
