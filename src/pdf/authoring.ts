/**
 * The one way from a caller's PDF bytes to @cantoo/pdf-lib (the authoring library: page copies, drawing,
 * in-memory edits). pdf-lib's parser is not safe on hostile bytes: it trusts every xref stream's /W and
 * /Index (a 603-byte file made it loop for minutes), inflates every object stream without a cap (a 1.5 MB
 * file asked it for 1.5 GB, outside the V8 heap that an engine thread's resourceLimits bound), and crawls
 * through bytes that belong to no object at microseconds per byte (20 MB of noise: about a minute).
 *
 * So the bounded forensic reader (reader.ts: xref sizes, object counts, inflation caps, nesting) reads the
 * document (open.ts: the checks every capability shares), the caller's own checks run on what it read, and
 * pdf-lib gets a document built from the objects the reader resolved at the last revision (buildDocument):
 * streams with their raw bytes and a direct /Length, no object or xref streams, nesting already capped, and
 * the page tree repaired where pdf-lib would throw on what viewers accept (repairPages). pdf-lib only ever
 * sees what the reader accepted, and its parser never runs on input. The ESLint config holds the boundary:
 * only src/pdf imports pdf-lib (capabilities get its object model and drawing from model.ts, never its
 * parser), and PDFDocument.load is called nowhere.
 */
import {
  PDFArray,
  PDFBool,
  PDFCatalog,
  PDFContext,
  PDFDict,
  PDFDocument,
  PDFHeader,
  PDFHexString,
  PDFName,
  PDFNull,
  PDFNumber,
  PDFPageLeaf,
  PDFPageTree,
  PDFRawStream,
  PDFRef,
  type PDFObject,
} from '@cantoo/pdf-lib';
// pdf-lib's name interning made weak before any document is built here (names.ts).
import './names.js';
import { FolioError, isFolioError } from '../errors.js';
import { pdfHeaderVersion } from '../formats/sniff.js';
import { isName, isStream, type PdfValue } from './objects.js';
import { MAX_OBJECT_NUMBER } from './incremental.js';
import { openBounded } from './open.js';
import type { PdfDocument } from './reader.js';
import { serialize } from './serialize.js';

/** Objects a document may have for authoring by default: beyond what pdf-lib can hold without a huge heap. */
export const MAX_AUTHORING_OBJECTS = 500_000;

export interface AuthoringLimits {
  /** Objects the document may define, all revisions together (each becomes a pdf-lib object). */
  maxObjects: number;
  /** What the document is opened for, in messages ("signing", "merging"). */
  purpose: string;
  /**
   * The caller's checks on the reader's document, before any image is built (page-tree walks, page limits):
   * throw a FolioError to refuse. Runs after encryption, the catalog and /Size are checked.
   */
  inspect?: (doc: PdfDocument) => void;
  /**
   * A page (or node) given directly in /Kids, not by reference, becomes an object of its own, numbered after
   * the input's objects (pdf-lib's pages need a reference). For callers that write a new document (merge);
   * an incremental update (sign) would have to write that object and the node it came from, so without
   * this such a page tree stays as it is and pdf-lib refuses it (a 422).
   */
  numberDirectPages?: boolean;
  /**
   * Streams keep views of the input's bytes instead of copies: for a caller that keeps the input alive and
   * unchanged while the document is in use and writes out only what it changes (signing appends an update to
   * the input; a copy of every stream would be a copy of most of the file for nothing).
   */
  shareStreamBytes?: boolean;
}

export interface AuthoringDocument {
  /** The bounded reader's view of the input (revisions, last xref, offsets: what an incremental update chains to). */
  reader: PdfDocument;
  /** pdf-lib's document, built from the objects the reader resolved. */
  doc: PDFDocument;
}

const unprocessable = (message: string, cause?: unknown) => new FolioError('UNPROCESSABLE_DOCUMENT', message, { cause });

/**
 * Reads `bytes` with the bounded reader and opens what it read in pdf-lib. Refusals are 422
 * UNPROCESSABLE_DOCUMENT FolioErrors whose message starts "The PDF …" (the reader's bounds, encryption, no
 * catalog, too many objects, pdf-lib failing on the image); the caller's `inspect` errors pass unchanged.
 */
export async function openForAuthoring(bytes: Uint8Array, limits: AuthoringLimits): Promise<AuthoringDocument> {
  const reader = openBounded(bytes, { purpose: limits.purpose });
  limits.inspect?.(reader);
  let doc: PDFDocument;
  try {
    doc = buildDocument(reader, limits);
  } catch (e) {
    if (isFolioError(e)) throw e;
    throw unprocessable('The PDF could not be opened', e);
  }
  return { reader, doc };
}

