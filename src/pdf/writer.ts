/**
 * pdf-lib's writer within an output budget (OUTPUT_MAX_MB): the bytes of a document Folio authored (merge's
 * output). pdf-lib's writer first sizes every object to allocate the file in one buffer, then fills it; this
 * subclass counts each object's size against the budget as it is sized, so an output past the limit is
 * refused (the budget's 422 naming OUTPUT_MAX_MB) before the buffer exists, at the cost of one addition per
 * object. The writing itself is pdf-lib's. (Incremental updates of input documents are incremental.ts's.)
 */
import { PDFWriter, defaultDocumentSnapshot, type PDFContext, type PDFDocument, type PDFObject, type PDFRef } from '@cantoo/pdf-lib';

/** What counts the bytes written (src/budget's OutputBudget): throws to stop the write. */
export interface ByteCounter {
  add(bytes: number): void;
}

class BudgetedWriter extends PDFWriter {
  constructor(
    context: PDFContext,
    objectsPerTick: number,
    private readonly budget: ByteCounter,
  ) {
    super(context, objectsPerTick, defaultDocumentSnapshot);
  }

  protected override computeIndirectObjectSize(entry: [PDFRef, PDFObject]): number {
    const size = super.computeIndirectObjectSize(entry);
    // The object and its 20-byte line in the cross-reference table.
    this.budget.add(size + 20);
    return size;
  }
}

/**
 * The bytes of `doc` (classic xref table, no object streams), or the budget's 422. What pdf-lib's
 * `save({ useObjectStreams: false, updateFieldAppearances: false, addDefaultPage: false })` does for a
 * document Folio built: embed what is pending (flush), then write.
 */
export async function saveWithin(doc: PDFDocument, budget: ByteCounter, objectsPerTick: number): Promise<Uint8Array> {
  await doc.flush();
  return new BudgetedWriter(doc.context, objectsPerTick, budget).serializeToBuffer();
}
