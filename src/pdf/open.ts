/**
 * Caller bytes → the bounded reader's document, with the checks every capability shares, so sign, merge,
 * previews and verify refuse the same files the same way: the header (src/formats/sniff.ts), the reader's
 * own bounds (cross-reference entries, revisions, inflation, nesting: reader.ts), encryption, a document
 * catalog, a trailer /Size within the PDF limit. Refusals are FolioErrors: 400 INVALID_FILE_FORMAT for
 * bytes that are not a PDF (verify's openPdf; sign and merge sniff first and name the input themselves),
 * 422 UNPROCESSABLE_DOCUMENT whose message starts "The PDF …" for the rest.
 */
import { FolioError, isFolioError } from '../errors.js';
import { isPdf } from '../formats/sniff.js';
import { MAX_OBJECT_NUMBER } from './incremental.js';
import { PdfDocument } from './reader.js';

export interface OpenOptions {
  /** What the document is opened for, in messages ("signing", "merging", "previewing"). */
  purpose: string;
  /**
   * An encrypted document is refused (pdf-lib cannot decrypt, so sign and merge cannot author on it) unless
   * allowed: a renderer decrypts a document whose user password is empty (previews), the reader's
   * structure (page tree, boxes) is not encrypted.
   */
  allowEncrypted?: boolean;
}

const unprocessable = (message: string, cause?: unknown) => new FolioError('UNPROCESSABLE_DOCUMENT', message, { cause });

/** Reads `bytes` with the bounded reader and refuses what no capability can work on (see the header). */
export function openBounded(bytes: Uint8Array, options: OpenOptions): PdfDocument {
  let reader: PdfDocument;
  try {
    reader = new PdfDocument(bytes);
  } catch (e) {
    // The reader's own bounds answer a FolioError; anything else is a file it could not read at all.
    if (isFolioError(e)) throw unprocessable(e.message, e);
    throw unprocessable('The PDF could not be read', e);
  }
  if (!options.allowEncrypted && reader.isEncrypted()) {
    throw unprocessable(`The PDF is encrypted; remove the encryption (or password) before ${options.purpose}`);
  }
  if (reader.revisions.length === 0 || !reader.catalogAt(reader.last)) {
    throw unprocessable('The PDF has no readable document catalog (corrupt, truncated, or not a PDF after its header)');
  }
  const size = reader.trailerAt(reader.last)?.map.get('Size');
  if (typeof size === 'number' && size > MAX_OBJECT_NUMBER + 1) {
    throw unprocessable(`The PDF's trailer declares /Size ${size}, beyond the PDF limit of ${MAX_OBJECT_NUMBER + 1} objects`);
  }
  return reader;
}

/** Opens bytes as a PDF for verification: 400 when they are not one, 422 when encrypted or unreadable. */
export function openPdf(bytes: Uint8Array): PdfDocument {
  if (!isPdf(bytes))
    throw new FolioError('INVALID_FILE_FORMAT', 'The document is not a PDF (no %PDF- header)', {
      details: [{ field: 'document', issue: 'not a PDF' }],
    });
  const doc = new PdfDocument(bytes);
  if (doc.isEncrypted()) throw new FolioError('UNPROCESSABLE_DOCUMENT', 'The PDF is encrypted; signatures of encrypted PDFs are not verified');
  if (doc.revisions.length === 0 || !doc.catalogAt(doc.last)) {
    throw new FolioError('UNPROCESSABLE_DOCUMENT', 'The PDF has no readable document catalog (corrupt or truncated)');
  }
  return doc;
}
