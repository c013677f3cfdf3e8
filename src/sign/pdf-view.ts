/**
 * How signing opens an input PDF: through src/pdf's openForAuthoring (the bounded reader reads it, pdf-lib
 * gets a document built from what it read; see src/pdf/authoring.ts), with signing's own limits and its check
 * of the page tree. pdf-lib only ever sees what the reader accepted; the update is still appended to the
 * caller's original bytes, chained to what the reader found.
 */
import { FolioError } from '../errors.js';
import { MAX_AUTHORING_OBJECTS, isName, isRef, openForAuthoring, type AuthoringDocument, type PdfDocument, type PdfValue } from '../pdf/index.js';

/** Objects a document may have for signing: beyond what pdf-lib can hold without a huge heap. */
export const MAX_SIGN_OBJECTS = MAX_AUTHORING_OBJECTS;
/** Page-tree nodes visited, counting a node reached twice twice (pdf-lib walks the tree that way). */
export const MAX_PAGE_TREE_VISITS = 200_000;
const MAX_PAGE_TREE_DEPTH = 64;

const unprocessable = (message: string) => new FolioError('UNPROCESSABLE_DOCUMENT', message);

/** Opens the PDF for signing (reader + pdf-lib); throws a FolioError when it cannot be signed. */
export function openForSigning(bytes: Uint8Array): Promise<AuthoringDocument> {
  // The update is appended to `bytes`, which stay untouched: pdf-lib's streams may be views of them.
  return openForAuthoring(bytes, { maxObjects: MAX_SIGN_OBJECTS, purpose: 'signing', inspect: checkPageTree, shareStreamBytes: true });
}

/**
 * Walks the page tree as pdf-lib will (every Kids entry, repeats included) and refuses a tree that loops, is
 * deeper than any real one, or fans out into more visits than a document can have pages.
 */
function checkPageTree(doc: PdfDocument): void {
  const last = doc.last;
  const root = doc.catalogAt(last)!.map.get('Pages');
  let visits = 0;
  const path = new Set<number>();
  const walk = (ref: PdfValue | undefined, depth: number): void => {
    if (++visits > MAX_PAGE_TREE_VISITS) throw unprocessable(`The PDF page tree has more than ${MAX_PAGE_TREE_VISITS} nodes (counting repeats)`);
    if (depth > MAX_PAGE_TREE_DEPTH) throw unprocessable(`The PDF page tree is nested deeper than ${MAX_PAGE_TREE_DEPTH} levels`);
    const num = isRef(ref) ? ref.num : undefined;
    if (num !== undefined && path.has(num)) throw unprocessable('The PDF page tree contains a cycle');
    const node = doc.dictAt(ref, last);
    if (!node || !isName(node.map.get('Type'), 'Pages')) return;
    const kids = doc.deref(node.map.get('Kids'), last);
    if (!Array.isArray(kids)) return;
    if (num !== undefined) path.add(num);
    for (const kid of kids) walk(kid, depth + 1);
    if (num !== undefined) path.delete(num);
  };
  walk(root, 0);
}
