/**
 * DOCX → document model (model.ts): the package is opened once with openDocx (its bounds), each part is
 * parsed once into xml.ts's tree by the read-only parse (parse.ts: parseXml's tree and bounds, no DOCTYPE,
 * bounded depth, one element budget for all the parts of the document), and the body, then the notes its
 * references name, are read into blocks. Pictures
 * are embedded within a byte budget; beyond it, or with `images: 'drop'`, they keep only their alt text.
 */
import { FolioError } from '../../errors.js';
import { isZip } from '../../formats/sniff.js';
import { DEFAULT_PACKAGE_LIMITS, openDocx, type DocxPackage } from '../package.js';
import { attr, child, childElements, MAX_DOCUMENT_ELEMENTS, textContent, type ParseBudget, type XDocument, type XElement } from '../xml.js';
import { nodeCounter, type ReadContext, type ReadLimits, type Relationship } from './context.js';
import { readBlocks } from './blocks.js';
import { contentTypes, declaredType, imageKind, type ContentTypes } from './image-kind.js';
import { islandLoader } from './islands.js';
import { decodeChunk, mhtHtml, rtfText } from './chunk-text.js';
import type { Block, DocModel, ImageData, Inline, Note } from './model.js';
import { Numbering } from './numbering.js';
import { parseForRead } from './parse.js';
import { StyleSheet } from './styles.js';

export type { ReadLimits } from './context.js';

/** A parse of one part into xml.ts's tree (parseForRead; parseXml gives the same tree, for comparison). */
export type PartParser = (xml: string, part: string, budget?: ParseBudget) => XDocument;

export const DEFAULT_READ_LIMITS: ReadLimits = {
  maxNodes: 2_000_000,
  maxDepth: 32,
  maxTableCells: 100_000,
  maxImageBytes: 20 * 1024 * 1024,
  maxShapes: 10_000,
};

export interface ReadOptions {
  images?: 'inline' | 'drop';
  limits?: Partial<ReadLimits>;
  /**
   * HTML → a DOCX, for embedded HTML chunks (w:altChunk): the caller's HTML reader (src/convert's), since the
   * OOXML layer has none. Without it an HTML chunk keeps only its text, with a warning.
   */
  htmlToDocx?: (html: string) => Uint8Array;
}

/** Embedded chunks (w:altChunk) read per document, DOCX chunks in DOCX chunks included. */
export const MAX_CHUNKS = 64;
/** DOCX chunks nested in DOCX chunks (an HTML chunk read through a DOCX counts one level). */
export const MAX_CHUNK_DEPTH = 3;

/**
 * What a document and the chunks read inside it share: one set of budgets (nodes, parse elements, image bytes,
 * shapes, chunks), one list of warnings, and the chunk nesting.
 */
interface Shared {
  count: (n?: number) => void;
  budget: ParseBudget;
  warnings: Set<string>;
  imageBytes: number;
  shapes: number;
  chunks: number;
}

const REL_NS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships/';

/** A leading '/', an empty segment, or a '.' or '..' segment: resolvePart's general case. */
const PATH_STEPS = /^\/|\/\/|\/$|(^|\/)\.\.?(\/|$)/;

