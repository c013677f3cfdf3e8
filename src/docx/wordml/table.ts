/**
 * Table markup (`<w:tbl>`): properties, the column grid, rows and cells. Layout (which cell goes where,
 * spans, widths) is the walker's; these write the XML Word expects for it. Every cell ends in a paragraph.
 */
import type { BorderSpec } from './paragraph-props.js';

/** Word's limit on table columns (it refuses to edit, and may refuse to open, a wider table). */
export const MAX_TABLE_COLUMNS = 63;
/**
 * Columns a source table keeps at most. A table wider than MAX_TABLE_COLUMNS is written as several tables of
 * at most 63 columns, one below the other (columns 1–63, 64–126, …), so nothing is lost and Word can open
 * it; LibreOffice would render 100 columns in one table, but Word is the reader a DOCX is for. Beyond this
 * many columns (16 such tables) cells are dropped, with a warning: that bounds the empty cells a ragged
 * hostile table (one very long row, many short ones) makes the writer fill in.
 */
export const MAX_SOURCE_COLUMNS = 16 * MAX_TABLE_COLUMNS;

/** The column ranges `[start, end)` of the tables a table `ncols` wide is written as. */
export function columnChunks(ncols: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let s = 0; s < ncols; s += MAX_TABLE_COLUMNS) out.push([s, Math.min(ncols, s + MAX_TABLE_COLUMNS)]);
  return out;
}

/**
 * Between two parts of a split table: Word joins tables with nothing between them into one, so an empty,
 * spaceless paragraph keeps them apart.
 */
export const TABLE_PART_SEPARATOR = '<w:p><w:pPr><w:spacing w:before="0" w:after="0"/></w:pPr></w:p>';

/**
 * What the warnings say about a table wider than Word allows (`kept` columns written, at most
 * MAX_SOURCE_COLUMNS; `dropped` cells past that): where its columns went, and what it lost.
 */
export function wideTableWarnings(tableNo: number, kept: number, dropped: number): string[] {
  const out: string[] = [];
  if (kept > MAX_TABLE_COLUMNS) {
    const parts = columnChunks(kept).map(([s, e]) => `${s + 1}-${e}`);
    out.push(
      `table ${tableNo}: ${dropped > 0 ? 'its first ' : 'its '}${kept} columns (Word allows ${MAX_TABLE_COLUMNS}) are written as ${parts.length} tables one below the other (columns ${parts.join(', ')})`,
    );
  }
  if (dropped > 0) {
    out.push(`table ${tableNo}: ${dropped} cell${dropped === 1 ? '' : 's'} past column ${MAX_SOURCE_COLUMNS} (Folio's limit) were dropped`);
  }
  return out;
}

const tableCounts = new WeakMap<object, number>();

/** The number of the next table a writer starts (1, 2, … in the order tables are begun), for warnings. */
export function nextTableNumber(writer: object): number {
  const n = (tableCounts.get(writer) ?? 0) + 1;
  tableCounts.set(writer, n);
  return n;
}

export const TABLE_STYLE = '<w:tblStyle w:val="TableGrid"/>';
export const TABLE_LOOK = tableLookXml(true);

/** `<w:tblLook>`: whether the table style's first-row formatting applies (the first row is a header row). */
export function tableLookXml(firstRow: boolean): string {
  return `<w:tblLook w:val="${firstRow ? '04A0' : '0420'}" w:firstRow="${firstRow ? 1 : 0}" w:lastRow="0" w:firstColumn="0" w:lastColumn="0" w:noHBand="0" w:noVBand="1"/>`;
}
/**
 * The table style's first-row conditional formatting: header rows (w:tblHeader, the first rows of a table)
 * are bold through the style, which TABLE_LOOK's w:firstRow="1" switches on, rather than through direct bold
 * runs, so Word, screen readers and DOCX readers see a header row rather than emphasis.
 */
export const TABLE_FIRST_ROW_STYLE = '<w:tblStylePr w:type="firstRow"><w:rPr><w:b/><w:bCs/></w:rPr></w:tblStylePr>';

/**
 * A style sheet whose TableGrid style (TABLE_STYLE) carries TABLE_FIRST_ROW_STYLE: added as the style's last
 * child (w:tblStylePr comes last in CT_Style) unless it has a first-row part already.
 */
export function withFirstRowStyle(stylesXml: string): string {
  return stylesXml.replace(/(<w:style\b[^>]*w:styleId="TableGrid"[^>]*>)([\s\S]*?)(<\/w:style>)/, (all, open: string, body: string, close: string) =>
    body.includes('w:type="firstRow"') ? all : open + body + TABLE_FIRST_ROW_STYLE + close,
  );
}
/** The full text width (a percentage in fiftieths). */
export const TABLE_FULL_WIDTH = '<w:tblW w:w="5000" w:type="pct"/>';

export function tableBordersXml(b: BorderSpec): string {
  const side = (name: string) => `<w:${name} w:val="${b.style}" w:sz="${b.sz}" w:space="0" w:color="${b.color}"/>`;
  return `<w:tblBorders>${side('top')}${side('left')}${side('bottom')}${side('right')}${side('insideH')}${side('insideV')}</w:tblBorders>`;
}

/** `<w:tbl>` opening, properties and grid; rows follow, then `</w:tbl>`. */
export function tableStartXml(tblPr: string, grid: readonly number[]): string {
  let cols = '';
  for (const w of grid) cols += `<w:gridCol w:w="${w}"/>`;
  return `<w:tbl><w:tblPr>${tblPr}</w:tblPr><w:tblGrid>${cols}</w:tblGrid>`;
}

/** `<w:tr>` opening; a header row repeats at the top of each page. */
export function rowStartXml(header: boolean): string {
  return header ? '<w:tr><w:trPr><w:tblHeader/></w:trPr>' : '<w:tr>';
}

export function cellWidthXml(twips: number): string {
  return `<w:tcW w:w="${twips}" w:type="dxa"/>`;
}

/**
 * A row's part of a split table where the row has no cell at all: one empty cell across the part, so a ragged
 * table (one long row, many short ones) costs a cell per row and part, not one per grid position.
 */
export function emptyRowPartXml(grid: readonly number[]): string {
  const width = grid.reduce((s, w) => s + w, 0);
  return `<w:tc><w:tcPr>${cellWidthXml(width)}${grid.length > 1 ? `<w:gridSpan w:val="${grid.length}"/>` : ''}</w:tcPr><w:p/></w:tc>`;
}

/** A grid position no cell covers. */
export function emptyCellXml(width: number): string {
  return `<w:tc><w:tcPr>${cellWidthXml(width)}</w:tcPr><w:p/></w:tc>`;
}

/** A cell's content blocks; a cell that is empty or ends in a table gets the paragraph Word requires. */
export function cellXml(tcPr: string, blocks: string[], lastIsTable: boolean): string {
  if (!blocks.length || lastIsTable) blocks.push('<w:p/>');
  return `<w:tc><w:tcPr>${tcPr}</w:tcPr>${blocks.join('')}</w:tc>`;
}

/** Column widths: `total` twips split evenly over `n` columns, none narrower than 200 twips. */
export function evenGrid(n: number, total: number): number[] {
  const w = Math.round(Math.max(200 * n, total) / n);
  return new Array<number>(n).fill(w);
}
