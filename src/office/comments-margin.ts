/**
 * `comments=margin`: Word comments printed in a column beside the text, the way Word's PDF export "with
 * markup" shows its balloons. Done on the lossless XML tree before LibreOfficeKit loads the document, for two
 * measured reasons: LibreOffice 7.4's in-process LOK refuses any DOCX with comments, and its PDF filter option
 * `ExportNotesInMargin` draws nothing in a headless `soffice` either (it needs the comment sidebar of a
 * visible view). So the comments become ordinary content LibreOffice lays out itself:
 *
 * - every section's page is made COLUMN_TWIPS wider and its right margin grows by the same amount, so the
 *   text area, the line breaks and the page breaks stay what they were;
 * - before the top-level block (paragraph or table) where a comment is anchored, one frame (`w:framePr`
 *   paragraphs, which Word and LibreOffice both read as a positioned frame) is placed in that new column at
 *   the block's height, holding "Author: text" of each comment anchored there, replies included, in order;
 *   comments whose frame would start before the previous one ends (by a rough height estimate) join it.
 *
 * Comments anchored outside the main part (headers, footnotes) have no place in the column and are left out,
 * like comments beyond MAX_COMMENTS; every comment part is then removed as for `comments=none` (prepare.ts).
 * What is left out is said in `warnings` (the answer's `X-Folio-Warnings`), with how many.
 */
import type { DocxPackage } from '../docx/package.js';
import {
  attr,
  child,
  childElements,
  decodeXml,
  el,
  escapeAttr,
  escapeText,
  parseXml,
  serializeXml,
  walk,
  type XElement,
  type XNode,
} from '../docx/xml.js';

/** Width of the comment column: 3 inches, about what Word's markup balloons take. */
export const COLUMN_TWIPS = 4320;
const GAP_TWIPS = 144;
/** A frame per anchor; beyond this many comments the rest are left out (LibreOffice lays frames out one by one). */
export const MAX_COMMENTS = 2000;
/** Characters of one comment's text printed; the rest is elided. */
export const MAX_COMMENT_CHARS = 4000;
/** What `comments=margin` says about the comments it could not print (`overCap` past MAX_COMMENTS, `elsewhere` anchored outside the body). */
function leftOutWarning(total: number, overCap: number, elsewhere: number): string {
  const n = (k: number) => k.toLocaleString('en-US');
  const parts: string[] = [];
  if (overCap > 0) parts.push(`${n(overCap)} past the first ${n(MAX_COMMENTS)} (the most the margin column prints)`);
  if (elsewhere > 0) parts.push(`${n(elsewhere)} not anchored in the body text (in headers or footnotes, or not anchored at all)`);
  return `comments=margin: ${n(overCap + elsewhere)} of ${n(total)} comments were left out of the PDF: ${parts.join('; ')}`;
}

/** Word's default page (Letter) and margins, for a section that does not say. */
const DEFAULT_PAGE_WIDTH = 12240;
const DEFAULT_PAGE_HEIGHT = 15840;

interface Comment {
  id: string;
  author: string;
  paragraphs: string[];
}

/** Reads the comments part: id, author and the text of each paragraph (tabs as spaces, breaks as new lines). */
function readComments(xml: string, part: string): Map<string, Comment> {
  const doc = parseXml(xml, part);
  const out = new Map<string, Comment>();
  for (const c of childElements(doc.root, 'w:comment')) {
    const id = attr(c, 'w:id');
    if (id === undefined || out.has(id)) continue;
    const paragraphs: string[] = [];
    let chars = 0;
    walk(c, (e) => {
      if (e.name !== 'w:p') return undefined;
      let text = '';
      walk(e, (x) => {
        if (x.name === 'w:t') text += textOf(x);
        else if (x.name === 'w:tab') text += ' ';
        else if (x.name === 'w:br' || x.name === 'w:cr') text += '\n';
        else if (x.name === 'w:delText' || x.name === 'w:instrText') return 'skip';
        return undefined;
      });
      if (chars < MAX_COMMENT_CHARS) {
        const room = MAX_COMMENT_CHARS - chars;
        paragraphs.push(text.length > room ? text.slice(0, room) + '…' : text);
        chars += text.length;
      }
      return 'skip';
    });
    out.set(id, { id, author: attr(c, 'w:author') ?? '', paragraphs });
  }
  return out;
}

function textOf(e: XElement): string {
  let s = '';
  for (const c of e.children) if (c.type === 'text') s += decodeXml(c.raw);
  return s;
}

function run(text: string, bold: boolean): XNode[] {
  const nodes: XNode[] = [];
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    if (i > 0) nodes.push(el('w:br'));
    if (line) nodes.push(el('w:t', [['xml:space', 'preserve']], [{ type: 'text', raw: escapeText(line) }]));
  });
  const rPr = el(
    'w:rPr',
    [],
    [...(bold ? [el('w:b')] : []), el('w:color', [['w:val', '404040']]), el('w:sz', [['w:val', '16']]), el('w:szCs', [['w:val', '16']])],
  );
  return [el('w:r', [], [rPr, ...nodes])];
}