/** A relationship target resolved against the folder of the part that names it. */
export function resolvePart(fromPart: string, target: string): string {
  // The usual target, a plain relative path ("media/image1.png"): no segment to drop or climb.
  if (target !== '' && !PATH_STEPS.test(target)) {
    const slash = fromPart.lastIndexOf('/');
    return slash < 0 ? target : `${fromPart.slice(0, slash)}/${target}`;
  }
  const parts = target.startsWith('/') ? [] : fromPart.split('/').slice(0, -1);
  for (const seg of target.replace(/^\//, '').split('/')) {
    if (seg === '..') parts.pop();
    else if (seg !== '.' && seg !== '') parts.push(seg);
  }
  return parts.join('/');
}

class Reader {
  private contentTypes: ContentTypes | undefined;
  private readonly imageCache = new Map<string, ImageData | undefined>();
  private readonly limits: ReadLimits;
  private readonly shared: Shared;
  /** Notes of DOCX chunks read inside this document, added after its own. */
  private readonly chunkNotes: Note[] = [];
  /** The read context of a part of this package (set by read()). */
  private contextOf: ((rels: Map<string, Relationship>) => ReadContext) | undefined;
  /** Chunk parts of this package being read inside each other. */
  private partDepth = 0;

  constructor(
    private readonly pkg: DocxPackage,
    private readonly options: ReadOptions,
    private readonly parsePart: PartParser,
    shared?: Shared,
    /** Chunk nesting of this package (0: the document itself). */
    private readonly chunkDepth = 0,
  ) {
    this.limits = { ...DEFAULT_READ_LIMITS, ...options.limits };
    this.shared = shared ?? {
      count: nodeCounter(this.limits.maxNodes),
      budget: { elements: MAX_DOCUMENT_ELEMENTS },
      warnings: new Set(),
      imageBytes: 0,
      shapes: 0,
      chunks: 0,
    };
  }

  private get count(): (n?: number) => void {
    return this.shared.count;
  }

  private parse(part: string): XElement | undefined {
    const text = this.pkg.text(part);
    return text === undefined ? undefined : this.parsePart(text, part, this.shared.budget).root;
  }

  private types(): ContentTypes {
    return (this.contentTypes ??= contentTypes(this.pkg.has('[Content_Types].xml') ? this.parse('[Content_Types].xml') : undefined));
  }

  private rels(part: string): { byId: Map<string, Relationship>; byType: Map<string, string>; customXml: string[] } {
    const slash = part.lastIndexOf('/');
    const relsPart = `${part.slice(0, slash + 1)}_rels/${part.slice(slash + 1)}.rels`;
    const byId = new Map<string, Relationship>();
    const byType = new Map<string, string>();
    const customXml: string[] = [];
    const root = this.pkg.has(relsPart) ? this.parse(relsPart) : undefined;
    for (const r of root ? childElements(root, 'Relationship') : []) {
      const id = attr(r, 'Id');
      const target = attr(r, 'Target');
      if (!id || target === undefined) continue;
      const external = attr(r, 'TargetMode') === 'External';
      byId.set(id, { target: external ? target : resolvePart(part, target), external });
      const type = attr(r, 'Type') ?? '';
      if (!external && !byType.has(type)) byType.set(type.startsWith(REL_NS) ? type.slice(REL_NS.length) : type, resolvePart(part, target));
      if (!external && type === `${REL_NS}customXml`) customXml.push(resolvePart(part, target));
    }
    return { byId, byType, customXml };
  }

  private warn = (m: string) => {
    if (this.shared.warnings.size < 50) this.shared.warnings.add(m);
  };

  private image(rels: Map<string, Relationship>, rId: string): ImageData | undefined {
    const rel = rels.get(rId);
    if (!rel) return undefined;
    if (this.options.images === 'drop') {
      this.warn('images were dropped (images=drop); their alt text is kept');
      return undefined;
    }
    if (rel.external) {
      this.warn('linked (external) images are never fetched; their alt text is kept');
      return undefined;
    }
    if (this.imageCache.has(rel.target)) return this.imageCache.get(rel.target);
    const size = this.pkg.declaredSize(rel.target);
    let data: ImageData | undefined;
    if (size === undefined) this.warn('an image whose part is missing was dropped');
    else if (this.shared.imageBytes + size > this.limits.maxImageBytes) {
      this.warn(`images beyond ${Math.round(this.limits.maxImageBytes / 1048576)} MB in total were dropped; their alt text is kept`);
    } else {
      // The kind from the bytes, else from [Content_Types].xml, never from the extension alone (image-kind.ts).
      const bytes = this.pkg.get(rel.target)!;
      const mime = imageKind(bytes, declaredType(this.types(), rel.target));
      if (!mime) this.warn('an image whose bytes are not a picture of a known kind (PNG, JPEG, GIF, WebP, BMP, TIFF, EMF, WMF, SVG) was dropped');
      else {
        this.shared.imageBytes += bytes.length;
        data = { mime, bytes };
      }
    }
    this.imageCache.set(rel.target, data);
    return data;
  }

  read(): DocModel {
    const main = this.pkg.mainDocumentPart()!;
    const docRoot = this.parse(main);
    const body = docRoot && child(docRoot, 'w:body');
    if (!body) throw new FolioError('UNPROCESSABLE_DOCUMENT', 'The main document part has no body');
    const mainRels = this.rels(main);
    const part = (type: string) => {
      const name = mainRels.byType.get(type);
      return name && this.pkg.has(name) ? name : undefined;
    };
    const stylesPart = part('styles');
    const styles = new StyleSheet(stylesPart ? this.parse(stylesPart) : undefined);
    const numberingPart = part('numbering');
    const numbering = new Numbering(numberingPart ? this.parse(numberingPart) : undefined, (id) => styles.numberingStyleNumId(id));
    const noteRefs: ReadContext['noteRefs'] = [];
    const writtenByFolio = this.writtenByFolio();
    const island = islandLoader(this.pkg, main, mainRels.customXml, (name) => this.parse(name), this.warn);
    const context = (rels: Map<string, Relationship>): ReadContext => ({
      styles,
      numbering,
      rels,
      limits: this.limits,
      images: this.options.images ?? 'inline',
      writtenByFolio,
      image: (rId) => this.image(rels, rId),
      noteRefs,
      island,
      warn: this.warn,
      count: this.count,
      altChunk: (rId) => this.altChunk(rels, rId),
      shape: () => {
        if (++this.shared.shapes <= this.limits.maxShapes) return true;
        this.warn(`pictures and text boxes beyond ${this.limits.maxShapes} in the document were left out`);
        return false;
      },
    });
    this.contextOf = context;
    const blocks = readBlocks(context(mainRels.byId), body.children, 0);

    const notes: Note[] = [];
    const seen = new Set<string>();
    const noteParts = new Map<string, { byId: Map<string, XElement>; ctx: ReadContext } | undefined>();
    const notesOf = (kind: 'footnote' | 'endnote') => {
      if (noteParts.has(kind)) return noteParts.get(kind);
      const name = part(kind === 'footnote' ? 'footnotes' : 'endnotes');
      const root = name ? this.parse(name) : undefined;
      let v: { byId: Map<string, XElement>; ctx: ReadContext } | undefined;
      if (name && root) {
        const byId = new Map<string, XElement>();
        for (const n of childElements(root, `w:${kind}`)) {
          const id = attr(n, 'w:id');
          if (id !== undefined && !attr(n, 'w:type')) byId.set(id, n);
        }
        v = { byId, ctx: context(this.rels(name).byId) };
      }
      noteParts.set(kind, v);
      return v;
    };
    // Notes inside notes are not a thing in Word; references met while reading notes are not followed.
    const refs = [...noteRefs];
    for (const ref of refs) {
      const key = `${ref.kind}:${ref.id}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const src = notesOf(ref.kind);
      const el = src?.byId.get(ref.id);
      notes.push({ kind: ref.kind, id: ref.id, blocks: el ? readBlocks(src!.ctx, el.children, 1) : [] });
    }
    notes.push(...this.chunkNotes);
    return { title: this.title(), blocks, notes, warnings: [...this.shared.warnings] };
  }

  /**
   * An embedded chunk (w:altChunk → its relationship's part) as blocks, by the part's declared content type (or
   * its bytes): a DOCX package or WordprocessingML part read like the document (chunk depth MAX_CHUNK_DEPTH);
   * HTML (also inside a MIME web archive) through the caller's HTML reader (options.htmlToDocx) into a DOCX read
   * the same way; RTF and plain text as paragraphs of their text (engine threads have no office engine to read
   * RTF's formatting: a warning says so). At most MAX_CHUNKS per document, every read within the document's
   * budgets.
   */
  private altChunk(rels: Map<string, Relationship>, rId: string | undefined): Block[] {
    const rel = rId ? rels.get(rId) : undefined;
    if (!rel || rel.external || !this.pkg.has(rel.target)) {
      this.warn('an embedded chunk (w:altChunk) whose part is missing or external was left out');
      return [];
    }
    if (++this.shared.chunks > MAX_CHUNKS) {
      this.warn(`embedded chunks (w:altChunk) beyond ${MAX_CHUNKS} in the document were left out`);
      return [];
    }
    const type = declaredType(this.types(), rel.target) ?? '';
    const bytes = this.pkg.get(rel.target)!;
    const zip = isZip(bytes);
    if (type === 'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml' && !zip) return this.chunkPart(rel.target);
    if (zip || /wordprocessingml\.(document|template)(\.main\+xml)?$|ms-word\.document\.macroenabled/.test(type)) return this.chunkDocx(bytes);
    if (
      type === 'text/html' ||
      type === 'application/xhtml+xml' ||
      type === 'message/rfc822' ||
      type === 'multipart/related' ||
      /\.(html?|xhtml|mht(ml)?)$/i.test(rel.target)
    ) {
      const html = type === 'message/rfc822' || type === 'multipart/related' || /\.mht(ml)?$/i.test(rel.target) ? mhtHtml(bytes) : decodeChunk(bytes);
      if (html === undefined) {
        this.warn('an embedded web archive chunk without an HTML part was left out');
        return [];
      }
      if (!this.options.htmlToDocx) {
        this.warn('an embedded HTML chunk was read as plain text');
        return this.textBlocks(html.replace(/<[^>]*>/g, ' '));
      }
      return this.chunkDocx(this.options.htmlToDocx(html));
    }
    if (type === 'text/rtf' || type === 'application/rtf' || /\.rtf$/i.test(rel.target)) {
      this.warn('an embedded RTF chunk was read as its plain text (its formatting needs the office engine, which DOCX → Markdown/HTML does not use)');
      return this.textBlocks(rtfText(decodeChunk(bytes, 'latin1')));
    }
    if (type === 'text/plain' || /\.txt$/i.test(rel.target)) return this.textBlocks(decodeChunk(bytes));
    this.warn(`an embedded chunk of an unsupported kind (${type.slice(0, 60) || 'unknown'}) was left out`);
    return [];
  }

  /** Paragraphs of plain text, one per line (blank lines dropped). */
  private textBlocks(text: string): Block[] {
    const out: Block[] = [];
    for (const line of text.split(/\r\n|\r|\n/)) {
      const t = line.replace(/\s+/g, ' ').trim();
      if (!t) continue;
      this.count();
      out.push({ t: 'para', inlines: [{ t: 'text', text: t, m: {} }], f: {} });
    }
    return out;
  }

  /** A WordprocessingML part of this package holding a chunk: its body read with its own relationships. */
  private chunkPart(part: string): Block[] {
    if (this.chunkDepth + this.partDepth + 1 > MAX_CHUNK_DEPTH || !this.contextOf) {
      this.warn(`embedded chunks nested more than ${MAX_CHUNK_DEPTH} levels deep were left out`);
      return [];
    }
    const root = this.parse(part);
    const body = root && child(root, 'w:body');
    if (!body) return [];
    // The document's styles and numbering, the part's own relationships.
    this.partDepth++;
    try {
      return readBlocks(this.contextOf(this.rels(part).byId), body.children, 1);
    } finally {
      this.partDepth--;
    }
  }

  /** A DOCX package embedded as a chunk: read as a document of its own, its notes added after this one's. */
  private chunkDocx(bytes: Uint8Array): Block[] {
    if (this.chunkDepth + 1 > MAX_CHUNK_DEPTH) {
      this.warn(`embedded chunks nested more than ${MAX_CHUNK_DEPTH} levels deep were left out`);
      return [];
    }
    const pkg = openDocx(bytes, { ...DEFAULT_PACKAGE_LIMITS, partLabel: 'a part of an embedded chunk' });
    const model = new Reader(pkg, this.options, this.parsePart, this.shared, this.chunkDepth + 1).read();
    // Note ids are per package: the chunk's are renamed so they cannot meet the document's.
    const prefix = `chunk${this.shared.chunks}-`;
    renameNotes(model.blocks, prefix);
    for (const n of model.notes) {
      renameNotes(n.blocks, prefix);
      this.chunkNotes.push({ ...n, id: prefix + n.id });
    }
    return model.blocks;
  }

  /** Whether the extended properties name Folio as the application that wrote the package. */
  private writtenByFolio(): boolean {
    const name = this.rels('').byType.get('extended-properties') ?? 'docProps/app.xml';
    if (!this.pkg.has(name) || (this.pkg.declaredSize(name) ?? Infinity) > 65_536) return false;
    const root = this.parse(name);
    const app = root && child(root, 'Application');
    return !!app && textContent(app).trim() === 'Folio';
  }

  /** dc:title of the core properties, if any. */
  private title(): string | undefined {
    const pkgRels = this.rels('');
    const core =
      [...pkgRels.byType.entries()].find(([t]) => t.endsWith('/core-properties') || t === 'metadata/core-properties')?.[1] ?? 'docProps/core.xml';
    if (!this.pkg.has(core)) return undefined;
    const root = this.parse(core);
    const t = root && child(root, 'dc:title');
    const s = t ? textContent(t).trim() : '';
    return s ? s.slice(0, 500) : undefined;
  }
}

/** Reads a DOCX into the document model. Throws FolioError (INVALID_FILE_FORMAT, UNPROCESSABLE_DOCUMENT). */
export function readDocxModel(bytes: Uint8Array, options: ReadOptions = {}): DocModel {
  return readDocxModelWith(parseForRead, bytes, options);
}

/** readDocxModel with another parse of the parts (scripts/docx-read-identity.ts compares parseXml's read). */
export function readDocxModelWith(parse: PartParser, bytes: Uint8Array, options: ReadOptions = {}): DocModel {
  const pkg = openDocx(bytes, { ...DEFAULT_PACKAGE_LIMITS, partLabel: 'a part the converter reads' });
  return new Reader(pkg, options, parse).read();
}

/** Renames the note references of blocks (a chunk's notes, whose ids are per package). */
function renameNotes(blocks: Block[], prefix: string): void {
  const inlines = (list: Inline[]) => {
    for (const i of list) {
      if (i.t === 'note') i.id = prefix + i.id;
      else if (i.t === 'link') inlines(i.children);
    }
  };
  const walk = (list: Block[]) => {
    for (const b of list) {
      if (b.t === 'para' || b.t === 'heading' || b.t === 'code') inlines(b.inlines);
      else if (b.t === 'quote' || b.t === 'source') walk(b.blocks);
      else if (b.t === 'list') for (const it of b.items) walk(it.blocks);
      else if (b.t === 'table') for (const r of b.rows) for (const c of r.cells) walk(c.blocks);
    }
  };
  walk(blocks);
}
