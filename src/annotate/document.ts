/**
 * The template being filled: the package (src/docx/package.ts's openDocx, within ANNOTATE_LIMITS), the parts that can
 * hold fields parsed into trees, and the package-level bookkeeping every fill needs — relationships
 * per part, content types, media names, and fresh ids (wp:docPr, w:sdt w:id, numbering) that never collide.
 */
import { randomInt } from 'node:crypto';
import { FolioError } from '../errors.js';
import { NS, PACKAGE_RELS_NS, REL_TYPE, XML_DECL } from '../docx/namespaces.js';
import { assertNoDoctype, DEFAULT_PACKAGE_LIMITS, openDocx, type DocxLimits, type DocxPackage } from '../docx/package.js';
import {
  escapeAttr,
  parseXml,
  serializeXmlBytes,
  walk,
  attr,
  setAttr,
  MAX_DOCUMENT_ELEMENTS,
  type ParseBudget,
  type XDocument,
} from '../docx/xml.js';

/** Largest part annotate inflates (only XML parts are ever inflated: content types, rels, parts it reads). */
export const MAX_INFLATED_PART = 64 * 1024 * 1024;
/** Everything annotate inflates for one request: it holds these bytes (and their text) while it works. */
export const MAX_INFLATED_TOTAL = 160 * 1024 * 1024;
/**
 * The template's bounds: the generic declared-size bounds of the directory, and tighter caps on what is
 * inflated. Media are never inflated (copied as they are), so they only count against the declared sizes.
 */
export const ANNOTATE_LIMITS: DocxLimits = {
  ...DEFAULT_PACKAGE_LIMITS,
  maxInflatedPart: MAX_INFLATED_PART,
  maxInflatedTotal: MAX_INFLATED_TOTAL,
  partLabel: 'a part annotate reads',
};

export type PartLocation = 'body' | 'header' | 'footer' | 'footnote' | 'endnote';

export interface FieldPart {
  name: string;
  location: PartLocation;
  doc: XDocument;
}

const REL_TYPES: Record<string, PartLocation> = {
  [`${REL_TYPE}/header`]: 'header',
  [`${REL_TYPE}/footer`]: 'footer',
  [`${REL_TYPE}/footnotes`]: 'footnote',
  [`${REL_TYPE}/endnotes`]: 'endnote',
};

export interface Relationship {
  id: string;
  type: string;
  target: string;
  external?: boolean;
}

/** Directory of a part name, with a trailing slash ('word/' for 'word/document.xml'). */
const dirOf = (name: string) => name.slice(0, name.lastIndexOf('/') + 1);
const relsNameOf = (name: string) => `${dirOf(name)}_rels/${name.slice(name.lastIndexOf('/') + 1)}.rels`;

function resolveTarget(base: string, target: string): string {
  if (target.startsWith('/')) return target.slice(1);
  const parts = (dirOf(base) + target).split('/');
  const out: string[] = [];
  for (const p of parts) {
    if (p === '..') out.pop();
    else if (p !== '.' && p !== '') out.push(p);
  }
  return out.join('/');
}

/**
 * A part parsed into a tree costs about 25–30 times its size in memory (one object per element, attribute
 * and text run): 16 MB of WordprocessingML — several hundred dense pages — stays within a few hundred MB,
 * well inside an engine worker's heap. Larger parts, and bodies, headers and notes beyond 32 MB together,
 * are refused by name instead of being ground through.
 */
export const MAX_PARSED_PART = 16 * 1024 * 1024;
export const MAX_PARSED_TOTAL = 32 * 1024 * 1024;
const mb = (n: number) => `${Math.round(n / (1024 * 1024))} MB`;

function checkParseable(name: string, size: number): void {
  if (size > MAX_PARSED_PART) {
    throw new FolioError(
      'UNPROCESSABLE_DOCUMENT',
      `The part ${name} is too large to fill: ${mb(size)} of XML, at most ${mb(MAX_PARSED_PART)} per part`,
    );
  }
}

