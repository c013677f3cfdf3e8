/**
 * HTML tables → w:tbl: cells laid on a grid honouring colspan/rowspan (gridSpan, vMerge), header rows that
 * repeat on each page, column widths from <col>/cell widths or split evenly, borders and shading from CSS and
 * the old presentational attributes. Each cell is a story of its own, written by the same walk.
 */
import type { AnyNode, Element } from 'domhandler';
import { cssColor, lengthTwips, parseBorder, type BorderSpec, type Declarations } from './css.js';
import { copyCtx, cellContext, HAS_CONTENT, type Ctx } from '../docx/wordml/writer.js';
import { copyPara } from '../docx/wordml/paragraph-props.js';
import { bookmarkName } from '../docx/wordml/bookmarks.js';
import {
  cellWidthXml,
  cellXml,
  columnChunks,
  emptyCellXml,
  emptyRowPartXml,
  MAX_SOURCE_COLUMNS,
  MAX_TABLE_COLUMNS,
  nextTableNumber,
  rowStartXml,
  TABLE_FULL_WIDTH,
  TABLE_LOOK,
  TABLE_STYLE,
  tableBordersXml,
  tableLookXml,
  TABLE_PART_SEPARATOR,
  tableStartXml,
  wideTableWarnings,
} from '../docx/wordml/table.js';
import { applyBlockCss, backgroundColor, jcOf, runFromCss } from './html-style.js';
import type { HtmlConverter } from './html-walker.js';

/**
 * An HTML <table> → a w:tbl (foster-parented content and the caption go before it). Wider than Word's 63
 * columns, it is written as several tables of at most 63 columns one below the other (table.ts); a cell
 * spanning the cut keeps its content in the first part and an empty merged cell stands for it in the next.
 */
