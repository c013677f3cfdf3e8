/**
 * Values → WordprocessingML: the runs (and, where a value can stand alone, the paragraphs and tables) that a
 * text, date, checkbox, image, link or HTML value becomes, in the formatting of the field it replaces.
 * HTML goes through convert's public fragment writer; its numbering, footnotes, styles, relationships and
 * media are merged into the template here. Every run written is remembered, so that `{{name}}` typed inside
 * a value stays text and is never taken for a field.
 */
import { htmlToWordFragment } from '../convert/index.js';
import { EMU_PER_TWIP, inlineDrawingXml } from '../docx/drawing.js';
import { REL_TYPE } from '../docx/namespaces.js';
import { HYPERLINK_DIRECT, HYPERLINK_STYLE, rPrXml, type RunProps } from '../docx/wordml/run-props.js';
import { DEFAULT_DATE_PICTURE, formatWordDate } from './dates.js';
import type { TemplateDocument } from './document.js';
import { drawnSize, pixels, type Box, type PreparedImage } from './images.js';
import { PackageAdditions } from './package-additions.js';
import { mergeRunProps, runPropsForDrawing, sortRunProps, textRuns, type Produced } from './runs.js';
import type { FieldOptions, ResolvedValue } from './types.js';
import { child, clone, descendants, el, escapeAttr, parseFragment, remove, type XElement, type XNode } from '../docx/xml.js';

/** Where a value is written: the part, the field's run formatting, its options and (for images) its box. */
export interface ValueSite {
  part: string;
  /** The field's run properties, cleaned of the placeholder style; none when the value keeps no formatting. */
  base: XElement | undefined;
  options: FieldOptions;
  /** The drawing extent a picture control already had: an image is fitted into it. */
  box?: Box;
  /** `fields[i]`, for warnings. */
  fieldPath: string;
}

/** A link's run properties (src/docx/wordml), with and without the Hyperlink style; their XML is computed once. */
const LINK_WITH_STYLE: RunProps = { rStyle: HYPERLINK_STYLE, ...HYPERLINK_DIRECT };
const LINK_DIRECT: RunProps = { ...HYPERLINK_DIRECT };

export class ValueWriter {
  /** Runs written by a fill: `{{name}}` typed inside a value is the value's text, never a field. */
  private readonly written = new WeakSet<XElement>();
  private htmlCount = 0;

  constructor(
    private readonly doc: TemplateDocument,
    private readonly additions: PackageAdditions,
    private readonly warnings: string[],
  ) {}

  /** Whether a run was written by a value (and so holds no field). */
  wrote(run: XElement): boolean {
    return this.written.has(run);
  }

  produce(v: ResolvedValue, at: ValueSite): Produced {
    const produced = this.content(v, at);
    for (const n of [...produced.inline, ...(produced.block ?? [])]) {
      if (n.type !== 'el') continue;
      if (n.name === 'w:r') this.written.add(n);
      for (const r of descendants(n, 'w:r')) this.written.add(r);
    }
    return produced;
  }

  private content(v: ResolvedValue, at: ValueSite): Produced {
    const { part, base, options } = at;
    switch (v.type) {
      case 'text':
        return { inline: textRuns(v.text, base) };
      case 'image':
        return { inline: [this.imageRun(part, v.image, base, options, at.box)] };
      case 'link':
        return { inline: [this.linkNode(part, v.url, v.text, base)] };
      case 'html':
        return this.htmlContent(part, v.html, base, at.fieldPath);
      case 'date':
        return { inline: textRuns(formatWordDate(v.date, options.format ?? DEFAULT_DATE_PICTURE, options.locale), base) };
      case 'checkbox':
        return { inline: textRuns(v.checked ? '\u2612' : '\u2610', base) };
      case 'table':
        return { inline: [] };
    }
  }

