/**
 * Where the DOCX → Markdown/HTML writers put what they produce: UTF-8 bytes, counted against the request's
 * OutputBudget while they are written (a 422 the moment the total passes OUTPUT_MAX_MB), never one document
 * string built first and measured after.
 *
 * The writers build each top-level block (a paragraph, a table, a list) as a string, because Markdown's
 * nesting (a list item's indentation, a quote's `> `) is applied to the finished text of the blocks inside.
 * A block's text is bounded by the document's model (its nodes and text are bounded by the read), except for
 * what a document can make repeat: a picture written again at every reference. So a writer `precharge`s each
 * such piece when it makes it (the budget sees it at once, and a block holding a thousand copies of a picture
 * stops at the limit instead of being built), and `write`s the block when done; the bytes of a write are
 * counted less what was precharged since the previous flush, so nothing is counted twice and the count is
 * never below what was written.
 *
 * Strings are turned into bytes every FLUSH_CHARS characters, so no string longer than one block plus that
 * ever exists, and the result is bytes: an answer larger than V8's longest string (2^29 − 24 characters) is
 * impossible by construction. One block holding more than MAX_BLOCK_BYTES of repeated pieces (possible only
 * with OUTPUT_MAX_MB set that high) is refused with the same 422 rather than reaching that string limit.
 */
import type { OutputBudget } from '../budget/index.js';
import { FolioError } from '../errors.js';

/** What a writer writes into. */
export interface TextSink {
  /** Counts `bytes` of a piece now that a later `write` will carry (a picture's data URI at one reference). */
  precharge(bytes: number): void;
  write(text: string): void;
}

/** Characters gathered before they are encoded (and the string pieces dropped). */
const FLUSH_CHARS = 1 << 20;
/** The most precharged bytes one block may hold: well under V8's longest string, with room for the rest of it. */
export const MAX_BLOCK_BYTES = 256 * 1024 * 1024;

const EMPTY = Buffer.alloc(0);

export class ByteSink implements TextSink {
  private readonly chunks: Buffer[] = [];
  private pending: string[] = [];
  private pendingChars = 0;
  private precharged = 0;
  private total = 0;

  constructor(private readonly budget: OutputBudget) {}

  precharge(bytes: number): void {
    if (this.precharged + bytes > MAX_BLOCK_BYTES) {
      throw new FolioError(
        'UNPROCESSABLE_DOCUMENT',
        `One paragraph or table of the document would make more than ${MAX_BLOCK_BYTES / 1048576} MB of ${this.budget.what}`,
        {
          details: [{ field: 'file', issue: `one block over ${MAX_BLOCK_BYTES / 1048576} MB` }],
        },
      );
    }
    this.budget.add(bytes);
    this.precharged += bytes;
  }

  write(text: string): void {
    if (!text) return;
    this.pending.push(text);
    this.pendingChars += text.length;
    if (this.pendingChars >= FLUSH_CHARS) this.flush();
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    const bytes = Buffer.from(this.pending.length === 1 ? this.pending[0]! : this.pending.join(''), 'utf8');
    this.pending = [];
    this.pendingChars = 0;
    // Precharged bytes are inside these (or were dropped by the writer: then counting them was conservative).
    this.budget.add(Math.max(0, bytes.length - this.precharged));
    this.precharged = 0;
    this.chunks.push(bytes);
    this.total += bytes.length;
  }

  /**
   * Everything written, as one Uint8Array owning its whole ArrayBuffer (so it can be transferred to another
   * thread: Buffer.concat may hand out a slice of Node's shared pool for small results).
   */
  finish(): Uint8Array {
    this.flush();
    const out = new Uint8Array(this.total);
    let at = 0;
    const chunks = this.chunks.splice(0);
    for (let i = 0; i < chunks.length; i++) {
      out.set(chunks[i]!, at);
      at += chunks[i]!.length;
      // Each chunk may be collected once copied: the copy and the chunks are not both held whole.
      chunks[i] = EMPTY;
    }
    return out;
  }
}
