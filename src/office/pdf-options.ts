/**
 * PDF export filter options for LibreOffice 7.4's writer_pdf_Export, in the JSON form its PDF filter reads
 * from FilterOptions: `{"Name":{"type":"long|boolean|string","value":"…"}}`.
 */
import type { DocxToPdfOptions } from './types.js';

const PDFA_VERSION: Record<NonNullable<DocxToPdfOptions['pdfa']>, number> = { '1b': 1, '2b': 2, '3b': 3 };

export function pdfFilterOptions(options: DocxToPdfOptions): string {
  const data: Record<string, { type: 'long' | 'boolean' | 'string'; value: string }> = {};
  if (options.pdfa) {
    data.SelectPdfVersion = { type: 'long', value: String(PDFA_VERSION[options.pdfa]) };
    // PDF/A requires every font embedded, the standard 14 included.
    data.EmbedStandardFonts = { type: 'boolean', value: 'true' };
  }
  if (options.tagged !== undefined) data.UseTaggedPDF = { type: 'boolean', value: String(options.tagged) };
  return Object.keys(data).length === 0 ? '' : JSON.stringify(data);
}