export class TemplateDocument {
  readonly mainPart: string;
  /** Parts that can hold fields, in a stable order: body first, then headers, footers, notes. */
  readonly fieldParts: FieldPart[] = [];
  private readonly parsed = new Map<string, XDocument>();
  private readonly dirty = new Set<string>();
  private readonly relsCache = new Map<string, Relationship[]>();
  private readonly dirtyRels = new Set<string>();
  private readonly relIds = new WeakMap<Relationship[], Set<string>>();
  private readonly relatedCache = new Map<string, string>();
  private contentTypes: string;
  private contentTypesDirty = false;
  private nextDocPrId = 1;
  private readonly usedSdtIds = new Set<string>();
  private mediaCounter = 0;
  private relCounter = 0;
  /** XML bytes parsed into trees so far (see MAX_PARSED_TOTAL). */
  private parsedBytes = 0;
  private readonly elementBudget: ParseBudget = { elements: MAX_DOCUMENT_ELEMENTS };

  /** wp:docPr ids per part, read once (unchanged parts are not parsed). */
  private readonly docPrIds = new Map<string, string[]>();

  private constructor(readonly pkg: DocxPackage) {
    this.mainPart = pkg.mainDocumentPart()!;
    this.contentTypes = pkg.text('[Content_Types].xml') ?? '';
  }

  /** Reads and checks the package: a DOCX, no DOCTYPE/ENTITY in any XML part, field parts parsed. */
  static read(bytes: Uint8Array): TemplateDocument {
    const pkg = openDocx(bytes, ANNOTATE_LIMITS);
    // The main part's size is known before anything is inflated: refuse an oversized one with its own limit.
    checkParseable(pkg.mainDocumentPart()!, pkg.declaredSize(pkg.mainDocumentPart()!) ?? 0);
    for (const name of pkg.names()) {
      if (!/\.(xml|rels|vml)$/i.test(name)) continue;
      const data = pkg.get(name)!;
      // A cheap byte scan first: most parts have no '<!' beyond comments.
      if (data.includes(0x21 /* ! */)) assertNoDoctype(decodeXmlBytes(data), name);
    }
    const doc = new TemplateDocument(pkg);
    doc.collectFieldParts();
    doc.scanIds();
    return doc;
  }

  private collectFieldParts(): void {
    this.fieldParts.push({ name: this.mainPart, location: 'body', doc: this.parse(this.mainPart) });
    const rels = this.relationships(this.mainPart);
    const order: PartLocation[] = ['header', 'footer', 'footnote', 'endnote'];
    const found = rels
      .filter((r) => !r.external && REL_TYPES[r.type])
      .map((r) => ({ name: resolveTarget(this.mainPart, r.target), location: REL_TYPES[r.type]! }))
      .filter((p) => this.pkg.has(p.name))
      .sort((a, b) => order.indexOf(a.location) - order.indexOf(b.location) || a.name.localeCompare(b.name, 'en', { numeric: true }));
    const seen = new Set<string>();
    for (const p of found) {
      if (seen.has(p.name)) continue;
      seen.add(p.name);
      this.fieldParts.push({ ...p, doc: this.parse(p.name) });
    }
  }

  /** The largest wp:docPr id and every w:sdt id already in use anywhere in the package. */
  private scanIds(): void {
    let max = 0;
    for (const name of this.pkg.names()) {
      if (!name.endsWith('.xml') || !name.startsWith('word/')) continue;
      const xml = this.pkg.text(name)!;
      if (!xml.includes('<w:id ') && !xml.includes('docPr') && !xml.includes('cNvPr')) continue;
      const docPr: string[] = [];
      for (const m of xml.matchAll(/<(wp:docPr|pic:cNvPr|wps:cNvPr|wpg:cNvPr)\b[^>]*?\sid="(\d+)"/g)) {
        max = Math.max(max, Number(m[2]));
        if (m[1] === 'wp:docPr') docPr.push(m[2]!);
      }
      this.docPrIds.set(name, docPr);
      for (const m of xml.matchAll(/<w:id w:val="(-?\d+)"/g)) this.usedSdtIds.add(m[1]!);
    }
    this.nextDocPrId = max + 1;
  }

