/**
 * Writing values into the fields the finder located. Every value becomes WordprocessingML in one of two
 * shapes — inline runs (placed where the field's runs were) or block content (paragraphs and tables, when
 * the field is a whole paragraph or a block control) — and carries the formatting of the field's first run.
 *
 * Content controls keep their w:sdt (the result is still a template) unless flattened; w:showingPlcHdr is
 * cleared, and a w:dataBinding either gets its customXml target updated (text, date, checkbox) or is
 * dropped, because Word would otherwise re-render the control from the old bound value.
 */
import { FolioError } from '../errors.js';
import { htmlToWordFragment } from '../convert/index.js';
import { styleDefinition } from '../docx/styles.js';
import type { TemplateDocument } from './document.js';
import { paragraphSegments, PLACEHOLDER_RE, type ControlField, type PlaceholderField } from './fields.js';
import { DEFAULT_DATE_PICTURE, formatWordDate, fullDateAttr } from './dates.js';
import { inlineDrawingXml } from '../docx/drawing.js';
import { drawnSize, pixels, type Box, type PreparedImage } from './images.js';
import { updateBinding } from './bindings.js';
import type { FieldOptions, ResolvedValue } from './types.js';
import {
  appendChild,
  attr,
  child,
  childElements,
  clone,
  descendants,
  el,
  escapeAttr,
  escapeText,
  firstDescendant,
  insertAfter,
  insertBefore,
  parseFragment,
  remove,
  removeAll,
  replaceWith,
  setAttr,
  setChildren,
  setText,
  walk,
  ancestor,
  type XElement,
  type XNode,
} from './xml.js';

const REL_NS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const DEFAULT_TEXT_WIDTH_EMU = 6 * 914400;
/** Placeholders × runs of one paragraph beyond which filling it is refused (real documents stay far below). */
const MAX_PARAGRAPH_WORK = 1_000_000;
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

interface Produced {
  inline: XNode[];
  /** Paragraph/table content, used when the field stands alone in a block position. */
  block?: XNode[];
}

export class Filler {
  private readonly mediaByImage = new Map<PreparedImage, { png: string; svg?: string }>();
  private readonly relByMedia = new Map<string, string>();
  private textWidthEmu: number | undefined;
  private styleIds: Set<string> | undefined;
  private htmlCount = 0;
  /** Runs read per paragraph by placeholder fills so far (see MAX_PARAGRAPH_WORK). */
  private readonly paragraphWork = new Map<XElement, number>();
  private stylesPart: string | null | undefined;

