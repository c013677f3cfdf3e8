/**
 * OOXML packages in memory: the one place that answers "is this a DOCX".
 *
 * `openDocx(bytes, limits)` is called once, where a document comes in (annotate's template, office's input):
 * it sniffs the bytes (ZIP, encrypted OOXML / legacy compound file, PDF), reads the central directory within
 * the package bounds (zip-reader.ts: entry count, declared sizes, ratio, names, local headers, overlapping
 * entries), and checks for [Content_Types].xml and a Word main part named by the package relationships. Only
 * `_rels/.rels` is inflated to get there; every other entry is inflated on first use, each inflate capped by
 * the entry's declared size, a per-part ceiling and a budget for the whole package. `toBytes()` writes the
 * package with zip-writer.ts, copying untouched entries compressed, byte for byte.
 */
import { FolioError } from '../errors.js';
import { isCompoundFile, isPdf, isZip } from '../formats/sniff.js';
import { DEFAULT_PACKAGE_LIMITS, InflateBudget, inflateEntry, readZipDirectory, type PackageLimits, type ZipEntry } from './zip-reader.js';
import { writeZip, type ZipWriteEntry } from './zip-writer.js';

export {
  badEntryName,
  checkZipBounds,
  DEFAULT_PACKAGE_LIMITS,
  InflateBudget,
  inflateEntry,
  listZipEntries,
  readZipDirectory,
  shownName,
  type CentralEntry,
  type PackageLimits,
  type ZipEntry,
} from './zip-reader.js';
export { crc32, writeZip, type ZipWriteEntry } from './zip-writer.js';

/** Bounds of one package: the declared-size bounds of the directory, and the caps on what is inflated. */
export interface DocxLimits extends PackageLimits {
  /** Largest single inflate (default: maxEntryUncompressed). */
  maxInflatedPart?: number;
  /** Everything inflated from this package (default: maxTotalUncompressed). */
  maxInflatedTotal?: number;
  /** Names the per-part limit in its message, e.g. "a part annotate reads". */
  partLabel?: string;
}

/**
 * The Word main part named by the package relationships (`_rels/.rels`), else word/document.xml if present.
 * A main part that is not XML, or that belongs to a spreadsheet or a presentation (`xl/`, `ppt/`), means the
 * package is not a DOCX: undefined.
 */
export function mainDocumentPartName(packageRels: string | undefined, has: (name: string) => boolean): string | undefined {
  if (packageRels) {
    const m = /<Relationship\b[^>]*Type="[^"]*\/officeDocument"[^>]*>/.exec(packageRels);
    const target = m && /Target="([^"]+)"/.exec(m[0]);
    if (target?.[1]) {
      const t = target[1].replace(/^\//, '');
      return /\.xml$/i.test(t) && !/^(xl|ppt)\//i.test(t) ? t : undefined;
    }
  }
  return has('word/document.xml') ? 'word/document.xml' : undefined;
}

/** A ZIP package opened within bounds: entries inflated on first use, untouched ones copied as they are. */
export class DocxPackage {
  private readonly entries = new Map<string, ZipEntry>();
  private readonly order: string[] = [];
  private readonly orderSet = new Set<string>();
  private readonly data = new Map<string, Uint8Array>();
  private readonly changed = new Set<string>();
  private readonly deleted = new Set<string>();
  private readonly decoder = new TextDecoder('utf-8');
  private readonly budget: InflateBudget;
  private readonly maxPart: number;

  private constructor(
    /** The bytes the package was opened from. */
    readonly bytes: Uint8Array,
    private readonly limits: DocxLimits,
  ) {
    this.budget = new InflateBudget(limits.maxInflatedTotal ?? limits.maxTotalUncompressed);
    this.maxPart = limits.maxInflatedPart ?? limits.maxEntryUncompressed;
  }

  /** Opens any ZIP package within the bounds (no DOCX checks: see openDocx). */
  static open(bytes: Uint8Array, limits: DocxLimits = DEFAULT_PACKAGE_LIMITS): DocxPackage {
    const pkg = new DocxPackage(bytes, limits);
    for (const entry of readZipDirectory(bytes, limits)) {
      if (entry.flags & 1) throw new FolioError('UNPROCESSABLE_DOCUMENT', 'The DOCX package has encrypted entries');
      if (entry.method !== 0 && entry.method !== 8) {
        throw new FolioError('UNPROCESSABLE_DOCUMENT', `The DOCX package is corrupt (unsupported compression method ${entry.method})`);
      }
      if (entry.name.endsWith('/')) continue; // directory entry
      pkg.order.push(entry.name);
      pkg.orderSet.add(entry.name);
      pkg.entries.set(entry.name, entry);
    }
    return pkg;
  }