  parse(name: string): XDocument {
    let d = this.parsed.get(name);
    if (!d) {
      const size = this.pkg.declaredSize(name) ?? 0;
      checkParseable(name, size);
      this.parsedBytes += size;
      if (this.parsedBytes > MAX_PARSED_TOTAL) {
        throw new FolioError(
          'UNPROCESSABLE_DOCUMENT',
          `The document is too large to fill: the parts that can hold fields exceed ${mb(MAX_PARSED_TOTAL)} together (at ${name})`,
        );
      }
      const text = this.pkg.text(name);
      if (text === undefined) throw new FolioError('UNPROCESSABLE_DOCUMENT', `The package has no part ${name}`);
      d = parseXml(text, name, this.elementBudget);
      this.parsed.set(name, d);
    }
    return d;
  }

  markDirty(name: string): void {
    this.dirty.add(name);
  }

  allocateDocPrId(): number {
    return this.nextDocPrId++;
  }

  /** A fresh w:sdt w:id (signed 32-bit, as Word writes them). */
  allocateSdtId(): string {
    for (;;) {
      const id = String(randomInt(1, 0x7fffffff));
      if (!this.usedSdtIds.has(id)) {
        this.usedSdtIds.add(id);
        return id;
      }
    }
  }

  relationships(part: string): Relationship[] {
    const relsName = relsNameOf(part);
    let rels = this.relsCache.get(relsName);
    if (!rels) {
      rels = [];
      const xml = this.pkg.text(relsName);
      if (xml) {
        for (const m of xml.matchAll(/<Relationship\b([^>]*?)\/?>/g)) {
          const a = m[1]!;
          const get = (k: string) => new RegExp(`\\s${k}="([^"]*)"`).exec(a)?.[1];
          const id = get('Id');
          const type = get('Type');
          const target = get('Target');
          if (id && type && target !== undefined) rels.push({ id, type, target, external: get('TargetMode') === 'External' });
        }
      }
      this.relsCache.set(relsName, rels);
    }
    return rels;
  }

  addRelationship(part: string, type: string, target: string, external = false): string {
    const rels = this.relationships(part);
    // Ids in use, kept per list (a link field repeated thousands of times adds thousands of relationships);
    // rebuilt when relationships were added to the list elsewhere (HTML fragments push their own).
    let taken = this.relIds.get(rels);
    if (!taken || taken.size !== rels.length) {
      taken = new Set(rels.map((r) => r.id));
      this.relIds.set(rels, taken);
    }
    let id: string;
    do id = `rIdFolio${++this.relCounter}`;
    while (taken.has(id));
    rels.push({ id, type, target, external });
    taken.add(id);
    this.dirtyRels.add(relsNameOf(part));
    return id;
  }

  markRelsDirty(part: string): void {
    this.relationships(part);
    this.dirtyRels.add(relsNameOf(part));
  }

  ensureDefaultContentType(extension: string, contentType: string): void {
    const re = new RegExp(`<Default\\s[^>]*Extension="${extension}"`, 'i');
    if (re.test(this.contentTypes)) return;
    this.contentTypes = this.contentTypes.replace(/<\/Types>\s*$/, `<Default Extension="${extension}" ContentType="${contentType}"/></Types>`);
    this.contentTypesDirty = true;
  }

  ensureOverride(partName: string, contentType: string): void {
    if (this.contentTypes.includes(`PartName="/${partName}"`)) return;
    this.contentTypes = this.contentTypes.replace(/<\/Types>\s*$/, `<Override PartName="/${partName}" ContentType="${contentType}"/></Types>`);
    this.contentTypesDirty = true;
  }

