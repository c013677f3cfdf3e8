/**
 * Writes the merged PDF within the request's output budget (OUTPUT_MAX_MB). pdf-lib's writer first sizes
 * every object to allocate the file in one buffer, then fills it; this subclass counts each object's size
 * against the budget as it is sized, so an output past the limit is refused (422 naming OUTPUT_MAX_MB)
 * before the buffer exists, at the cost of one addition per object. The writing itself is pdf-lib's.
 */
import { PDFWriter, defaultDocumentSnapshot, type PDFContext, type PDFDocument, type PDFObject, type PDFRef } from '@cantoo/pdf-lib';
import type { OutputBudget } from '../budget/index.js';

class BudgetedWriter extends PDFWriter {
  constructor(
    context: PDFContext,
    objectsPerTick: number,
    private readonly budget: OutputBudget,
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
export async function saveWithin(doc: PDFDocument, budget: OutputBudget, objectsPerTick: number): Promise<Uint8Array> {
  await doc.flush();
  return new BudgetedWriter(doc.context, objectsPerTick, budget).serializeToBuffer();
}
