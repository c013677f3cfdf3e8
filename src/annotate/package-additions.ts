/**
 * What filling adds to the template's package beside the field's own XML: media parts and their
 * relationships (one part per distinct image, one relationship per part that shows it), Word built-in style
 * definitions the template lacks, numbering and footnotes brought by HTML values, and the page's text width
 * that sizes pictures and new tables. One instance per fill, so that what it learned of the package (styles
 * present, media written) is read once.
 */
import { styleDefinition } from '../docx/styles.js';
import { EMU_PER_INCH, EMU_PER_TWIP } from '../docx/drawing.js';
import { REL_TYPE, WML_CONTENT_TYPE } from '../docx/namespaces.js';
import { footnotesPartXml } from '../docx/wordml/footnotes.js';
import { addToNumberingPart, maxNumberingId, numberingPartXml } from '../docx/wordml/numbering.js';
import type { TemplateDocument } from './document.js';
import type { PreparedImage } from './images.js';
import { appendChild, attr, child, descendants, parseFragment } from '../docx/xml.js';

/** The text width of a template without a readable w:sectPr: Letter or A4 less one-inch margins, roughly. */
const DEFAULT_TEXT_WIDTH_EMU = 6 * EMU_PER_INCH;

/** The media parts of one image: the raster, and the SVG shown instead where supported. */
export interface ImageMedia {
  png: string;
  svg?: string;
}

export class PackageAdditions {
  private readonly mediaByImage = new Map<PreparedImage, ImageMedia>();
  private readonly relByMedia = new Map<string, string>();
  private textWidthEmu: number | undefined;
  private styleIds: Set<string> | undefined;
  private stylesPart: string | null | undefined;

  constructor(private readonly doc: TemplateDocument) {}

  /** The media parts of an image, written on first use: an image used by several fields is stored once. */
  imageMedia(image: PreparedImage): ImageMedia {
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
    return media;
  }

  private newMediaName(ext: string): string {
    let i = this.mediaByImage.size + this.relByMedia.size + 1;
    let name: string;
    do name = `word/media/folio-image-${i++}.${ext}`;
    while (this.doc.pkg.has(name));
    return name;
  }

  /** The relationship from `part` to a media part, one per pair. */
  mediaRel(part: string, media: string): string {
    const key = `${part}\u0000${media}`;
    let id = this.relByMedia.get(key);
    if (!id) {
      id = this.doc.addRelationship(part, `${REL_TYPE}/image`, relative(part, media));
      this.relByMedia.set(key, id);
    }
    return id;
  }

  /** Width of the page's text area in EMU (last w:sectPr of the body): the widest a picture or new table gets. */
  textWidth(): number {
    if (this.textWidthEmu === undefined) {
      this.textWidthEmu = DEFAULT_TEXT_WIDTH_EMU;
      const body = this.doc.fieldParts[0]!.doc.root;
      const sect = descendants(body, 'w:sectPr').pop();
      const pgSz = sect && child(sect, 'w:pgSz');
      const pgMar = sect && child(sect, 'w:pgMar');
      const w = pgSz ? Number(attr(pgSz, 'w:w')) : NaN;
      const l = pgMar ? Number(attr(pgMar, 'w:left')) : NaN;
      const r = pgMar ? Number(attr(pgMar, 'w:right')) : NaN;
      if (w > 0 && l >= 0 && r >= 0 && w - l - r > 0) this.textWidthEmu = (w - l - r) * EMU_PER_TWIP;
    }
    return this.textWidthEmu;
  }

  numberingPart(): { name: string; maxId: number } {
    let name = this.doc.relatedPart('numbering');
    if (!name || !this.doc.pkg.has(name)) {
      name = 'word/numbering.xml';
      this.doc.pkg.setText(name, numberingPartXml([], []));
      this.doc.addRelationship(this.doc.mainPart, `${REL_TYPE}/numbering`, relative(this.doc.mainPart, name));
      this.doc.ensureOverride(name, `${WML_CONTENT_TYPE}.numbering+xml`);
    }
    return { name, maxId: maxNumberingId(this.doc.pkg.text(name)!) };
  }

  mergeNumbering(abstractNums: string[], nums: string[]): void {
    const { name } = this.numberingPart();
    this.doc.pkg.setText(name, addToNumberingPart(this.doc.pkg.text(name)!, abstractNums, nums));
  }

  maxFootnoteId(): number {
    const name = this.doc.relatedPart('footnotes');
    const xml = name ? this.doc.pkg.text(name) : undefined;
    let max = 0;
    if (xml) for (const m of xml.matchAll(/<w:footnote\b[^>]*w:id="(-?\d+)"/g)) max = Math.max(max, Number(m[1]));
    return max;
  }

  /** Appends notes to the main part's footnotes part (made when missing); returns that part's name. */
  mergeFootnotes(notes: string[]): string {
    let name = this.doc.relatedPart('footnotes');
    if (!name || !this.doc.pkg.has(name)) {
      name = 'word/footnotes.xml';
      // The package's footnotes part as convert writes it: separators, and every prefix an HTML note can use.
      this.doc.pkg.setText(name, footnotesPartXml([]));
      this.doc.addRelationship(this.doc.mainPart, `${REL_TYPE}/footnotes`, relative(this.doc.mainPart, name));
      this.doc.ensureOverride(name, `${WML_CONTENT_TYPE}.footnotes+xml`);
    }
    const fp = this.doc.fieldPart(name);
    if (fp) {
      for (const n of parseFragment(notes.join(''))) appendChild(fp.doc.root, n);
      // The template's own part may declare only w: a note's links and pictures need r:, wp:, a: and pic:.
      this.doc.declareNamespaces(name, ['w', 'r', 'wp', 'a', 'pic']);
      this.doc.markDirty(name);
    } else {
      const xml = this.doc.pkg.text(name)!;
      const close = xml.lastIndexOf('</w:footnotes>');
      this.doc.pkg.setText(name, xml.slice(0, close) + notes.join('') + xml.slice(close));
    }
    return name;
  }

  /** Adds the definitions of Word built-in styles the template lacks (from src/docx/styles.ts). */
  ensureStyles(ids: string[]): Set<string> {
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
}

/** A part name relative to the part whose relationships point to it. */
export function relative(fromPart: string, toPart: string): string {
  const fromDir = fromPart.slice(0, fromPart.lastIndexOf('/') + 1);
  return toPart.startsWith(fromDir) ? toPart.slice(fromDir.length) : `/${toPart}`;
}
