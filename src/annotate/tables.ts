/**
 * Table values: rows written into the template's own table structure. The row holding the field is the
 * template of the new rows (each copy's cells take one row of values), a repeating section repeats its
 * item, a control around a table gets rows appended, and a field outside any table becomes a new table.
 * Copies keep the template row's formatting, with fresh control ids.
 */
import { EMU_PER_TWIP } from '../docx/drawing.js';
import type { TemplateDocument } from './document.js';
import type { ControlField } from './fields.js';
import type { PackageAdditions } from './package-additions.js';
import { paragraphText, replacePlaceholderOnce } from './placeholder-text.js';
import { replaceParagraphContent, textRuns, withoutPlaceholderStyle } from './runs.js';
import type { FieldOptions } from './types.js';
import {
  ancestor,
  appendChild,
  attr,
  child,
  childElements,
  clone,
  descendants,
  el,
  firstDescendant,
  insertAfter,
  parseFragment,
  remove,
  removeAll,
  replaceWith,
  setAttr,
  setChildren,
  walk,
  type XElement,
  type XNode,
} from '../docx/xml.js';

/** Where a table value goes: a content control (and its content), or the paragraph of a `{{name}}`. */
export type TableAnchor = { control: ControlField; content: XElement } | { paragraph: XElement; name: string };

export class TableFiller {
  constructor(
    private readonly doc: TemplateDocument,
    private readonly additions: PackageAdditions,
  ) {}

  fillTable(part: string, rows: string[][], options: FieldOptions, anchor: TableAnchor): void {
    if ('control' in anchor) {
      const { control, content } = anchor;
      if (control.control === 'repeatingSection') return this.fillRepeatingSection(content, rows);
      const tables = descendants(content, 'w:tbl').filter((t) => !ancestor(t, 'w:tbl') || !contentHas(content, ancestor(t, 'w:tbl')!));
      if (tables.length) {
        const tbl = tables[Math.min(options.tableIndex ?? 0, tables.length - 1)]!;
        return this.appendRows(tbl, rows, options.copyRowStyle === true);
      }
      if (control.level === 'row') {
        const tr = firstDescendant(content, 'w:tr');
        if (tr) return this.rowsFromTemplate(tr, rows);
      }
      const tr = ancestor(control.sdt, 'w:tr');
      if (tr) return this.rowsFromTemplate(tr, rows);
      // Not in a table: the control's content becomes a new table.
      const tbl = newTable(rows, this.additions.textWidth());
      this.additions.ensureStyles(['TableGrid']);
      if (control.level === 'block') setChildren(content, [tbl, el('w:p')]);
      else {
        setChildren(content, []);
        const p = ancestor(control.sdt, 'w:p');
        if (p) insertAfter(p, [tbl]);
      }
      return;
    }
    const { paragraph, name } = anchor;
    // The placeholder's row is the template; its cells (placeholder included) take the row values.
    const tr = ancestor(paragraph, 'w:tr');
    if (tr) return this.rowsFromTemplate(tr, rows);
    replacePlaceholderOnce(paragraph, name, () => ({ inline: [] }));
    this.additions.ensureStyles(['TableGrid']);
    const tbl = newTable(rows, this.additions.textWidth());
    if (paragraphText(paragraph).trim() === '' && paragraph.parent?.name !== 'w:tc') replaceWith(paragraph, [tbl]);
    else insertAfter(paragraph, [tbl]);
  }

  /** The row holding the field is the template: one copy per value row, each cell's text replaced. */
  private rowsFromTemplate(template: XElement, rows: string[][]): void {
    const copies: XNode[] = [];
    for (const values of rows) {
      const tr = clone(template);
      this.refreshIds(tr);
      setRowCells(tr, values);
      copies.push(tr);
    }
    replaceWith(template, copies);
  }

  private appendRows(tbl: XElement, rows: string[][], copyRowStyle: boolean): void {
    const existing = childElements(tbl, 'w:tr');
    const last = existing[existing.length - 1];
    const grid = child(tbl, 'w:tblGrid');
    const widths = grid ? childElements(grid, 'w:gridCol').map((g) => Number(attr(g, 'w:w')) || 0) : [];
    const out: XNode[] = [];
    for (const values of rows) {
      let tr: XElement;
      if (copyRowStyle && last) {
        tr = clone(last);
        this.refreshIds(tr);
        // A copied header row must not repeat as a header.
        const trPr = child(tr, 'w:trPr');
        const header = trPr && child(trPr, 'w:tblHeader');
        if (header) remove(header);
        setRowCells(tr, values);
      } else tr = plainRow(values, widths);
      out.push(tr);
    }
    for (const n of out) appendChild(tbl, n);
  }