  constructor(
    private readonly doc: TemplateDocument,
    private readonly warnings: string[],
  ) {}

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
      this.fillTable(f.part.name, value.rows, options, { control: f, content });
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
      const produced = this.produce(f.part.name, v, base, options, box, fieldPath);
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
      this.fillTable(f.part.name, value.rows, options, { paragraph: f.paragraph, name: f.name });
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
      if (!this.written.has(segs[si]!.run)) matches.push(m);
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
        return this.produce(f.part.name, v, base, options, undefined, fieldPath);
      });
      if (!done) break;
      count++;
    }
    if (count) this.doc.markDirty(f.part.name);
    return count;
  }

  // ---- values → XML ---------------------------------------------------------------------------------

  /** Runs written by a fill: `{{name}}` typed inside a value is the value's text, never a field. */
  private readonly written = new WeakSet<XElement>();

  private produce(
    part: string,
    v: ResolvedValue,
    base: XElement | undefined,
    options: FieldOptions,
    box: Box | undefined,
    fieldPath: string,
  ): Produced {
    const produced = this.produceContent(part, v, base, options, box, fieldPath);
    for (const n of [...produced.inline, ...(produced.block ?? [])]) {
      if (n.type !== 'el') continue;
      if (n.name === 'w:r') this.written.add(n);
      for (const r of descendants(n, 'w:r')) this.written.add(r);
    }
    return produced;
  }

  private produceContent(
    part: string,
    v: ResolvedValue,
    base: XElement | undefined,
    options: FieldOptions,
    box: Box | undefined,
    fieldPath: string,
  ): Produced {
    switch (v.type) {
      case 'text':
        return { inline: textRuns(v.text, base) };
      case 'image':
        return { inline: [this.imageRun(part, v.image, base, options, box)] };
      case 'link':
        return { inline: [this.linkNode(part, v.url, v.text, base)] };
      case 'html':
        return this.htmlContent(part, v.html, base, fieldPath);
      case 'date':
        return { inline: textRuns(formatWordDate(v.date, options.format ?? DEFAULT_DATE_PICTURE, options.locale), base) };
      case 'checkbox':
        return { inline: textRuns(v.checked ? '\u2612' : '\u2610', base) };
      case 'table':
        return { inline: [] };
    }
  }

  private imageRun(part: string, image: PreparedImage, base: XElement | undefined, options: FieldOptions, box: Box | undefined): XElement {
    let media = this.mediaByImage.get(image);
    if (!media) {
      media = { png: this.newMediaName(image.extension) };
      this.doc.pkg.set(media.png, image.bytes);
      this.doc.ensureDefaultContentType(image.extension, image.contentType);
      if (image.svg) {
        media.svg = this.newMediaName('svg');
        this.doc.pkg.set(media.svg, image.svg);
        this.doc.ensureDefaultContentType('svg', 'image/svg+xml');
      }
      this.mediaByImage.set(image, media);
    }
    const relId = this.mediaRel(part, media.png);
    const svgRelId = media.svg ? this.mediaRel(part, media.svg) : undefined;
    const dims = options.dimensions ? { width: pixels(options.dimensions.width), height: pixels(options.dimensions.height) } : undefined;
    const size = drawnSize(image, dims, box, this.textWidth());
    const docPrId = this.doc.allocateDocPrId();
    this.doc.declareNamespaces(part, ['w', 'r', 'wp']);
    const description = options.alt ?? image.description;
    const xml = `<w:r>${base ? runPropsForDrawing(base) : ''}${inlineDrawingXml({ rId: relId, svgRId: svgRelId, widthEmu: size.cx, heightEmu: size.cy, id: docPrId, name: `Picture ${docPrId}`, description })}</w:r>`;
    return parseFragment(xml)[0] as XElement;
  }

  private newMediaName(ext: string): string {
    let i = this.mediaByImage.size + this.relByMedia.size + 1;
    let name: string;
    do name = `word/media/folio-image-${i++}.${ext}`;
    while (this.doc.pkg.has(name));
    return name;
  }

  private mediaRel(part: string, media: string): string {
    const key = `${part}\u0000${media}`;
    let id = this.relByMedia.get(key);
    if (!id) {
      id = this.doc.addRelationship(part, `${REL_NS}/image`, relative(part, media));
      this.relByMedia.set(key, id);
    }
    return id;
  }

  private textWidth(): number {
    if (this.textWidthEmu === undefined) {
      this.textWidthEmu = DEFAULT_TEXT_WIDTH_EMU;
      const body = this.doc.fieldParts[0]!.doc.root;
      const sect = descendants(body, 'w:sectPr').pop();
      const pgSz = sect && child(sect, 'w:pgSz');
      const pgMar = sect && child(sect, 'w:pgMar');
      const w = pgSz ? Number(attr(pgSz, 'w:w')) : NaN;
      const l = pgMar ? Number(attr(pgMar, 'w:left')) : NaN;
      const r = pgMar ? Number(attr(pgMar, 'w:right')) : NaN;
      if (w > 0 && l >= 0 && r >= 0 && w - l - r > 0) this.textWidthEmu = (w - l - r) * 635;
    }
    return this.textWidthEmu;
  }

  private linkNode(part: string, url: string, text: string, base: XElement | undefined): XElement {
    const relId = this.doc.addRelationship(part, `${REL_NS}/hyperlink`, url, true);
    this.doc.declareNamespaces(part, ['r']);
    const hasStyle = this.ensureStyles(['Hyperlink']).has('Hyperlink');
    const rPr = base ? clone(base) : el('w:rPr');
    // The link look: the Hyperlink character style when the template has (or got) one, direct formatting too
    // so that it shows even where the style is missing.
    for (const name of ['w:rStyle', 'w:color', 'w:u']) {
      const old = child(rPr, name);
      if (old) remove(old);
    }
    const extra = parseFragment(`${hasStyle ? '<w:rStyle w:val="Hyperlink"/>' : ''}<w:color w:val="0563C1"/><w:u w:val="single"/>`);
    rPr.children.unshift(...extra);
    for (const c of extra) if (c.type === 'el') c.parent = rPr;
    sortRunProps(rPr);
    const runs = textRuns(text, rPr);
    return el(
      'w:hyperlink',
      [
        ['r:id', escapeAttr(relId)],
        ['w:history', '1'],
      ],
      runs,
    );
  }

  private htmlContent(part: string, html: string, base: XElement | undefined, fieldPath: string): Produced {
    const n = ++this.htmlCount;
    const numbering = this.numberingPart();
    const firstNumId = numbering.maxId + 1;
    const firstFootnoteId = this.maxFootnoteId() + 1;
    const firstDrawingId = this.doc.allocateDocPrId();
    const frag = htmlToWordFragment(html, {
      textWidthTwips: Math.round(this.textWidth() / 635),
      relIdPrefix: `rIdFolioHtml${n}x`,
      firstNumId,
      firstFootnoteId,
      firstDrawingId,
      mediaPrefix: `folio-html${n}-`,
    });
    for (let i = 1; i < (frag.bodyXml.match(/<wp:docPr\b/g) ?? []).length; i++) this.doc.allocateDocPrId();
    for (const w of frag.warnings) this.warnings.push(`${fieldPath}: ${w}`);
    // Relationships and media belong to the part the fragment goes into (a header has its own).
    const rels = this.doc.relationships(part);
    for (const r of frag.relationships) {
      rels.push({ id: r.id, type: `${REL_NS}/${r.type}`, target: r.target, external: r.external });
    }
    if (frag.relationships.length) this.doc.markRelsDirty(part);
    for (const m of frag.media) {
      this.doc.pkg.set(m.path, m.bytes);
      this.doc.ensureDefaultContentType(m.extension, m.contentType);
    }
    if (frag.abstractNums.length || frag.nums.length) this.mergeNumbering(frag.abstractNums, frag.nums);
    let bodyXml = frag.bodyXml;
    if (frag.footnotes.length) {
      if (part === this.doc.mainPart) this.mergeFootnotes(frag.footnotes);
      else {
        bodyXml = bodyXml.replace(/<w:r>(?:(?!<w:r>).)*?<w:footnoteReference [^>]*\/><\/w:r>/g, '');
        this.warnings.push(`${fieldPath}: footnotes are only kept in the document body`);
      }
    }
    const usedStyles = new Set([...bodyXml.matchAll(/<w:(?:pStyle|rStyle|tblStyle) w:val="([^"]+)"/g)].map((m) => m[1]!));
    this.ensureStyles([...usedStyles]);
    this.doc.declareNamespaces(part, ['w', 'r', 'wp']);
    const block = parseFragment(bodyXml).filter((x): x is XElement => x.type === 'el');
    // Inline use: the runs of every paragraph, paragraphs joined by line breaks, in the field's formatting
    // where the HTML set none.
    const inline: XNode[] = [];
    const paragraphs = block.flatMap((b) => (b.name === 'w:p' ? [b] : descendants(b, 'w:p')));
    paragraphs.forEach((p, i) => {
      if (i > 0) inline.push(el('w:r', [], [el('w:br')]));
      for (const c of p.children) {
        if (c.type !== 'el' || c.name === 'w:pPr') continue;
        const copy = clone(c);
        if (base) {
          const runs = copy.name === 'w:r' ? [copy] : descendants(copy, 'w:r');
          for (const r of runs) mergeRunProps(r, base);
        }
        inline.push(copy);
      }
    });
    return { inline, block };
  }

  private numberingPart(): { name: string; maxId: number } {
    let name = this.doc.relatedPart('numbering');
    if (!name || !this.doc.pkg.has(name)) {
      name = 'word/numbering.xml';
      this.doc.pkg.setText(
        name,
        `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:numbering xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"></w:numbering>`,
      );
      this.doc.addRelationship(this.doc.mainPart, `${REL_NS}/numbering`, relative(this.doc.mainPart, name));
      this.doc.ensureOverride(name, 'application/vnd.openxmlformats-officedocument.wordprocessingml.numbering+xml');
    }
    const xml = this.doc.pkg.text(name)!;
    let maxId = 0;
    for (const m of xml.matchAll(/w:(?:abstractNumId|numId)="(\d+)"/g)) maxId = Math.max(maxId, Number(m[1]));
    return { name, maxId };
  }

  private mergeNumbering(abstractNums: string[], nums: string[]): void {
    const { name } = this.numberingPart();
    let xml = this.doc.pkg.text(name)!;
    // Schema order: every w:abstractNum before the first w:num.
    const firstNum = xml.search(/<w:num\b/);
    const close = xml.lastIndexOf('</w:numbering>');
    const absAt = firstNum >= 0 ? firstNum : close;
    xml = xml.slice(0, absAt) + abstractNums.join('') + xml.slice(absAt, close) + nums.join('') + xml.slice(close);
    this.doc.pkg.setText(name, xml);
  }

  private maxFootnoteId(): number {
    const name = this.doc.relatedPart('footnotes');
    const xml = name ? this.doc.pkg.text(name) : undefined;
    let max = 0;
    if (xml) for (const m of xml.matchAll(/<w:footnote\b[^>]*w:id="(-?\d+)"/g)) max = Math.max(max, Number(m[1]));
    return max;
  }

  private mergeFootnotes(notes: string[]): void {
    let name = this.doc.relatedPart('footnotes');
    const nsDecl =
      'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';
    if (!name || !this.doc.pkg.has(name)) {
      name = 'word/footnotes.xml';
      this.doc.pkg.setText(
        name,
        `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:footnotes ${nsDecl}>` +
          '<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>' +
          '<w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/></w:r></w:p></w:footnote></w:footnotes>',
      );
      this.doc.addRelationship(this.doc.mainPart, `${REL_NS}/footnotes`, relative(this.doc.mainPart, name));
      this.doc.ensureOverride(name, 'application/vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml');
    }
    const fp = this.doc.fieldPart(name);
    if (fp) {
      for (const n of parseFragment(notes.join(''))) appendChild(fp.doc.root, n);
      this.doc.markDirty(name);
    } else {
      const xml = this.doc.pkg.text(name)!;
      const close = xml.lastIndexOf('</w:footnotes>');
      this.doc.pkg.setText(name, xml.slice(0, close) + notes.join('') + xml.slice(close));
    }
  }

  /** Adds the definitions of Word built-in styles the template lacks (from src/docx/styles.ts). */
  private ensureStyles(ids: string[]): Set<string> {
    // A template without a styles part stays without one: remember that instead of looking again per value.
    if (this.stylesPart === undefined) {
      const found = this.doc.relatedPart('styles');
      this.stylesPart = found && this.doc.pkg.has(found) ? found : null;
    }
    const name = this.stylesPart;
    if (!name) return new Set();
    let xml = this.doc.pkg.text(name)!;
    this.styleIds ??= new Set([...xml.matchAll(/<w:style\b[^>]*w:styleId="([^"]+)"/g)].map((m) => m[1]!));
    const missing = ids.filter((id) => !this.styleIds!.has(id));
    if (missing.length === 0) return this.styleIds;
    const add: string[] = [];
    for (const id of missing) {
      const def = styleDefinition(id);
      if (def) {
        add.push(def);
        this.styleIds.add(id);
      }
    }
    if (add.length) {
      const close = xml.lastIndexOf('</w:styles>');
      xml = xml.slice(0, close) + add.join('') + xml.slice(close);
      this.doc.pkg.setText(name, xml);
    }
    return this.styleIds;
  }

  // ---- tables ---------------------------------------------------------------------------------------

  fillTable(
    part: string,
    rows: string[][],
    options: FieldOptions,
    anchor: { control: ControlField; content: XElement } | { paragraph: XElement; name: string },
  ): void {
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
      const tbl = newTable(rows, this.textWidth());
      this.ensureStyles(['TableGrid']);
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
    this.ensureStyles(['TableGrid']);
    const tbl = newTable(rows, this.textWidth());
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

  // ---- flatten --------------------------------------------------------------------------------------

  /** Replaces a control by its content. */
  static flatten(sdt: XElement): void {
    const content = child(sdt, 'w:sdtContent');
    replaceWith(sdt, content ? [...content.children] : []);
  }
}

// ---- helpers ------------------------------------------------------------------------------------------

function contentHas(content: XElement, e: XElement): boolean {
  for (let p: XElement | undefined = e; p; p = p.parent) if (p === content) return true;
  return false;
}

function isPlaceholderStyle(e: XElement): boolean {
  return e.name === 'w:rStyle' && /^placeholder\s*text$/i.test(attr(e, 'w:val') ?? '');
}

export function withoutPlaceholderStyle(rPr: XElement): XElement {
  const copy = clone(rPr);
  copy.children = copy.children.filter((c) => !(c.type === 'el' && (isPlaceholderStyle(c) || c.name === 'w:rPrChange')));
  return copy;
}

/** A drawing run keeps position-neutral formatting only (no vertical alignment or hidden text). */
function runPropsForDrawing(rPr: XElement): string {
  const copy = clone(rPr);
  copy.children = copy.children.filter((c) => !(c.type === 'el' && ['w:vertAlign', 'w:vanish', 'w:position', 'w:rPrChange'].includes(c.name)));
  return copy.children.length ? serialize(copy) : '';
}

function serialize(e: XElement): string {
  let s = `<${e.name}`;
  for (const [k, v] of e.attrs) s += ` ${k}="${v}"`;
  if (!e.children.length) return s + '/>';
  s += '>';
  for (const c of e.children) s += c.type === 'el' ? serialize(c) : c.raw;
  return s + `</${e.name}>`;
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

/** CT_RPr child order (ECMA-376 §17.3.2.28): Word refuses run properties out of this order. */
const RPR_ORDER = [
  'w:rStyle',
  'w:rFonts',
  'w:b',
  'w:bCs',
  'w:i',
  'w:iCs',
  'w:caps',
  'w:smallCaps',
  'w:strike',
  'w:dstrike',
  'w:outline',
  'w:shadow',
  'w:emboss',
  'w:imprint',
  'w:noProof',
  'w:snapToGrid',
  'w:vanish',
  'w:webHidden',
  'w:color',
  'w:spacing',
  'w:w',
  'w:kern',
  'w:position',
  'w:sz',
  'w:szCs',
  'w:highlight',
  'w:u',
  'w:effect',
  'w:bdr',
  'w:shd',
  'w:fitText',
  'w:vertAlign',
  'w:rtl',
  'w:cs',
  'w:em',
  'w:lang',
  'w:eastAsianLayout',
  'w:specVanish',
  'w:oMath',
  'w:rPrChange',
];
const RPR_RANK = new Map(RPR_ORDER.map((n, i) => [n, i]));

function sortRunProps(rPr: XElement): void {
  const rank = (c: XNode) => (c.type === 'el' ? (RPR_RANK.get(c.name) ?? RPR_ORDER.length - 1.5) : RPR_ORDER.length);
  rPr.children = rPr.children
    .map((c, i) => ({ c, i }))
    .sort((a, b) => rank(a.c) - rank(b.c) || a.i - b.i)
    .map((x) => x.c);
}

/** Adds the field's run formatting under a converted HTML run, where the HTML did not set that property. */
function mergeRunProps(run: XElement, base: XElement): void {
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

function replaceParagraphContent(p: XElement, nodes: XNode[]): void {
  const keep = p.children.filter((c) => c.type === 'el' && KEEP_IN_PARAGRAPH.has(c.name));
  const pPr = keep.filter((c) => c.type === 'el' && c.name === 'w:pPr');
  const markers = keep.filter((c) => !(c.type === 'el' && c.name === 'w:pPr'));
  setChildren(p, [...pPr, ...nodes, ...markers]);
}

function needsTrailingParagraph(container: XElement, block: XNode[]): boolean {
  const last = [...block].reverse().find((c) => c.type === 'el');
  return !!last && last.type === 'el' && last.name === 'w:tbl' && container.name === 'w:tc';
}

function extentOf(content: XElement): Box | undefined {
  const ext = firstDescendant(content, 'wp:extent');
  if (!ext) return undefined;
  const cx = Number(attr(ext, 'cx'));
  const cy = Number(attr(ext, 'cy'));
  return cx > 0 && cy > 0 ? { cx, cy } : undefined;
}

function relative(fromPart: string, toPart: string): string {
  const fromDir = fromPart.slice(0, fromPart.lastIndexOf('/') + 1);
  return toPart.startsWith(fromDir) ? toPart.slice(fromDir.length) : `/${toPart}`;
}

export function placeholderRegex(name: string): RegExp {
  return new RegExp(`\\{\\{\\s*${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*\\}\\}`, 'u');
}

export function paragraphText(p: XElement): string {
  return paragraphSegments(p)
    .map((s) => s.text)
    .join('');
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
  const total = Math.round(textWidthEmu / 635);
  const w = Math.floor(total / cols);
  const widths = Array.from({ length: cols }, () => w);
  let xml = `<w:tbl><w:tblPr><w:tblStyle w:val="TableGrid"/><w:tblW w:w="${w * cols}" w:type="dxa"/><w:tblLook w:val="04A0" w:firstRow="1" w:lastRow="0" w:firstColumn="1" w:lastColumn="0" w:noHBand="0" w:noVBand="1"/></w:tblPr><w:tblGrid>`;
  xml += widths.map((x) => `<w:gridCol w:w="${x}"/>`).join('') + '</w:tblGrid>';
  const tbl = parseFragment(xml + '</w:tbl>')[0] as XElement;
  for (const r of rows) appendChild(tbl, plainRow(r, widths));
  return tbl;
}

// ---- placeholder replacement across runs --------------------------------------------------------------

/** Moves everything after `node` in its run into a new run (same properties) right after it. */
function splitRunAfter(run: XElement, node: XElement): XElement | undefined {
  const i = run.children.indexOf(node);
  const after = run.children.slice(i + 1);
  if (!after.some((c) => c.type === 'el')) return undefined;
  const rPr = child(run, 'w:rPr');
  const copy = el(
    run.name,
    run.attrs.map(([k, v]) => [k, v]),
    [...(rPr ? [clone(rPr)] : []), ...after],
  );
  run.children = run.children.slice(0, i + 1);
  insertAfter(run, [copy]);
  return copy;
}

/** Moves `node` and everything after it into a new run right after, when something else precedes it. */
function splitRunBefore(run: XElement, node: XElement): void {
  const i = run.children.indexOf(node);
  const before = run.children.slice(0, i).filter((c) => c.type === 'el' && c.name !== 'w:rPr');
  if (!before.length) return;
  const rPr = child(run, 'w:rPr');
  const moved = run.children.slice(i);
  const copy = el(
    run.name,
    run.attrs.map(([k, v]) => [k, v]),
    [...(rPr ? [clone(rPr)] : []), ...moved],
  );
  run.children = run.children.slice(0, i);
  insertAfter(run, [copy]);
}

/** Splits the text of a w:t at `offset`: the second half goes into its own w:t right after. */
function splitText(t: XElement, text: string, offset: number): XElement {
  setText(t, text.slice(0, offset));
  setAttr(t, 'xml:space', 'preserve');
  const second = el('w:t', [['xml:space', 'preserve']], [{ type: 'text', raw: escapeText(text.slice(offset)) }]);
  insertAfter(t, [second]);
  return second;
}

/**
 * Replaces the first `{{name}}` of the paragraph with what `build` makes from the first run's rPr. The runs
 * the placeholder spans are isolated (split at its start and end), then removed; the new content goes where
 * the first one was. Returns false when the paragraph has no such placeholder.
 */
export function replacePlaceholderOnce(p: XElement, name: string, build: (rPr: XElement | undefined) => Produced): boolean {
  const m = placeholderRegex(name).exec(paragraphText(p));
  return m ? replacePlaceholderAt(p, m.index, m.index + m[0].length, build) : false;
}

/** Replaces the placeholder text at [ms, me) of the paragraph's joined text (see replacePlaceholderOnce). */
export function replacePlaceholderAt(p: XElement, ms: number, me: number, build: (rPr: XElement | undefined) => Produced): boolean {
  let segs = paragraphSegments(p);
  const text = segs.map((s) => s.text).join('');
  if (me > text.length || ms >= me) return false;
  const m = [text.slice(ms, me)];
  // Isolate the end.
  const endSeg = segs.find((s) => s.start < me && s.start + s.text.length >= me)!;
  const endOff = me - endSeg.start;
  if (endOff < endSeg.text.length) splitText(endSeg.t, endSeg.text, endOff);
  splitRunAfter(endSeg.run, endSeg.t);
  // Isolate the start.
  segs = paragraphSegments(p);
  const startSeg = segs.find((s) => s.start <= ms && s.start + s.text.length > ms)!;
  const startOff = ms - startSeg.start;
  let startT = startSeg.t;
  if (startOff > 0) startT = splitText(startSeg.t, startSeg.text, startOff);
  splitRunBefore(startT.parent!, startT);
  segs = paragraphSegments(p);
  const matched = segs.filter((s) => s.start >= ms && s.start + s.text.length <= me && s.text.length > 0);
  const runs = [...new Set(matched.map((s) => s.run))];
  const first = runs[0]!;
  const produced = build(child(first, 'w:rPr'));
  const whole = text.trim() === m[0] && p.parent !== undefined;
  if (produced.block?.length && whole) {
    const block = [...produced.block];
    if (needsTrailingParagraph(p.parent!, block) && childElements(p.parent!, 'w:p').length === 1) block.push(el('w:p'));
    const pPr = child(p, 'w:pPr');
    // A paragraph that only held the placeholder gives way to the block content.
    if (pPr && child(pPr, 'w:sectPr')) {
      // The paragraph carries a section break: keep it, empty, after the new content.
      replaceParagraphContent(p, []);
      insertBefore(p, block);
    } else replaceWith(p, block);
    return true;
  }
  insertBefore(first, produced.inline);
  removeAll(runs);
  return true;
}
