/**
 * Writing values into the fields the finder located. Every value becomes WordprocessingML in one of two
 * shapes — inline runs (placed where the field's runs were) or block content (paragraphs and tables, when
 * the field is a whole paragraph or a block control) — and carries the formatting of the field's first run.
 *
 * Content controls keep their w:sdt (the result is still a template) unless flattened; w:showingPlcHdr is
 * cleared, and a w:dataBinding either gets its customXml target updated (text, date, checkbox) or is
 * dropped, because Word would otherwise re-render the control from the old bound value.
 *
 * The work is shared out by concern: this file places values into controls and placeholders; value-xml.ts
 * makes the XML of a value; tables.ts writes table values; placeholder-text.ts finds and replaces `{{name}}`
 * across runs; runs.ts holds the run-level helpers; package-additions.ts the parts a fill adds (media,
 * styles, numbering, footnotes).
 */
import { FolioError } from '../errors.js';
import type { TemplateDocument } from './document.js';
import { paragraphSegments, PLACEHOLDER_RE, type ControlField, type PlaceholderField } from './fields.js';
import { DEFAULT_DATE_PICTURE, formatWordDate, fullDateAttr } from './dates.js';
import type { Box } from './images.js';
import { updateBinding } from './bindings.js';
import { PackageAdditions } from './package-additions.js';
import { paragraphText, placeholderRegex, replacePlaceholderAt } from './placeholder-text.js';
import {
  isPlaceholderStyle,
  needsTrailingParagraph,
  replaceParagraphContent,
  sortRunProps,
  textRuns,
  withoutPlaceholderStyle,
  type Produced,
} from './runs.js';
import { TableFiller } from './tables.js';
import { ValueWriter } from './value-xml.js';
import type { FieldOptions, ResolvedValue } from './types.js';
import {
  appendChild,
  attr,
  child,
  childElements,
  el,
  firstDescendant,
  remove,
  removeAll,
  replaceWith,
  setAttr,
  setChildren,
  setText,
  type XElement,
} from '../docx/xml.js';

/** Placeholders × runs of one paragraph beyond which filling it is refused (real documents stay far below). */
const MAX_PARAGRAPH_WORK = 1_000_000;

export class Filler {
  /** Runs read per paragraph by placeholder fills so far (see MAX_PARAGRAPH_WORK). */
  private readonly paragraphWork = new Map<XElement, number>();
  private readonly values: ValueWriter;
  private readonly tables: TableFiller;

  constructor(
    private readonly doc: TemplateDocument,
    warnings: string[],
  ) {
    const additions = new PackageAdditions(doc);
    this.values = new ValueWriter(doc, additions, warnings);
    this.tables = new TableFiller(doc, additions);
  }

  // ---- content controls -----------------------------------------------------------------------------

  /** Fills one control (the caller skips controls an earlier fill already replaced). */
  fillControl(f: ControlField, value: ResolvedValue, options: FieldOptions, fieldPath: string): void {
    const sdt = f.sdt;
    const sdtPr = child(sdt, 'w:sdtPr') ?? this.prepend(sdt, el('w:sdtPr'));
    let content = child(sdt, 'w:sdtContent');
    if (!content) {
      content = el('w:sdtContent');
      appendChild(sdt, content);
    }
    const placeholderShown = !!child(sdtPr, 'w:showingPlcHdr');
    const base = this.baseRunProps(content, sdtPr, options, placeholderShown);
    let bound: string | undefined;

    if (value.type === 'table') {
      this.tables.fillTable(f.part.name, value.rows, options, { control: f, content });
    } else if (value.type === 'checkbox' && f.control === 'checkbox') {
      this.setCheckbox(sdtPr, content, value.checked, base);
      bound = value.checked ? 'true' : 'false';
    } else {
      let v = value;
      if (value.type === 'date') {
        const dateEl = child(sdtPr, 'w:date');
        const picture =
          options.format ??
          (dateEl && child(dateEl, 'w:dateFormat') ? attr(child(dateEl, 'w:dateFormat')!, 'w:val') : undefined) ??
          DEFAULT_DATE_PICTURE;
        const lid = options.locale ?? (dateEl && child(dateEl, 'w:lid') ? attr(child(dateEl, 'w:lid')!, 'w:val') : undefined);
        if (dateEl) setAttr(dateEl, 'w:fullDate', fullDateAttr(value.date));
        const text = formatWordDate(value.date, picture, lid);
        v = { type: 'text', text };
        // The bound node holds the date as w:storeMappedDataAs says: xsd:dateTime (Word's default), xsd:date, or the text.
        const storedAs = dateEl && child(dateEl, 'w:storeMappedDataAs') ? attr(child(dateEl, 'w:storeMappedDataAs')!, 'w:val') : 'dateTime';
        bound =
          !dateEl || storedAs === 'text' ? text : storedAs === 'date' ? fullDateAttr(value.date).slice(0, 10) : fullDateAttr(value.date).slice(0, 19);
      } else if (value.type === 'text') {
        bound = value.text;
        this.selectListItem(sdtPr, value.text);
      } else if (value.type === 'checkbox') {
        v = { type: 'text', text: value.checked ? '\u2612' : '\u2610' };
        bound = value.checked ? 'true' : 'false';
      }
      const box = value.type === 'image' ? extentOf(content) : undefined;
      const produced = this.values.produce(v, { part: f.part.name, base, options, box, fieldPath });
      this.placeInControl(f, content, produced);
    }
    const plc = child(sdtPr, 'w:showingPlcHdr');
    if (plc) remove(plc);
    if (child(sdtPr, 'w:dataBinding')) updateBinding(this.doc, sdtPr, bound);
    this.doc.markDirty(f.part.name);
  }

