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
  // Comments as PDF text annotations: only meaningful when the comments reached LibreOffice (the soffice
  // fallback); PDF/A-1 forbids annotations without appearance streams, which these are, so never with pdfa.
  if (options.comments === 'annotations' && !options.pdfa) data.ExportNotes = { type: 'boolean', value: 'true' };
  return Object.keys(data).length === 0 ? '' : JSON.stringify(data);
}

const PDFA1A_MARK = Buffer.from('<pdfaid:conformance>A</pdfaid:conformance>', 'latin1');

/**
 * LibreOffice 7.4 exports SelectPdfVersion=1 as PDF/A-1a (tagged). Level A is a superset of level B, so the
 * file also conforms to PDF/A-1b; the caller asked for 1b, so its XMP identification says B. The metadata
 * stream of a PDF/A file is uncompressed and the replacement has the same length: offsets stay valid.
 */
export function declarePdfa1b(pdf: Uint8Array): Uint8Array {
  const buf = Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength);
  const at = buf.indexOf(PDFA1A_MARK);
  if (at >= 0) buf[at + '<pdfaid:conformance>'.length] = 0x42; // 'B'
  return pdf;
}
