/**
 * Counts an input's pages before pdf-lib parses it. pdf-lib has no early way out: it parses every object
 * of the file, then walks the whole page tree and makes a page object per leaf, so a 9.5 MB file with a
 * million pages took the merge's whole time budget (30 s) to learn it was over the 10,000-page limit. The
 * shared bounded reader (src/pdf, as sign does) reads only the objects the walk reaches, and the walk stops
 * as soon as the count passes what the merge still has room for.
 *
 * The walk counts what pdf-lib will: every /Kids entry, a node or page reached twice counted twice (each
 * occurrence of a repeated page object is a page, as qpdf and poppler count it); /Type /Page is a page,
 * /Type /Pages a node to descend. A loop, a tree deeper than any real one, or more node visits than pages
 * the merge allows (empty nodes that fan out) is refused here too: pdf-lib's recursive walk would not end.
 */
import { isName, isRef, type PdfDocument, type PdfValue } from '../pdf/index.js';

const MAX_PAGE_TREE_DEPTH = 64;

export type PageCount =
  | { kind: 'counted'; pages: number }
  /** More than `limit` pages (the walk stopped there). */
  | { kind: 'over'; limit: number }
  /** The tree cannot be walked safely: what is wrong with it. */
  | { kind: 'bad'; problem: string }
  /** The reader found no page tree (a damaged file pdf-lib may still repair): nothing is known. */
  | { kind: 'unknown' };

/** Counts the pages of `doc` up to `limit` (more → `over`); node visits are bounded by `maxVisits`. */
export function countPages(doc: PdfDocument, limit: number, maxVisits: number): PageCount {
  const last = doc.last;
  if (last < 0) return { kind: 'unknown' };
  const catalog = doc.catalogAt(last);
  const root = catalog?.map.get('Pages');
  if (!root || !doc.dictAt(root, last)) return { kind: 'unknown' };
  let pages = 0;
  let visits = 0;
  // The nodes on the path from the root: a kid already on it is a loop (a node repeated elsewhere is not).
  const path = new Set<number>();
  class Stop {
    constructor(readonly result: PageCount) {}
  }
  const walk = (v: PdfValue | undefined, depth: number): void => {
    if (++visits > maxVisits) throw new Stop({ kind: 'bad', problem: `its page tree has more than ${maxVisits} nodes (counting repeats)` });
    if (depth > MAX_PAGE_TREE_DEPTH) throw new Stop({ kind: 'bad', problem: `its page tree is nested deeper than ${MAX_PAGE_TREE_DEPTH} levels` });
    const num = isRef(v) ? v.num : undefined;
    if (num !== undefined && path.has(num)) throw new Stop({ kind: 'bad', problem: 'its page tree contains a loop' });
    const node = doc.dictAt(v, last);
    if (!node) return;
    const type = node.map.get('Type');
    if (isName(type, 'Page')) {
      if (++pages > limit) throw new Stop({ kind: 'over', limit });
      return;
    }
    if (!isName(type, 'Pages')) return;
    const kids = doc.deref(node.map.get('Kids'), last);
    if (!Array.isArray(kids)) return;
    if (num !== undefined) path.add(num);
    for (const kid of kids) walk(kid, depth + 1);
    if (num !== undefined) path.delete(num);
  };
  try {
    walk(root, 0);
  } catch (e) {
    if (e instanceof Stop) return e.result;
    // The reader's own bounds (nesting, decoded bytes, …) leave the judgement to pdf-lib.
    return { kind: 'unknown' };
  }
  return { kind: 'counted', pages };
}
