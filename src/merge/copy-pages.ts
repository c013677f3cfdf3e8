/**
 * Copies an input's pages into the merged document so that what is one object in the input stays one
 * object in the output. pdf-lib's page copy moves every inherited attribute (/Resources, /MediaBox, …) into
 * each page as the same in-memory value, and its writer then writes that value out again inside every page:
 * a 140 KB input whose page tree held a direct /Resources dictionary of 160 KB became 48 MB for two copies
 * (and a 163 KB probe file 1 GB). Here a large inherited value is registered once as an object of its own
 * and every page refers to it; a page object listed several times in /Kids (each occurrence is a page, as
 * qpdf and poppler count it) gets a page dictionary per occurrence, its large values shared the same way.
 *
 * Across inputs, a stream already copied from an earlier input with the same bytes and the same dictionary
 * (one that refers to no other object, so equal bytes mean equal meaning) is referred to instead of copied
 * again: the same PDF merged 50 times carries its images and fonts once. Hashing the raw bytes is cheap next
 * to parsing them.
 *
 * pdf-lib's PDFObjectCopier does the copying; only the reference map it keeps is seeded (private in its
 * typings, stable since pdf-lib 1.0), which is written by hand because no library shares resources on copy.
 */
import { createHash } from 'node:crypto';
import {
  PDFArray,
  PDFDict,
  PDFHexString,
  PDFName,
  PDFObjectCopier,
  PDFPage,
  PDFPageLeaf,
  PDFRawStream,
  PDFRef,
  PDFString,
  type PDFDocument,
  type PDFObject,
} from '../pdf/index.js';

/** A direct value written at least this large becomes an object of its own when more than one page uses it. */
const SHARE_MIN_BYTES = 256;
/** Nesting looked into when deciding whether a stream dictionary refers to other objects. */
const MAX_DICT_DEPTH = 32;

/** The copier's reference map (source object or reference → its copy). */
const traversedOf = (copier: PDFObjectCopier) => (copier as unknown as { traversedObjects: Map<PDFObject, PDFObject> }).traversedObjects;

/** Streams copied so far, by content hash, across the inputs of one merge. */
export class StreamIndex {
  private readonly byHash = new Map<string, PDFRef>();

  /**
   * Maps every stream of `src` that an earlier input already brought (same bytes, same self-contained
   * dictionary) to that copy, and answers a function to call once the input is copied, which records the
   * input's own streams for the next inputs.
   */
  seed(src: PDFDocument, copier: PDFObjectCopier): () => void {
    const traversed = traversedOf(copier);
    const fresh: Array<[string, PDFRef]> = [];
    for (const [ref, obj] of src.context.enumerateIndirectObjects()) {
      if (!(obj instanceof PDFRawStream)) continue;
      const key = streamKey(obj);
      if (key === undefined) continue;
      const known = this.byHash.get(key);
      if (known) traversed.set(ref, known);
      else fresh.push([key, ref]);
    }
    return () => {
      for (const [key, ref] of fresh) {
        const copy = traversed.get(ref);
        if (copy instanceof PDFRef && !this.byHash.has(key)) this.byHash.set(key, copy);
      }
    };
  }
}

/** The stream's identity (dictionary without /Length, then its raw bytes), or undefined when its dictionary refers to other objects. */
function streamKey(stream: PDFRawStream): string | undefined {
  const hash = createHash('sha256');
  for (const [key, value] of stream.dict.entries()) {
    if (key === PDFName.Length) continue;
    if (refersToObjects(value, 0)) return undefined;
    hash.update(`${key.toString()} ${value.toString()}\n`);
  }
  hash.update('stream\n');
  hash.update(stream.getContents());
  return hash.digest('base64');
}

function refersToObjects(value: PDFObject, depth: number): boolean {
  if (depth > MAX_DICT_DEPTH) return true;
  if (value instanceof PDFRef) return true;
  if (value instanceof PDFArray) return value.asArray().some((v) => refersToObjects(v, depth + 1));
  if (value instanceof PDFDict) return value.values().some((v) => refersToObjects(v, depth + 1));
  return false;
}

/**
 * Copies every page of `src` to the end of `out`, in order, and answers the copies' references. Unlike
 * pdf-lib's copyPages, every page's reference is mapped to its copy before anything is copied, so a link
 * or any other reference from one page to another of the same input points at the copy in the page tree
 * (copyPages would copy the target again as an orphan page outside the tree). A page object listed more
 * than once is mapped to its first occurrence.
 */
export function copyAllPages(src: PDFDocument, out: PDFDocument, streams: StreamIndex): PDFRef[] {
  const copier = PDFObjectCopier.for(src.context, out.context);
  const traversed = traversedOf(copier);
  const recordStreams = streams.seed(src, copier);
  const pages = src.getPages();
  const refs = pages.map((page) => {
    const ref = out.context.nextRef();
    if (!traversed.has(page.ref)) traversed.set(page.ref, ref);
    return ref;
  });
  // One source value (by identity) → the value pages get: itself, or a reference when it is large.
  const shared = new Map<PDFObject, PDFObject>();
  const share = (value: PDFObject): PDFObject => {
    if (!(value instanceof PDFDict || value instanceof PDFArray || value instanceof PDFString || value instanceof PDFHexString)) return value;
    let to = shared.get(value);
    if (to === undefined) {
      to = value.sizeInBytes() >= SHARE_MIN_BYTES ? src.context.register(value) : value;
      shared.set(value, to);
    }
    return to;
  };
  const occurrences = new Map<PDFRef, number>();
  for (const page of pages) occurrences.set(page.ref, (occurrences.get(page.ref) ?? 0) + 1);
  pages.forEach((page, i) => {
    const node = page.node;
    const leaf = node.clone();
    // Inherited attributes become the page's own, large ones as one shared object (pdf-lib's copy would
    // set the same value in every page, and its writer write it out in each).
    for (const name of PDFPageLeaf.InheritableEntries) {
      const key = PDFName.of(name);
      if (leaf.get(key) !== undefined) continue;
      const value = node.getInheritableAttribute(key);
      if (value !== undefined) leaf.set(key, share(value));
    }
    // A repeated page object: each occurrence gets a dictionary of its own, its large values shared.
    if (occurrences.get(page.ref)! > 1) for (const [key, value] of leaf.entries()) leaf.set(key, share(value));
    leaf.delete(PDFName.of('Parent'));
    const copy = copier.copy(leaf) as PDFPageLeaf;
    out.context.assign(refs[i]!, copy);
    out.addPage(PDFPage.of(copy, refs[i]!, out));
  });
  recordStreams();
  return refs;
}