  private imageRun(part: string, image: PreparedImage, base: XElement | undefined, options: FieldOptions, box: Box | undefined): XElement {
    const media = this.additions.imageMedia(image);
    const relId = this.additions.mediaRel(part, media.png);
    const svgRelId = media.svg ? this.additions.mediaRel(part, media.svg) : undefined;
    const dims = options.dimensions ? { width: pixels(options.dimensions.width), height: pixels(options.dimensions.height) } : undefined;
    const size = drawnSize(image, dims, box, this.additions.textWidth());
    const docPrId = this.doc.allocateDocPrId();
    this.doc.declareNamespaces(part, ['w', 'r', 'wp']);
    const description = options.alt ?? image.description;
    const xml = `<w:r>${base ? runPropsForDrawing(base) : ''}${inlineDrawingXml({ rId: relId, svgRId: svgRelId, widthEmu: size.cx, heightEmu: size.cy, id: docPrId, name: `Picture ${docPrId}`, description })}</w:r>`;
    return parseFragment(xml)[0] as XElement;
  }

  private linkNode(part: string, url: string, text: string, base: XElement | undefined): XElement {
    const relId = this.doc.addRelationship(part, `${REL_TYPE}/hyperlink`, url, true);
    this.doc.declareNamespaces(part, ['r']);
    const hasStyle = this.additions.ensureStyles([HYPERLINK_STYLE]).has(HYPERLINK_STYLE);
    const rPr = base ? clone(base) : el('w:rPr');
    // The link look: the Hyperlink character style when the template has (or got) one, direct formatting too
    // so that it shows even where the style is missing.
    for (const name of ['w:rStyle', 'w:color', 'w:u']) {
      const old = child(rPr, name);
      if (old) remove(old);
    }
    const extra = (parseFragment(rPrXml(hasStyle ? LINK_WITH_STYLE : LINK_DIRECT))[0] as XElement).children;
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
    const numbering = this.additions.numberingPart();
    const firstNumId = numbering.maxId + 1;
    const firstFootnoteId = this.additions.maxFootnoteId() + 1;
    const firstDrawingId = this.doc.allocateDocPrId();
    const frag = htmlToWordFragment(html, {
      textWidthTwips: Math.round(this.additions.textWidth() / EMU_PER_TWIP),
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
      rels.push({ id: r.id, type: `${REL_TYPE}/${r.type}`, target: r.target, external: r.external });
    }
    if (frag.relationships.length) this.doc.markRelsDirty(part);
    for (const m of frag.media) {
      this.doc.pkg.set(m.path, m.bytes);
      this.doc.ensureDefaultContentType(m.extension, m.contentType);
    }
    if (frag.abstractNums.length || frag.nums.length) this.additions.mergeNumbering(frag.abstractNums, frag.nums);
    let bodyXml = frag.bodyXml;
    if (frag.footnotes.length) {
      if (part === this.doc.mainPart) {
        const notesPart = this.additions.mergeFootnotes(frag.footnotes);
        // r:id and r:embed inside a note resolve against the footnotes part's own relationships.
        const notesXml = frag.footnotes.join('');
        const used = frag.relationships.filter((r) => notesXml.includes(`"${r.id}"`));
        const noteRels = used.length ? this.doc.relationships(notesPart) : [];
        for (const r of used) noteRels.push({ id: r.id, type: `${REL_TYPE}/${r.type}`, target: r.target, external: r.external });
        if (used.length) this.doc.markRelsDirty(notesPart);
      } else {
        bodyXml = bodyXml.replace(/<w:r>(?:(?!<w:r>).)*?<w:footnoteReference [^>]*\/><\/w:r>/g, '');
        this.warnings.push(`${fieldPath}: footnotes are only kept in the document body`);
      }
    }
    const usedStyles = new Set([...bodyXml.matchAll(/<w:(?:pStyle|rStyle|tblStyle) w:val="([^"]+)"/g)].map((m) => m[1]!));
    this.additions.ensureStyles([...usedStyles]);
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
}
