/**
 * The size of the pages a preview asks for, read before anything is rendered: a 591-byte PDF can declare a
 * page 72 times taller than wide, which pdftoppm scaled to 4000 px wide turned into a 2.7 GB bitmap. With the
 * page boxes known, the pixels of each page image are known too, and a page over the pixel budget is refused
 * without starting poppler.
 *
 * This is also where a preview's PDF (as uploaded, or as LibreOffice wrote it from a DOCX) is opened by the
 * PDF core (src/pdf's openBounded) before poppler sees it, with the input bounds sign and merge have: the
 * reader's bounds (cross-reference entries, revisions, inflation, nesting) hold, and a file it cannot read at
 * all (no document catalog: 20 MB of noise behind a header, which pdftoppm chewed on for 2 s of CPU before
 * failing) is a 422 saying so, without a render slot or a child process. An encrypted file is read (its page
 * tree is not encrypted): poppler opens one whose user password is empty, and one that needs a password is
 * a 422 when poppler says so (index.ts).
 *
 * The sizes: the page tree walked in document order with the inherited attributes, as poppler does:
 * /MediaBox (what pdftoppm renders unless told -cropbox; the crop box lies inside it, so it is the upper
 * bound), /Rotate (90 and 270 swap the sides). A page this reader cannot find or measure is left undefined:
 * its render still runs under the child's memory cap and its image dimensions are checked afterwards (index.ts).
 */
import { openBounded, type PdfDict, type PdfDocument, type PdfValue } from '../pdf/index.js';

/** Page size in PDF units as rendered (rotation applied). Only the ratio matters: pages are scaled to a width. */
export interface PageSize {
  width: number;
  height: number;
}

/** Page-tree nodes visited at most: bounds the walk of a hostile tree (a million pages, cycles). */
const MAX_NODES = 200_000;
const MAX_DEPTH = 64;
/** poppler's default when a page has no usable /MediaBox: US Letter. */
const LETTER: [number, number] = [612, 792];

interface Inherited {
  box?: PdfValue;
  rotate?: PdfValue;
}

/**
 * The sizes of `pages` (1-based, ascending) in the order asked; undefined where a page could not be found.
 * A PDF the core refuses throws its 422 (UNPROCESSABLE_DOCUMENT, "The PDF …").
 */
export function pageSizes(pdf: Uint8Array, pages: number[]): Array<PageSize | undefined> {
  const doc: PdfDocument = openBounded(pdf, { purpose: 'previewing', allowEncrypted: true });
  const out: Array<PageSize | undefined> = pages.map(() => undefined);
  if (pages.length === 0) return out;
  const rev = doc.last;
  const root = doc.catalogAt(rev);
  const wanted = new Map(pages.map((p, i) => [p, i]));
  const last = pages[pages.length - 1]!;
  let pageNo = 0;
  let nodes = 0;
  const seen = new Set<PdfDict>();
  // Depth-first in /Kids order with an explicit stack (a deep tree must not overflow the call stack).
  const stack: Array<{ node: PdfValue | undefined; inherited: Inherited; depth: number }> = [
    { node: root?.map.get('Pages'), inherited: {}, depth: 0 },
  ];
  try {
    while (stack.length > 0 && pageNo < last) {
      const { node, inherited, depth } = stack.pop()!;
      if (++nodes > MAX_NODES || depth > MAX_DEPTH) break;
      const dict = doc.dictAt(node, rev);
      if (!dict || seen.has(dict)) continue;
      seen.add(dict);
      const here: Inherited = {
        box: dict.map.get('MediaBox') ?? inherited.box,
        rotate: dict.map.get('Rotate') ?? inherited.rotate,
      };
      const kids = doc.deref(dict.map.get('Kids'), rev);
      if (Array.isArray(kids)) {
        for (let i = kids.length - 1; i >= 0; i--) stack.push({ node: kids[i], inherited: here, depth: depth + 1 });
        continue;
      }
      pageNo++;
      const at = wanted.get(pageNo);
      if (at !== undefined) out[at] = sizeOf(doc, rev, here);
    }
  } catch {
    // A reader error deep in a hostile file: the sizes found so far stand, the rest stay unknown.
  }
  return out;
}

function sizeOf(doc: PdfDocument, rev: number, attrs: Inherited): PageSize {
  let [w, h] = LETTER;
  const box = doc.deref(attrs.box, rev);
  if (Array.isArray(box) && box.length === 4) {
    const n = box.map((v) => doc.deref(v, rev));
    if (n.every((v): v is number => typeof v === 'number' && Number.isFinite(v))) {
      const bw = Math.abs(n[2]! - n[0]!);
      const bh = Math.abs(n[3]! - n[1]!);
      if (bw > 0 && bh > 0) [w, h] = [bw, bh];
    }
  }
  const r = doc.deref(attrs.rotate, rev);
  const rotate = typeof r === 'number' && Number.isInteger(r) ? ((r % 360) + 360) % 360 : 0;
  return rotate === 90 || rotate === 270 ? { width: h, height: w } : { width: w, height: h };
}

/** Pixels of a page scaled to `widthPx` wide (pdftoppm -scale-to-x W -scale-to-y -1). */
export function renderedHeight(size: PageSize, widthPx: number): number {
  return Math.max(1, Math.ceil((size.height * widthPx) / size.width));
}