  /** A drop-down or combo box shows the item the text names: its w:lastValue follows (Word reads it). */
  private selectListItem(sdtPr: XElement, text: string): void {
    const list = child(sdtPr, 'w:dropDownList') ?? child(sdtPr, 'w:comboBox');
    if (!list) return;
    const item = childElements(list, 'w:listItem').find((i) => attr(i, 'w:displayText') === text || attr(i, 'w:value') === text);
    if (item) setAttr(list, 'w:lastValue', attr(item, 'w:value') ?? text);
    else if (list.name === 'w:comboBox') setAttr(list, 'w:lastValue', text);
  }

  private prepend(parent: XElement, c: XElement): XElement {
    parent.children.unshift(c);
    c.parent = parent;
    return c;
  }

  /** The run formatting a control's value takes: its first run's, without Word's placeholder style. */
  private baseRunProps(content: XElement, sdtPr: XElement, options: FieldOptions, placeholderShown: boolean): XElement | undefined {
    if (options.keepTextNodeStyles === false) return undefined;
    const run = firstDescendant(content, 'w:r');
    let rPr = run ? child(run, 'w:rPr') : undefined;
    if (!rPr || (placeholderShown && rPr.children.every((c) => c.type !== 'el' || isPlaceholderStyle(c)))) {
      rPr = child(sdtPr, 'w:rPr') ?? rPr;
    }
    return rPr ? withoutPlaceholderStyle(rPr) : undefined;
  }

  private placeInControl(f: ControlField, content: XElement, produced: Produced): void {
    if (f.level === 'inline') {
      setChildren(content, produced.inline);
      return;
    }
    // Block content replaces the control's paragraphs when the control is a block of its own.
    if (f.level === 'block' && produced.block?.length) {
      const block = [...produced.block];
      if (needsTrailingParagraph(content.parent?.parent ?? content, block)) block.push(el('w:p'));
      setChildren(content, block);
      return;
    }
    let p = firstDescendant(content, 'w:p');
    if (!p) {
      p = el('w:p');
      if (f.level === 'block') appendChild(content, p);
      else {
        const tc = firstDescendant(content, 'w:tc');
        if (!tc) {
          setChildren(content, produced.inline);
          return;
        }
        appendChild(tc, p);
      }
    }
    replaceParagraphContent(p, produced.inline);
    // The other paragraphs of a block control held the placeholder text; the value replaces them all.
    if (f.level === 'block') {
      let top: XElement = p;
      while (top.parent && top.parent !== content) top = top.parent;
      removeAll(childElements(content).filter((c) => c !== top && (c.name === 'w:p' || c.name === 'w:tbl' || c.name === 'w:sdt')));
    } else {
      removeAll(childElements(p.parent!, 'w:p').filter((c) => c !== p));
    }
  }

