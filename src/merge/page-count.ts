/**
 * Counts an input's pages with early ways out, before pdf-lib walks its page tree. pdf-lib has none: it
 * parses every object of the file, then walks the whole tree (recursively, with no loop check) and makes a
 * page object per leaf, so a 9.5 MB file with a million pages took the merge's whole time budget (30 s) to
 * learn it was over the 10,000-page limit, and a 1.5 KB tree of shared nodes can ask for 10^9 visits.
 *
 * The walk counts what pdf-lib will: every /Kids entry, a node or page reached twice counted twice (each
 * occurrence of a repeated page object is a page, as qpdf and poppler count it); /Type /Page is a page,
 * /Type /Pages a node to descend. It stops as soon as the count passes what the merge still has room for,
 * and refuses a loop, a tree deeper than any real one, or more node visits than the pages allowed justify
 * (empty nodes that fan out).
 *
 * Two views of the same walk: through the shared bounded reader (src/pdf, as sign does), for a file with
 * more objects than the merge has room for pages, before openForAuthoring resolves every object for
 * pdf-lib (the cost to avoid); and through pdf-lib's objects, for every other file, where building them is
 * cheap and only the walk can explode (walking pages in both views cost the merge benchmark half its CPU
 * time again).
 */
import {
  PDFArray,
  PDFName,
  PDFPageLeaf,
  PDFPageTree,
  PDFRef,
  isName,
  isRef,
  type PDFDocument,
  type PDFObject,
  type PdfDocument,
  type PdfValue,
} from '../pdf/index.js';

const MAX_PAGE_TREE_DEPTH = 64;

export type PageCount =
  | { kind: 'counted'; pages: number }
  /** More than `limit` pages (the walk stopped there). */
  | { kind: 'over'; limit: number }
  /** The tree cannot be walked safely: what is wrong with it. */
  | { kind: 'bad'; problem: string }
  /** No page tree was found (a damaged file pdf-lib may still repair): nothing is known. */
  | { kind: 'unknown' };

/** One entry of the tree as a parser sees it: a page, a node with its kids, or anything else (skipped). */
type Entry<T> = { kind: 'page' } | { kind: 'pages'; kids: readonly T[]; id?: number } | { kind: 'other' };

class Stop {
  constructor(readonly result: PageCount) {}
}

function walkTree<T>(root: T, read: (v: T) => Entry<T>, limit: number, maxVisits: number): PageCount {
  let pages = 0;
  let visits = 0;
  // The nodes on the path from the root: a kid already on it is a loop (a node repeated elsewhere is not).
  const path = new Set<number>();
  const walk = (v: T, depth: number): void => {
    if (++visits > maxVisits) throw new Stop({ kind: 'bad', problem: `its page tree has more than ${maxVisits} nodes (counting repeats)` });
    if (depth > MAX_PAGE_TREE_DEPTH) throw new Stop({ kind: 'bad', problem: `its page tree is nested deeper than ${MAX_PAGE_TREE_DEPTH} levels` });
    const entry = read(v);
    if (entry.kind === 'page') {
      if (++pages > limit) throw new Stop({ kind: 'over', limit });
      return;
    }
    if (entry.kind !== 'pages') return;
    if (entry.id !== undefined) {
      if (path.has(entry.id)) throw new Stop({ kind: 'bad', problem: 'its page tree contains a loop' });
      path.add(entry.id);
    }
    for (const kid of entry.kids) walk(kid, depth + 1);
    if (entry.id !== undefined) path.delete(entry.id);
  };
  try {
    walk(root, 0);
  } catch (e) {
    if (e instanceof Stop) return e.result;
    // A parser's own bounds (nesting, decoded bytes, …) leave the judgement to pdf-lib's load.
    return { kind: 'unknown' };
  }
  return { kind: 'counted', pages };
}

/** Objects the document defines, all revisions together (an upper bound on its distinct page objects). */
export function objectCount(doc: PdfDocument): number {
  let n = 0;
  for (const rev of doc.revisions) n += rev.entries.size;
  return n;
}

/** Counts the pages of `doc` through the bounded reader, up to `limit` (more → `over`). */
export function countPagesByReader(doc: PdfDocument, limit: number, maxVisits: number): PageCount {
  const last = doc.last;
  const root = last < 0 ? undefined : doc.catalogAt(last)?.map.get('Pages');
  if (!root || !doc.dictAt(root, last)) return { kind: 'unknown' };
  const read = (v: PdfValue | undefined): Entry<PdfValue | undefined> => {
    const node = doc.dictAt(v, last);
    const type = node?.map.get('Type');
    if (isName(type, 'Page')) return { kind: 'page' };
    if (!node || !isName(type, 'Pages')) return { kind: 'other' };
    const kids = doc.deref(node.map.get('Kids'), last);
    return { kind: 'pages', kids: Array.isArray(kids) ? kids : [], id: isRef(v) ? v.num : undefined };
  };
  return walkTree<PdfValue | undefined>(root, read, limit, maxVisits);
}

/** Counts the pages of a document pdf-lib has parsed, as its own walk would, up to `limit`. */
export function countPagesByPdfLib(doc: PDFDocument, limit: number, maxVisits: number): PageCount {
  const context = doc.context;
  const root = doc.catalog.get(PDFName.of('Pages'));
  if (root === undefined) return { kind: 'unknown' };
  const read = (v: PDFObject): Entry<PDFObject> => {
    const node = v instanceof PDFRef ? context.lookup(v) : v;
    if (node instanceof PDFPageLeaf) return { kind: 'page' };
    if (!(node instanceof PDFPageTree)) return { kind: 'other' };
    const kids = node.lookupMaybe(PDFName.of('Kids'), PDFArray);
    return { kind: 'pages', kids: kids ? kids.asArray() : [], id: v instanceof PDFRef ? v.objectNumber : undefined };
  };
  return walkTree<PDFObject>(root, read, limit, maxVisits);
}