export function table(conv: HtmlConverter, el: Element, decl: Declarations | undefined, ctx: Ctx, depth: number): void {
  const tableNo = nextTableNumber(conv.w);
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
  for (const node of fosterParented(el)) conv.walk(node, ctx, depth + 1);
  conv.w.flush();
  if (caption) {
    const capCtx = copyCtx(ctx);
    capCtx.para = copyPara(undefined);
    capCtx.para.style = 'TableCaption';
    capCtx.para.keepNext = true;
    conv.block(caption, 'caption', conv.cascade.declarations(caption), capCtx, depth + 1);
    conv.w.flush();
  }
  if (!rows.length) return;
  // Lay cells on the grid, honouring colspan/rowspan (at most MAX_SOURCE_COLUMNS columns; Word's 63 per part).
  const occupied: Array<Array<Cell | undefined>> = rows.map(() => []);
  const cells: Cell[][] = rows.map(() => []);
  let ncols = 0;
  let dropped = 0;
  // Where each row's last cell ends (rowspans from above included): a part past it gets one empty cell.
  const rowEnd = rows.map(() => 0);
  rows.forEach((tr, r) => {
    let col = 0;
    for (const child of tr.children) {
      if (child.type !== 'tag') continue;
      const td = child as Element;
      if (td.name !== 'td' && td.name !== 'th') continue;
      while (occupied[r]![col]) col++;
      if (col >= MAX_SOURCE_COLUMNS) {
        dropped++;
        continue;
      }
      let cs = clampInt(td.attribs.colspan, 1, 1, MAX_SOURCE_COLUMNS - col);
      const rsRaw = parseInt(td.attribs.rowspan ?? '1', 10);
      let rs = rsRaw === 0 ? rows.length - r : clampInt(td.attribs.rowspan, 1, 1, rows.length - r);
      if (rs < 1) rs = 1;
      if (cs < 1) cs = 1;
      const cell: Cell = { el: td, row: r, col, cs, rs, header: td.name === 'th' };
      cells[r]!.push(cell);
      for (let rr = r; rr < r + rs; rr++) {
        for (let cc = col; cc < col + cs; cc++) occupied[rr]![cc] = cell;
        rowEnd[rr] = Math.max(rowEnd[rr]!, col + cs);
      }
      col += cs;
      ncols = Math.max(ncols, col);
    }
  });
  if (ncols === 0) return;
  conv.w.warnings.push(...wideTableWarnings(tableNo, ncols, dropped));
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
  // Each part of a split table is as wide as the table (its columns share the width as a whole table's do).
  const partCols = Math.min(ncols, MAX_TABLE_COLUMNS);
  const total = Math.max(partCols * 200, Math.min(avail, tableW ?? avail));
  const colW: Array<number | undefined> = new Array(ncols).fill(undefined);
  cols.forEach((c, i) => {
    if (i < ncols) colW[i] = lengthTwips(conv.cascade.declarations(c)?.get('width') ?? widthAttr(c.attribs.width), total);
  });
  for (const row of cells) {
    for (const c of row) {
      if (c.cs !== 1 || colW[c.col] !== undefined) continue;
      const d = conv.cascade.declarations(c.el);
      const w = lengthTwips(d?.get('width') ?? widthAttr(c.el.attribs.width), total);
      if (w !== undefined && w > 0) colW[c.col] = w;
    }
  }
  /** The column widths of the part holding columns [from, to). */
  const partGrid = (from: number, to: number): number[] => {
    const part = colW.slice(from, to);
    const partTotal = Math.max((to - from) * 200, Math.min(avail, tableW ?? avail));
    const known = part.reduce<number>((s, w) => s + (w ?? 0), 0);
    const unknown = part.filter((w) => w === undefined).length;
    const rest = unknown ? Math.max(200 * unknown, partTotal - known) / unknown : 0;
    let grid = part.map((w) => Math.round(w ?? rest));
    const sum = grid.reduce((s, w) => s + w, 0);
    if (sum > partTotal && sum > 0) grid = grid.map((w) => Math.max(100, Math.round((w * partTotal) / sum)));
    return grid;
  };

  // The properties after w:tblW (which depends on the part's width), in CT_TblPr order.
  let tblPr = '';
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
  // The outer border from the table; inner lines follow it (collapse) unless cells say otherwise.
  if (tborder) tblPr += tableBordersXml(tborder);
  const tbg = cssColor(decl?.get('background-color') ?? backgroundColor(decl?.get('background')));
  if (tbg) tblPr += `<w:shd w:val="clear" w:color="auto" w:fill="${tbg}"/>`;
  // A first row that is a header row of <th> cells is bold through the table style's first-row formatting
  // (WriterOptions.styledHeaderRows); any other <th> keeps direct bold, as a <td> in <thead> stays regular.
  const styledFirst = conv.w.styledHeaderRows && isHeader[0]! && cells[0]!.length > 0 && cells[0]!.every((c) => c.header);
  tblPr += conv.w.styledHeaderRows ? tableLookXml(styledFirst) : TABLE_LOOK;

  let xml = '';
  const savedPageBreak = conv.w.pendingPageBreak;
  conv.w.pendingPageBreak = false;
  for (const [from, to] of columnChunks(ncols)) {
    const grid = partGrid(from, to);
    const gridSum = grid.reduce((s, w) => s + w, 0);
    const tblW = tableW !== undefined ? `<w:tblW w:w="${Math.round(gridSum)}" w:type="dxa"/>` : TABLE_FULL_WIDTH;
    if (from > 0) xml += TABLE_PART_SEPARATOR;
    xml += tableStartXml(TABLE_STYLE + tblW + tblPr, grid);
    for (let r = 0; r < rows.length; r++) {
      const tr = rows[r]!;
      const trDecl = conv.cascade.declarations(tr);
      xml += rowStartXml(isHeader[r]!);
      if (from > 0 && rowEnd[r]! <= from) {
        xml += emptyRowPartXml(grid) + '</w:tr>';
        continue;
      }
      let c = from;
      while (c < to) {
        const cell = occupied[r]![c];
        if (!cell) {
          xml += emptyCellXml(grid[c - from]!);
          c++;
          continue;
        }
        // From c (a cell begun in an earlier part continues here) to the cell's end or the part's.
        const span = Math.min(cell.col + cell.cs, to) - c;
        let width = 0;
        for (let k = c; k < c + span; k++) width += grid[k - from]!;
        let tcPr = cellWidthXml(width);
        if (span > 1) tcPr += `<w:gridSpan w:val="${span}"/>`;
        if (cell.row !== r) {
          xml += `<w:tc><w:tcPr>${tcPr}<w:vMerge/></w:tcPr><w:p/></w:tc>`;
          c += span;
          continue;
        }
        if (cell.col < c) {
          // The rest of a cell whose content went into the previous part: an empty cell, merged down as it is.
          xml += `<w:tc><w:tcPr>${tcPr}${cell.rs > 1 ? '<w:vMerge w:val="restart"/>' : ''}</w:tcPr><w:p/></w:tc>`;
          c += span;
          continue;
        }
        if (cell.rs > 1) tcPr += '<w:vMerge w:val="restart"/>';
        const cDecl = conv.cascade.declarations(cell.el);
        tcPr += cellBorders(cDecl);
        const bg =
          cssColor(cDecl?.get('background-color') ?? backgroundColor(cDecl?.get('background')) ?? cell.el.attribs.bgcolor) ??
          cssColor(trDecl?.get('background-color') ?? backgroundColor(trDecl?.get('background')) ?? tr.attribs.bgcolor);
        if (bg) tcPr += `<w:shd w:val="clear" w:color="auto" w:fill="${bg}"/>`;
        const va = (cDecl?.get('vertical-align') ?? cell.el.attribs.valign ?? trDecl?.get('vertical-align') ?? '').toLowerCase();
        if (va === 'middle') tcPr += '<w:vAlign w:val="center"/>';
        else if (va === 'bottom') tcPr += '<w:vAlign w:val="bottom"/>';
        // Cell content in a frame of its own.
        const saved = conv.w.beginFrame();
        const cellCtx = cellContext(ctx, cell.header && !(styledFirst && r === 0), width);
        const align = (cell.el.attribs.align ?? tr.attribs.align ?? '').toLowerCase();
        if (align) cellCtx.para.jc = jcOf(align);
        const trStyled = runFromCss(cellCtx.run, trDecl, cellCtx);
        cellCtx.run = trStyled.run;
        const trTa = trDecl?.get('text-align');
        if (trTa) cellCtx.para.jc = jcOf(trTa);
        if (cell.header && !cellCtx.para.jc) cellCtx.para.jc = undefined;
        applyBlockCss(cellCtx, stripBoxProps(cDecl), cellCtx);
        cellCtx.para.indLeft = undefined;
        cellCtx.indent = 0;
        if (cell.el.attribs.id) conv.w.ensurePara(cellCtx).bookmarks.push(bookmarkName(cell.el.attribs.id));
        conv.walkChildren(cell.el, cellCtx, depth + 2);
        conv.w.flush();
        const { blocks, lastIsTable } = conv.w.endFrame(saved);
        xml += cellXml(tcPr, blocks, lastIsTable);
        c += span;
      }
      xml += '</w:tr>';
    }
    xml += '</w:tbl>';
  }
  conv.w.pendingPageBreak = savedPageBreak;
  conv.w.addTable(xml);
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