/** The frame's paragraphs: identical frame properties make Word and LibreOffice join them into one frame. */
function frameParagraphs(comments: Comment[], x: number): XElement[] {
  const w = String(COLUMN_TWIPS - 2 * GAP_TWIPS);
  const pPr = () =>
    el(
      'w:pPr',
      [],
      [
        el('w:framePr', [
          ['w:w', w],
          ['w:hSpace', '0'],
          ['w:wrap', 'around'],
          ['w:vAnchor', 'text'],
          ['w:hAnchor', 'page'],
          ['w:x', String(x)],
          ['w:y', '0'],
        ]),
        el(
          'w:pBdr',
          [],
          ['w:top', 'w:left', 'w:bottom', 'w:right'].map((side) =>
            el(side, [
              ['w:val', 'single'],
              ['w:sz', '4'],
              ['w:space', '2'],
              ['w:color', 'B0B0B0'],
            ]),
          ),
        ),
        el('w:shd', [
          ['w:val', 'clear'],
          ['w:color', 'auto'],
          ['w:fill', 'FFF7D6'],
        ]),
        el('w:spacing', [
          ['w:before', '0'],
          ['w:after', '40'],
          ['w:line', '240'],
          ['w:lineRule', 'auto'],
        ]),
        el('w:ind', [
          ['w:left', '0'],
          ['w:right', '0'],
          ['w:firstLine', '0'],
        ]),
        el('w:jc', [['w:val', 'left']]),
      ],
    );
  const out: XElement[] = [];
  for (const c of comments) {
    const [first = '', ...rest] = c.paragraphs;
    out.push(el('w:p', [], [pPr(), ...(c.author ? run(`${c.author}: `, true) : []), ...run(first, false)]));
    for (const p of rest) out.push(el('w:p', [], [pPr(), ...run(p, false)]));
  }
  return out;
}

// Rough heights in points, to keep frames from covering each other: LibreOffice does not move a frame out
// of another's way, so comments whose frame would start before the previous frame ends join that frame
// (stacked in order, like Word's balloons). Overestimating a comment only stacks more; never hides text.
const BODY_CHARS_PER_LINE = 95;
const BODY_LINE_PT = 13;
const BODY_PARAGRAPH_GAP_PT = 4;
const TABLE_ROW_PT = 15;
const COMMENT_CHARS_PER_LINE = 42;
const COMMENT_LINE_PT = 10.5;
const COMMENT_GAP_PT = 4;

function blockHeight(block: XElement): number {
  if (block.name === 'w:tbl') return childElements(block, 'w:tr').length * TABLE_ROW_PT;
  if (block.name !== 'w:p') return 0;
  let chars = 0;
  walk(block, (e) => {
    if (e.name === 'w:t') chars += textOf(e).length;
    return undefined;
  });
  return Math.max(1, Math.ceil(chars / BODY_CHARS_PER_LINE)) * BODY_LINE_PT + BODY_PARAGRAPH_GAP_PT;
}

function frameHeight(comments: Comment[]): number {
  let lines = 0;
  for (const c of comments) {
    c.paragraphs.forEach((p, i) => {
      const chars = p.length + (i === 0 ? c.author.length + 2 : 0);
      lines += p.split('\n').length - 1 + Math.max(1, Math.ceil(chars / COMMENT_CHARS_PER_LINE));
    });
  }
  return lines * COMMENT_LINE_PT + comments.length * COMMENT_GAP_PT;
}

/** Moves the comments of a block whose frame would overlap the previous frame into that frame. */
function stackOverlapping(blocks: XElement[], byBlock: Map<XElement, Comment[]>): void {
  let y = 0;
  let open: { block: XElement; bottom: number } | undefined;
  for (const b of blocks) {
    const list = byBlock.get(b);
    if (list) {
      if (open && y < open.bottom) {
        byBlock.get(open.block)!.push(...list);
        byBlock.delete(b);
        open.bottom += frameHeight(list);
      } else open = { block: b, bottom: y + frameHeight(list) };
    }
    y += blockHeight(b);
  }
}

/** Integer attribute value, or undefined. */
function twips(e: XElement | undefined, name: string): number | undefined {
  const v = e ? attr(e, name) : undefined;
  if (v === undefined || !/^-?\d{1,7}$/.test(v)) return undefined;
  return Number(v);
}