  private fillRepeatingSection(content: XElement, rows: string[][]): void {
    const items = childElements(content, 'w:sdt').filter((s) => {
      const pr = child(s, 'w:sdtPr');
      return pr && child(pr, 'w15:repeatingSectionItem');
    });
    const template = items[0];
    if (!template) return;
    const copies: XNode[] = [];
    for (const values of rows) {
      const item = clone(template);
      this.refreshIds(item);
      const itemContent = child(item, 'w:sdtContent');
      if (itemContent) {
        const trs = childElements(itemContent, 'w:tr');
        if (trs.length) setRowCells(trs[0]!, values);
        else {
          // Paragraph items: the controls inside take the values in order, else the paragraphs do.
          const inner = descendants(itemContent, 'w:sdt').filter((s) => ancestor(s, 'w:sdt') === item);
          const targets = inner.length ? inner.map((s) => child(s, 'w:sdtContent') ?? s) : childElements(itemContent, 'w:p');
          // Targets beyond the row's values keep their placeholder text, as an unfilled field would.
          targets.slice(0, values.length).forEach((t, i) => {
            const p = t.name === 'w:p' ? t : firstDescendant(t, 'w:p');
            const run = firstDescendant(t, 'w:r');
            const rPr = run ? child(run, 'w:rPr') : undefined;
            const runs = textRuns(values[i] ?? '', rPr ? withoutPlaceholderStyle(rPr) : undefined);
            if (p) replaceParagraphContent(p, runs);
            else setChildren(t, runs);
            const pr = t.parent && child(t.parent, 'w:sdtPr');
            const plc = pr && child(pr, 'w:showingPlcHdr');
            if (plc) remove(plc);
          });
        }
      }
      copies.push(item);
    }
    removeAll(items.slice(1));
    replaceWith(template, copies);
  }

  /** Copies of a row or item get fresh w:sdt ids (docPr ids are made unique when the package is written). */
  private refreshIds(root: XElement): void {
    walk(root, (e) => {
      if (e.name === 'w:sdtPr') {
        const id = child(e, 'w:id');
        if (id) setAttr(id, 'w:val', this.doc.allocateSdtId());
        const binding = child(e, 'w:dataBinding');
        if (binding) remove(binding);
      }
    });
  }
}

function contentHas(content: XElement, e: XElement): boolean {
  for (let p: XElement | undefined = e; p; p = p.parent) if (p === content) return true;
  return false;
}

/** Cells of a row, including cells wrapped in cell-level content controls. */
function rowCells(tr: XElement): XElement[] {
  const out: XElement[] = [];
  for (const c of childElements(tr)) {
    if (c.name === 'w:tc') out.push(c);
    else if (c.name === 'w:sdt') {
      const content = child(c, 'w:sdtContent');
      if (content) out.push(...childElements(content, 'w:tc'));
    }
  }
  return out;
}

function setRowCells(tr: XElement, values: string[]): void {
  const cells = rowCells(tr);
  cells.forEach((tc, i) => setCellText(tc, values[i] ?? ''));
}

function setCellText(tc: XElement, text: string): void {
  const paragraphs = descendants(tc, 'w:p').filter((p) => ancestor(p, 'w:tc') === tc);
  const p = paragraphs[0];
  if (!p) {
    appendChild(tc, el('w:p', [], textRuns(text, undefined)));
    return;
  }
  const run = firstDescendant(p, 'w:r');
  const rPr = run ? child(run, 'w:rPr') : undefined;
  replaceParagraphContent(p, textRuns(text, rPr ? withoutPlaceholderStyle(rPr) : undefined));
  removeAll(paragraphs.slice(1));
  // Content controls around the paragraph keep the cell's structure; only their placeholder flag goes.
  for (let a = p.parent; a && a !== tc; a = a.parent) {
    if (a.name === 'w:sdtContent') {
      const pr = a.parent && child(a.parent, 'w:sdtPr');
      const plc = pr && child(pr, 'w:showingPlcHdr');
      if (plc) remove(plc);
      const binding = pr && child(pr, 'w:dataBinding');
      if (binding) remove(binding);
    }
  }
}

/** A row of plain cells, built as a tree directly (a table value can hold hundreds of thousands of cells). */
function plainRow(values: string[], widths: number[]): XElement {
  const n = Math.max(values.length, widths.length, 1);
  const cells: XNode[] = [];
  for (let i = 0; i < n; i++) {
    const w = widths[i];
    const tcW = el(
      'w:tcW',
      w
        ? [
            ['w:w', String(w)],
            ['w:type', 'dxa'],
          ]
        : [
            ['w:w', '0'],
            ['w:type', 'auto'],
          ],
    );
    const v = values[i] ?? '';
    cells.push(el('w:tc', [], [el('w:tcPr', [], [tcW]), el('w:p', [], v ? textRuns(v, undefined) : [])]));
  }
  return el('w:tr', [], cells);
}

function newTable(rows: string[][], textWidthEmu: number): XElement {
  const cols = Math.max(1, ...rows.map((r) => r.length));
  const total = Math.round(textWidthEmu / EMU_PER_TWIP);
  const w = Math.floor(total / cols);
  const widths = Array.from({ length: cols }, () => w);
  let xml = `<w:tbl><w:tblPr><w:tblStyle w:val="TableGrid"/><w:tblW w:w="${w * cols}" w:type="dxa"/><w:tblLook w:val="04A0" w:firstRow="1" w:lastRow="0" w:firstColumn="1" w:lastColumn="0" w:noHBand="0" w:noVBand="1"/></w:tblPr><w:tblGrid>`;
  xml += widths.map((x) => `<w:gridCol w:w="${x}"/>`).join('') + '</w:tblGrid>';
  const tbl = parseFragment(xml + '</w:tbl>')[0] as XElement;
  for (const r of rows) appendChild(tbl, plainRow(r, widths));
  return tbl;
}