  /** The part the main document reaches through a relationship of `type` (e.g. numbering, styles). */
  relatedPart(type: string): string | undefined {
    // Found ones are remembered: relationships are only ever appended, so the first match stays the first,
    // and a fill that adds thousands of links must not scan the growing list for the styles part each time.
    const cached = this.relatedCache.get(type);
    if (cached) return cached;
    const r = this.relationships(this.mainPart).find((x) => x.type === `${REL_TYPE}/${type}` && !x.external);
    const name = r ? resolveTarget(this.mainPart, r.target) : undefined;
    if (name) this.relatedCache.set(type, name);
    return name;
  }

  /** Makes sure the root element of `part` declares the namespace prefixes our new markup uses. */
  declareNamespaces(part: string, prefixes: Array<keyof typeof NS>): void {
    const root = this.parse(part).root;
    for (const p of prefixes) {
      const key = `xmlns:${p}`;
      if (!root.attrs.some(([k]) => k === key)) root.attrs.push([key, NS[p]]);
    }
  }

  /** Serialises the changed parts and writes the package back (unchanged entries copied as they were). */
  toBytes(): Uint8Array {
    this.ensureUniqueDocPrIds();
    for (const name of this.dirty) this.pkg.set(name, serializeXmlBytes(this.parsed.get(name)!));
    for (const relsName of this.dirtyRels) {
      const rels = this.relsCache.get(relsName)!;
      const body = rels
        .map(
          (r) =>
            `<Relationship Id="${escapeAttr(r.id)}" Type="${escapeAttr(r.type)}" Target="${escapeAttr(r.target)}"${r.external ? ' TargetMode="External"' : ''}/>`,
        )
        .join('');
      this.pkg.setText(relsName, `${XML_DECL}<Relationships xmlns="${PACKAGE_RELS_NS}">${body}</Relationships>`);
    }
    // A filled template is a document: Word and LibreOffice open a .dotx main part as a new-from-template.
    if (this.contentTypes.includes('wordprocessingml.template.main+xml')) {
      this.contentTypes = this.contentTypes.replace('wordprocessingml.template.main+xml', 'wordprocessingml.document.main+xml');
      this.contentTypesDirty = true;
    }
    if (this.contentTypesDirty) this.pkg.setText('[Content_Types].xml', this.contentTypes);
    return this.pkg.toBytes();
  }

  /**
   * Cloned rows and repeated items copy their drawings; Word reports a document with duplicate wp:docPr ids
   * as corrupt, so every duplicate in a changed part gets a fresh id.
   */
  private ensureUniqueDocPrIds(): void {
    const seen = new Set<string>();
    for (const [name, ids] of this.docPrIds) {
      if (this.dirty.has(name)) continue;
      for (const id of ids) seen.add(id);
    }
    for (const name of this.dirty) {
      walk(this.parsed.get(name)!.root, (e) => {
        if (e.name !== 'wp:docPr') return;
        const id = attr(e, 'id');
        if (id === undefined || seen.has(id)) {
          let fresh = this.allocateDocPrId();
          while (seen.has(String(fresh))) fresh = this.allocateDocPrId();
          setAttr(e, 'id', String(fresh));
          seen.add(String(fresh));
        } else seen.add(id);
      });
    }
  }

  fieldPart(name: string): FieldPart | undefined {
    return this.fieldParts.find((p) => p.name === name);
  }
}

/**
 * XML bytes as text in the encoding they declare by their first bytes: UTF-16 parts (BOM or a NUL next to
 * '<') are decoded as such, so a DOCTYPE cannot hide from the check behind another encoding.
 */
function decodeXmlBytes(b: Uint8Array): string {
  if ((b[0] === 0xff && b[1] === 0xfe) || (b[0] === 0x3c && b[1] === 0x00)) return new TextDecoder('utf-16le').decode(b);
  if ((b[0] === 0xfe && b[1] === 0xff) || (b[0] === 0x00 && b[1] === 0x3c)) return new TextDecoder('utf-16be').decode(b);
  return new TextDecoder('utf-8').decode(b);
}