/** Widens one section by the comment column; returns its original page width. */
function widenSection(sectPr: XElement): number {
  let pgSz = child(sectPr, 'w:pgSz');
  if (!pgSz) {
    pgSz = el('w:pgSz', [
      ['w:w', String(DEFAULT_PAGE_WIDTH)],
      ['w:h', String(DEFAULT_PAGE_HEIGHT)],
    ]);
    pgSz.parent = sectPr;
    sectPr.children.push(pgSz);
  }
  let pgMar = child(sectPr, 'w:pgMar');
  if (!pgMar) {
    pgMar = el('w:pgMar', [
      ['w:top', '1440'],
      ['w:right', '1440'],
      ['w:bottom', '1440'],
      ['w:left', '1440'],
      ['w:header', '720'],
      ['w:footer', '720'],
      ['w:gutter', '0'],
    ]);
    pgMar.parent = sectPr;
    sectPr.children.push(pgMar);
  }
  const width = twips(pgSz, 'w:w') ?? DEFAULT_PAGE_WIDTH;
  setNumber(pgSz, 'w:w', width + COLUMN_TWIPS);
  setNumber(pgMar, 'w:right', (twips(pgMar, 'w:right') ?? 1440) + COLUMN_TWIPS);
  return width;
}

function setNumber(e: XElement, name: string, value: number): void {
  const a = e.attrs.find(([k]) => k === name);
  if (a) a[1] = escapeAttr(String(value));
  else e.attrs.push([name, String(value)]);
}

/**
 * Rewrites the main document part with the comment column. Returns false (package untouched) when there is
 * nothing to place: no comments part, no main part, or no comment anchored in the body. Comments left out
 * (past MAX_COMMENTS, or anchored where the column cannot show them) are counted in `warnings`.
 */
export function placeCommentsInMargin(pkg: DocxPackage, warnings: string[] = []): boolean {
  const main = pkg.mainDocumentPart();
  const commentsPart = pkg.names().find((n) => /^word\/comments\.xml$/i.test(n));
  if (!main || !commentsPart) return false;
  const commentsXml = pkg.text(commentsPart);
  const mainXml = pkg.text(main);
  if (!commentsXml || !mainXml) return false;
  const comments = readComments(commentsXml, commentsPart);
  if (comments.size === 0) return false;
  const doc = parseXml(mainXml, main);
  const body = child(doc.root, 'w:body');
  if (!body) {
    warnings.push(leftOutWarning(comments.size, 0, comments.size));
    return false;
  }

  // Top-level blocks in order, each with the index of its section (a section ends at a paragraph carrying
  // w:pPr/w:sectPr; the body's own w:sectPr closes the last one).
  const blocks = body.children.filter((c): c is XElement => c.type === 'el' && c.name !== 'w:sectPr');
  const sectionOf = new Map<XElement, number>();
  const sections: XElement[] = [];
  for (const b of blocks) {
    sectionOf.set(b, sections.length);
    const pPr = b.name === 'w:p' ? child(b, 'w:pPr') : undefined;
    const s = pPr ? child(pPr, 'w:sectPr') : undefined;
    if (s) sections.push(s);
  }
  let finalSect = child(body, 'w:sectPr');
  if (!finalSect) {
    finalSect = el('w:sectPr');
    finalSect.parent = body;
    body.children.push(finalSect);
  }
  sections.push(finalSect);

  // The first anchor of each comment (range start, else reference), lifted to its top-level block.
  const byBlock = new Map<XElement, Comment[]>();
  const placed = new Set<string>();
  // Anchored in the body but past MAX_COMMENTS: counted for the warning, not placed.
  const overCap = new Set<string>();
  walk(body, (e) => {
    if (e.name !== 'w:commentRangeStart' && e.name !== 'w:commentReference') return undefined;
    const id = attr(e, 'w:id');
    const comment = id === undefined ? undefined : comments.get(id);
    if (!comment || placed.has(comment.id)) return undefined;
    let block: XElement | undefined = e;
    while (block && block.parent !== body) block = block.parent;
    if (!block || !sectionOf.has(block)) return undefined;
    if (placed.size >= MAX_COMMENTS) {
      overCap.add(comment.id);
      return undefined;
    }
    placed.add(comment.id);
    const list = byBlock.get(block) ?? [];
    list.push(comment);
    byBlock.set(block, list);
    return undefined;
  });
  if (placed.size < comments.size) warnings.push(leftOutWarning(comments.size, overCap.size, comments.size - placed.size - overCap.size));
  if (byBlock.size === 0) return false;
  stackOverlapping(blocks, byBlock);

  const widths = sections.map(widenSection);
  const children: XNode[] = [];
  for (const c of body.children) {
    const list = c.type === 'el' ? byBlock.get(c) : undefined;
    if (list && c.type === 'el') {
      const x = widths[sectionOf.get(c)!]! + GAP_TWIPS;
      for (const p of frameParagraphs(list, x)) {
        p.parent = body;
        children.push(p);
      }
    }
    children.push(c);
  }
  body.children = children;
  pkg.setText(main, serializeXml(doc));
  return true;
}