  has(name: string): boolean {
    return !this.deleted.has(name) && (this.data.has(name) || this.entries.has(name));
  }

  /** Every entry name, in package order (new parts last: set() appends them). */
  names(): string[] {
    return this.order.filter((n) => !this.deleted.has(n));
  }

  /** Declared (central directory) size of an unchanged entry, without inflating it. */
  declaredSize(name: string): number | undefined {
    if (this.deleted.has(name)) return undefined;
    return this.data.get(name)?.length ?? this.entries.get(name)?.uncompressedSize;
  }

  /** Entry bytes, inflated on first use within the part and package bounds. */
  get(name: string): Uint8Array | undefined {
    if (this.deleted.has(name)) return undefined;
    const cached = this.data.get(name);
    if (cached) return cached;
    const e = this.entries.get(name);
    if (!e) return undefined;
    const out = inflateEntry(this.bytes, e, { maxBytes: this.maxPart, budget: this.budget, what: this.limits.partLabel });
    this.data.set(name, out);
    return out;
  }

  text(name: string): string | undefined {
    const b = this.get(name);
    return b === undefined ? undefined : this.decoder.decode(b);
  }

  set(name: string, bytes: Uint8Array): void {
    this.data.set(name, bytes);
    this.changed.add(name);
    this.deleted.delete(name);
    if (!this.orderSet.has(name)) {
      this.order.push(name);
      this.orderSet.add(name);
    }
  }

  setText(name: string, text: string): void {
    this.set(name, Buffer.from(text, 'utf8'));
  }

  delete(name: string): void {
    if (this.has(name)) this.deleted.add(name);
    this.data.delete(name);
    this.changed.delete(name);
  }

  /** Whether anything was set or deleted since the package was opened. */
  get modified(): boolean {
    return this.changed.size > 0 || this.deleted.size > 0;
  }

  /** The main document part named by the package relationships (usually word/document.xml). */
  mainDocumentPart(): string | undefined {
    return mainDocumentPartName(this.text('_rels/.rels'), (name) => this.has(name));
  }

  /** Writes the package: unchanged entries copied compressed, changed and new ones deflated (zip-writer.ts). */
  toBytes(): Uint8Array {
    const out: ZipWriteEntry[] = [];
    for (const name of this.names()) {
      const e = this.entries.get(name);
      if (e && !this.changed.has(name)) {
        const compressed = this.bytes.subarray(e.dataStart, e.dataStart + e.compressedSize);
        out.push({ name, raw: { method: e.method, crc: e.crc, uncompressedSize: e.uncompressedSize, time: e.time, date: e.date, compressed } });
      } else out.push({ name, data: this.data.get(name)! });
    }
    return writeZip(out);
  }
}

/**
 * Sniffs, bounds and checks that bytes are a DOCX: a ZIP (not a PDF, not an encrypted OOXML or legacy compound
 * file) with [Content_Types].xml and a Word main part. Inflates only `_rels/.rels`.
 */
export function openDocx(bytes: Uint8Array, limits: DocxLimits = DEFAULT_PACKAGE_LIMITS): DocxPackage {
  if (bytes.length === 0) throw new FolioError('INVALID_FILE_FORMAT', 'The file is empty');
  if (isCompoundFile(bytes)) {
    throw new FolioError('UNPROCESSABLE_DOCUMENT', 'The document is encrypted (password-protected OOXML) or a legacy binary Word file');
  }
  if (!isZip(bytes)) {
    // Checked only when the bytes are not a ZIP: a package may well hold "%PDF-" in its first kilobyte.
    if (isPdf(bytes)) throw new FolioError('INVALID_FILE_FORMAT', 'The file is a PDF, not a DOCX');
    throw new FolioError('INVALID_FILE_FORMAT', 'The file is not a DOCX (not a ZIP package)');
  }
  const pkg = DocxPackage.open(bytes, limits);
  if (!pkg.has('[Content_Types].xml')) {
    throw new FolioError('INVALID_FILE_FORMAT', 'The ZIP package has no [Content_Types].xml; it is not a DOCX');
  }
  const main = pkg.mainDocumentPart();
  if (!main || !pkg.has(main)) throw new FolioError('INVALID_FILE_FORMAT', 'The package has no Word main document part');
  return pkg;
}

/** XML parts must not declare a DOCTYPE (entity expansion, external entities). */
export function assertNoDoctype(xml: string, part: string): void {
  if (/<!DOCTYPE/i.test(xml) || /<!ENTITY/i.test(xml)) {
    throw new FolioError('UNPROCESSABLE_DOCUMENT', `The part ${part} declares a DOCTYPE or entities, which are not allowed`);
  }
}
