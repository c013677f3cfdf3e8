/**
 * `folio convert --to png|jpeg`: page previews, as POST /v1/convert answers them (issue 17). The options are
 * checked by the API's own parser (src/preview: width ≤ 4000 px, at most 50 pages) before any document is
 * read, so a bad value is bad usage (exit 2) in both modes. Locally a PDF goes to poppler as it is and a DOCX
 * through the office engine first (as an upload, every office check applies), exactly as the route does;
 * Markdown/HTML are refused as the API refuses them, so local and remote mode answer alike.
 */
import { FolioError } from '../errors.js';
import { inferSourceFormat, type SourceFormat } from '../convert/index.js';
import { isPdf } from '../formats/sniff.js';
import { writeZip } from '../docx/zip-writer.js';
import { parsePreviewOptions, renderPdfPages, type PreviewFormat, type PreviewRequest } from '../preview/index.js';
import type { OfficePool } from '../office/index.js';
import { CliError, EXIT_USAGE } from './output.js';

export const isPreviewFormat = (to: string): to is PreviewFormat => to === 'png' || to === 'jpeg';

/** `--width`/`--pages` as typed → the checked request; a usage error (exit 2) with the API's details otherwise. */
export function previewRequest(width: string | undefined, pages: string | undefined): PreviewRequest {
  try {
    return parsePreviewOptions(width, pages);
  } catch (e) {
    if (e instanceof FolioError) throw new CliError(e.code, e.message, EXIT_USAGE, e.details);
    throw e;
  }
}

/** The output file's extension: the image for one page, a ZIP of `page-<n>.<ext>` for several (as the API). */
export function previewExtension(format: PreviewFormat, req: PreviewRequest): string {
  if (req.pages.length > 1) return 'zip';
  return format === 'png' ? 'png' : 'jpg';
}

/** Renders the previews of one input in this process. */
export async function localPreview(
  bytes: Uint8Array,
  name: string,
  given: SourceFormat | 'pdf' | undefined,
  format: PreviewFormat,
  req: PreviewRequest,
  office: () => Promise<OfficePool>,
): Promise<Uint8Array> {
  let from = given ?? (isPdf(bytes) ? 'pdf' : inferSourceFormat(name, bytes));
  if (from === 'pdf' && !isPdf(bytes)) from = undefined;
  if (from === 'md' || from === 'html') {
    throw new FolioError('UNSUPPORTED_CONVERSION', `Previews are made of a DOCX or a PDF, not ${from}`, {
      details: [{ field: 'from', issue: 'previews: docx or pdf' }],
    });
  }
  if (!from) throw new FolioError('VALIDATION_ERROR', 'Cannot tell the format from the name or content; pass --from docx|pdf');
  const pdf = from === 'docx' ? await (await office()).docxToPdf(bytes, { origin: 'upload' }) : bytes;
  const pages = await renderPdfPages(pdf, format, req);
  if (pages.length === 1) return pages[0]!.bytes;
  const ext = format === 'png' ? 'png' : 'jpg';
  // Images are compressed already: stored, as the API's ZIP.
  return writeZip(pages.map((p) => ({ name: `page-${p.page}.${ext}`, data: p.bytes, store: true })));
}
