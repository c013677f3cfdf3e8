/**
 * What the block and inline readers share while reading one part: the style sheet, the numbering, the
 * part's relationships, the image loader (with its budget), the note references met so far, and the
 * bounds that keep a hostile document from multiplying work.
 */
import { FolioError } from '../../errors.js';
import type { Block, ImageData } from './model.js';
import type { Numbering } from './numbering.js';
import type { StyleSheet } from './styles.js';

export interface Relationship {
  target: string;
  external: boolean;
}

/** Limits of one read (defaults in reader.ts). */
export interface ReadLimits {
  /** Blocks and inlines together, for the whole document. */
  maxNodes: number;
  /** Nesting of tables, quotes and lists inside each other. */
  maxDepth: number;
  /** Cells of one table. */
  maxTableCells: number;
  /** Image bytes embedded in total; pictures beyond are dropped with a warning. */
  maxImageBytes: number;
  /** Pictures and text boxes of drawings, for the whole document; shapes beyond are left out with a warning. */
  maxShapes: number;
}

export interface ReadContext {
  styles: StyleSheet;
  numbering: Numbering;
  rels: Map<string, Relationship>;
  limits: ReadLimits;
  images: 'inline' | 'drop';
  /** The picture of a relationship id, or undefined (and a warning) when it cannot be embedded. */
  image(rId: string): ImageData | undefined;
  /** Note references in text order (notes are read after the body, in this order). */
  noteRefs: Array<{ kind: 'footnote' | 'endnote'; id: string }>;
  warn(message: string): void;
  /** The Markdown of source island `id` (islands.ts), read from its part on first use; undefined after its first use. */
  island(id: string): string | undefined;
  /** Counts model nodes; throws past the limit. */
  count(n?: number): void;
  /**
   * The document was written by Folio's Markdown/HTML → DOCX writer (docProps/app.xml Application "Folio"),
   * whose conventions it is read back by: quotes nest by 720 twips of indentation a level (QUOTE_STEP), and a
   * heading with a direct list number is a list item holding a heading (`- # Title`).
   */
  writtenByFolio: boolean;
  /** The blocks of an embedded chunk (w:altChunk r:id), read by reader.ts within the document's budgets. */
  altChunk(rId: string | undefined): Block[];
  /** Counts one shape (picture or text box of a drawing): false past ReadLimits.maxShapes (warned once). */
  shape(): boolean;
}

export function nodeCounter(limit: number): (n?: number) => void {
  let used = 0;
  return (n = 1) => {
    used += n;
    if (used > limit) {
      throw new FolioError('UNPROCESSABLE_DOCUMENT', `The document has more than ${limit} paragraphs, runs and cells; it is too large to convert`);
    }
  };
}

/**
 * Content nested past ReadLimits.maxDepth (tables in tables, text boxes, content controls, inline wrappers):
 * refused as the README promises (422 naming the limit), never converted with the inner content silently
 * left out. No real document nests 32 levels; a generated one that does should hear why it failed.
 */
export function nestedTooDeeply(limit: number): FolioError {
  return new FolioError(
    'UNPROCESSABLE_DOCUMENT',
    `The document nests tables, text boxes or content controls more than ${limit} levels deep; the limit is ${limit}`,
  );
}

/** Twips of indentation that make one level of block quote (Folio's writer and pandoc's use 720). */
export const QUOTE_STEP = 720;