/**
 * pdf-lib's document holding every object in force at the last revision, as the reader resolved it, built
 * directly from the reader's values (pdf-lib's parser never runs: a serialised image parsed again cost the
 * merge benchmark +70% CPU). Each value becomes what pdf-lib's parser makes of its PDF syntax as serialize()
 * writes it (test/pdf/authoring.test.ts): names and numbers through that syntax (a name keeps its bytes where
 * pdf-lib's parser would decode an escape twice), strings as hex strings, dictionaries typed
 * /Catalog, /Pages or /Page as pdf-lib's catalog and page-tree classes, streams as raw streams with a direct
 * /Length. Cross-reference and object streams are left out (the reader has read them; pdf-lib would take
 * their /W, /Index and /N at face value and inflate them without a cap), and so are objects the reader
 * cannot read (broken, too deeply nested, in an object stream over its budget), as a viewer would.
 */
function buildDocument(doc: PdfDocument, limits: AuthoringLimits): PDFDocument {
  const last = doc.last;
  // Every object number defined by some revision; the reader resolves each as of the last one.
  const numbers = new Set<number>();
  for (const rev of doc.revisions) {
    for (const n of rev.entries.keys()) {
      numbers.add(n);
      if (numbers.size > limits.maxObjects)
        throw unprocessable(`The PDF has more than ${limits.maxObjects} objects; it is too large for ${limits.purpose}`);
    }
  }
  const context = PDFContext.create();
  const [major, minor] = (pdfHeaderVersion(doc.buf) ?? '1.7').split('.').map(Number);
  context.header = PDFHeader.forVersion(major!, minor!);
  context.pdfFileDetails.pdfSize = doc.buf.length;
  const toObject = (v: PdfValue): PDFObject => {
    if (v === null) return PDFNull;
    if (typeof v === 'boolean') return v ? PDFBool.True : PDFBool.False;
    // What the syntax serialize() writes reads back as: integers are themselves, other numbers are rounded.
    if (typeof v === 'number') return PDFNumber.of(Number.isSafeInteger(v) ? v : Number(serialize(v)));
    if (Array.isArray(v)) {
      const array = PDFArray.withContext(context);
      for (const item of v) array.push(toObject(item));
      return array;
    }
    switch (v.kind) {
      case 'name':
        return pdfName(v.name);
      case 'string':
        return PDFHexString.of(Buffer.from(v.bytes).toString('hex'));
      case 'ref':
        return PDFRef.of(v.num, v.gen);
      case 'dict':
        return toDict(v.map);
      default:
        // A stream is an indirect object's top-level value; inside another value serialize() writes null too.
        return PDFNull;
    }
  };
  const trees: PDFPageTree[] = [];
  const leaves: PDFPageLeaf[] = [];
  const toDict = (entries: Map<string, PdfValue>): PDFDict => {
    const map = new Map<PDFName, PDFObject>();
    for (const [key, value] of entries) map.set(pdfName(key), toObject(value));
    const type = map.get(TYPE);
    if (type === CATALOG) return PDFCatalog.fromMapWithContext(map, context);
    if (type === PAGES) {
      const tree = PDFPageTree.fromMapWithContext(map, context);
      trees.push(tree);
      return tree;
    }
    if (type === PAGE) {
      const leaf = PDFPageLeaf.fromMapWithContext(map, context);
      leaves.push(leaf);
      return leaf;
    }
    return PDFDict.fromMapWithContext(map, context);
  };
  let largest = 0;
  for (const num of [...numbers].sort((a, b) => a - b)) {
    if (num <= 0 || num > MAX_OBJECT_NUMBER) continue;
    const obj = doc.resolve(num, last);
    if (!obj) continue;
    const value = obj.value;
    if (isStream(value) && (isName(value.dict.map.get('Type'), 'XRef') || isName(value.dict.map.get('Type'), 'ObjStm'))) continue;
    const gen = obj.entry.type === 1 && obj.offset !== undefined ? (doc.objectAt(obj.offset, last)?.gen ?? obj.entry.gen) : 0;
    largest = Math.max(largest, num);
    if (isStream(value)) {
      // Its own copy of the raw bytes, as pdf-lib's parser takes one, unless the caller keeps the input as it is.
      const data = limits.shareStreamBytes ? doc.buf.subarray(value.dataStart, value.dataEnd) : doc.buf.slice(value.dataStart, value.dataEnd);
      const dict = new Map(value.dict.map);
      dict.set('Length', data.length);
      context.assign(PDFRef.of(num, gen), PDFRawStream.of(toDict(dict), data));
    } else {
      context.assign(PDFRef.of(num, gen), toObject(value));
    }
  }
  const trailer = doc.trailerAt(last);
  const declared = trailer?.map.get('Size');
  const size = Math.max(largest + 1, typeof declared === 'number' && Number.isInteger(declared) ? declared : 0);
  const root = trailer?.map.get('Root') ?? doc.catalogRefAt(last);
  const info = trailer?.map.get('Info');
  const id = trailer?.map.get('ID');
  context.trailerInfo = {
    Size: PDFNumber.of(size),
    Root: root === undefined ? undefined : toObject(root),
    Info: info === undefined ? undefined : toObject(info),
    ID: id === undefined ? undefined : toObject(id),
  };
  // As pdf-lib's parser does: a /Root that is no catalog gives way to the last catalog among the objects.
  const isCatalog = (o: PDFObject | undefined) => o instanceof PDFDict && o.lookup(PDFName.of('Type')) === PDFName.of('Catalog');
  if (!isCatalog(context.lookup(context.trailerInfo.Root))) {
    for (const [ref, object] of context.enumerateIndirectObjects()) if (isCatalog(object)) context.trailerInfo.Root = ref;
  }
  repairPages(context, limits.numberDirectPages ? trees : [], leaves, size);
  // PDFDocument's constructor is what PDFDocument.load calls once its parser has filled a context.
  const Document = PDFDocument as unknown as new (context: PDFContext, ignoreEncryption: boolean, updateMetadata: boolean) => PDFDocument;
  return new Document(context, true, false);
}