  private setCheckbox(sdtPr: XElement, content: XElement, checked: boolean, base: XElement | undefined): void {
    const box = child(sdtPr, 'w14:checkbox')!;
    let state = child(box, 'w14:checked');
    if (!state) state = this.prepend(box, el('w14:checked'));
    setAttr(state, 'w14:val', checked ? '1' : '0');
    const glyphEl = child(box, checked ? 'w14:checkedState' : 'w14:uncheckedState');
    const code = glyphEl ? attr(glyphEl, 'w14:val') : undefined;
    const font = glyphEl ? attr(glyphEl, 'w14:font') : undefined;
    const glyph = code && /^[0-9a-fA-F]{1,6}$/.test(code) ? String.fromCodePoint(parseInt(code, 16)) : checked ? '\u2612' : '\u2610';
    const t = firstDescendant(content, 'w:t');
    if (t) {
      setText(t, glyph);
      const run = t.parent!;
      if (font) {
        let rPr = child(run, 'w:rPr');
        if (!rPr) rPr = this.prepend(run, el('w:rPr'));
        let fonts = child(rPr, 'w:rFonts');
        if (!fonts) fonts = this.prepend(rPr, el('w:rFonts'));
        for (const k of ['w:ascii', 'w:hAnsi', 'w:eastAsia', 'w:cs']) setAttr(fonts, k, font);
        sortRunProps(rPr);
      }
      return;
    }
    const runs = textRuns(glyph, base);
    const p = firstDescendant(content, 'w:p');
    if (p) replaceParagraphContent(p, runs);
    else setChildren(content, runs);
  }

  // ---- placeholders ---------------------------------------------------------------------------------

  /** Replaces every `{{name}}` of the paragraph; returns how many were replaced. */
  fillPlaceholder(f: PlaceholderField, value: ResolvedValue, options: FieldOptions, fieldPath: string): number {
    let count = 0;
    if (value.type === 'table') {
      // The row that holds the placeholder is the template of the new rows; else a new table follows.
      const re = placeholderRegex(f.name);
      if (!re.test(paragraphText(f.paragraph))) return 0;
      this.tables.fillTable(f.part.name, value.rows, options, { paragraph: f.paragraph, name: f.name });
      this.doc.markDirty(f.part.name);
      return 1;
    }
    // Right to left, positions found once: a value that itself contains `{{name}}` is not filled again.
    const segs = paragraphSegments(f.paragraph);
    const text = segs.length === 1 ? segs[0]!.text : segs.map((x) => x.text).join('');
    // The finder's one shared pattern, filtered by name: compiling a pattern per field (50,000 distinct
    // placeholders) cost more than the fills themselves.
    const matches: RegExpExecArray[] = [];
    let si = 0;
    for (const m of text.matchAll(PLACEHOLDER_RE)) {
      if (m[1] !== f.name) continue;
      // Segments are in offset order and so are matches: one forward pass finds each match's segment.
      while (si + 1 < segs.length && segs[si]!.start + segs[si]!.text.length <= m.index) si++;
      if (!this.values.wrote(segs[si]!.run)) matches.push(m);
    }
    matches.reverse();
    // Each replacement re-reads the paragraph's runs, and so does every field filled in the same paragraph:
    // bound the quadratic worst case of a crafted paragraph over all its fills.
    const work = (this.paragraphWork.get(f.paragraph) ?? 0) + segs.length * Math.max(1, matches.length);
    this.paragraphWork.set(f.paragraph, work);
    if (work > MAX_PARAGRAPH_WORK) {
      throw new FolioError(
        'UNPROCESSABLE_DOCUMENT',
        `A paragraph of ${f.part.name} holds too many placeholders and runs to fill (${matches.length} × ${segs.length})`,
      );
    }
    for (const m of matches) {
      const done = replacePlaceholderAt(f.paragraph, m.index, m.index + m[0].length, (rPr) => {
        const base = options.keepTextNodeStyles === false ? undefined : rPr ? withoutPlaceholderStyle(rPr) : undefined;
        let v = value;
        if (value.type === 'date') v = { type: 'text', text: formatWordDate(value.date, options.format ?? DEFAULT_DATE_PICTURE, options.locale) };
        else if (value.type === 'checkbox') v = { type: 'text', text: value.checked ? '\u2612' : '\u2610' };
        return this.values.produce(v, { part: f.part.name, base, options, fieldPath });
      });
      if (!done) break;
      count++;
    }
    if (count) this.doc.markDirty(f.part.name);
    return count;
  }

  // ---- flatten --------------------------------------------------------------------------------------

  /** Replaces a control by its content. */
  static flatten(sdt: XElement): void {
    const content = child(sdt, 'w:sdtContent');
    replaceWith(sdt, content ? [...content.children] : []);
  }
}

function extentOf(content: XElement): Box | undefined {
  const ext = firstDescendant(content, 'wp:extent');
  if (!ext) return undefined;
  const cx = Number(attr(ext, 'cx'));
  const cy = Number(attr(ext, 'cy'));
  return cx > 0 && cy > 0 ? { cx, cy } : undefined;
}