const TYPE = PDFName.of('Type');
const CATALOG = PDFName.of('Catalog');
const PAGES = PDFName.of('Pages');
const PAGE = PDFName.of('Page');

/**
 * pdf-lib's name for a name the reader decoded. PDFName.of decodes #xx escapes, so a name holding '#' goes in
 * as serialize() writes it (escaped); any other name is its own escaped form once decoded and goes in as it is
 * (the round trip's two regular expressions cost a fifth of building a 100-page document).
 */
function pdfName(name: string): PDFName {
  return name.includes('#') ? PDFName.of(serialize({ kind: 'name', name }).slice(1)) : PDFName.of(name);
}

/** The /MediaBox of a page that has none, its own or inherited: US Letter, what poppler and pdf.js assume. */
const LETTER = [0, 0, 612, 792];
/** /Parent links followed up from a page (a real tree is a few levels deep). */
const MAX_ASCENT = 64;

/**
 * What pdf-lib throws on and viewers accept, repaired in the image (the input's bytes are untouched; an
 * incremental update writes a repaired object only if it rewrites that object anyway):
 * - a page or node given directly in the /Kids of `trees`, not by reference (pdf-lib's pages need one:
 *   "`ref` must be of type `PDFRef`"): it becomes an object of its own, numbered after everything the input
 *   declares (only when the caller asked: numberDirectPages);
 * - a page with no usable /MediaBox of its own or inherited (pdf-lib's page size throws "Expected instance of
 *   PDFArray", which signing answered with a 500): US Letter on the page.
 */
function repairPages(context: PDFContext, trees: PDFPageTree[], leaves: PDFPageLeaf[], size: number): void {
  let numbered = false;
  for (const tree of trees) {
    const kids = context.lookup(tree.get(PDFName.of('Kids')));
    if (!(kids instanceof PDFArray)) continue;
    for (let i = 0; i < kids.size(); i++) {
      const kid = kids.get(i);
      if (!(kid instanceof PDFPageLeaf || kid instanceof PDFPageTree)) continue;
      // New numbers after the trailer's /Size too: free entries at the end are not ours to reuse.
      if (!numbered) context.largestObjectNumber = Math.max(context.largestObjectNumber, size - 1);
      numbered = true;
      kids.set(i, context.register(kid));
    }
  }
  for (const leaf of leaves) {
    if (!isRectangle(context, inheritedMediaBox(context, leaf))) leaf.set(PDFName.of('MediaBox'), context.obj(LETTER));
  }
}

/** The page's /MediaBox, its own or its nearest ancestor's (bounded: a /Parent chain may loop), resolved. */
function inheritedMediaBox(context: PDFContext, leaf: PDFPageLeaf): PDFObject | undefined {
  const seen = new Set<PDFDict>();
  let node: PDFDict | undefined = leaf;
  for (let depth = 0; node && depth <= MAX_ASCENT && !seen.has(node); depth++) {
    seen.add(node);
    const box = node.get(PDFName.of('MediaBox'));
    if (box !== undefined) return context.lookup(box);
    const parent: PDFObject | undefined = context.lookup(node.get(PDFName.of('Parent')));
    node = parent instanceof PDFDict ? parent : undefined;
  }
  return undefined;
}

/** What pdf-lib's PDFArray.asRectangle reads without throwing: four numbers, directly or by reference. */
function isRectangle(context: PDFContext, box: PDFObject | undefined): boolean {
  return box instanceof PDFArray && box.size() === 4 && box.asArray().every((v) => context.lookup(v) instanceof PDFNumber);
}
