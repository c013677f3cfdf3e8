/**
 * Checks that bytes are a DOCX LibreOffice may see, without inflating more than the package relationships:
 * a ZIP (not a PDF, not an encrypted OOXML compound file) whose central directory stays within the entry
 * and size bounds, with [Content_Types].xml and the main document part the relationships name.
 */
import { unzipSync, strFromU8 } from 'fflate';
import { FolioError } from '../errors.js';
import { checkZipBounds, isCompoundFile, isPdf, isZip, type PackageLimits } from '../docx/package.js';

/** Tighter than the generic package limits: LibreOffice holds a document's whole model in memory. */
export const OFFICE_PACKAGE_LIMITS: PackageLimits = {
  maxEntries: 5_000,
  maxTotalUncompressed: 256 * 1024 * 1024,
  maxEntryUncompressed: 128 * 1024 * 1024,
  maxRatio: 200,
};

const MAX_RELS_BYTES = 1024 * 1024;

/** Throws FolioError for anything but a bounded DOCX; returns the package's entry names. */
export function validateDocx(bytes: Uint8Array, limits: PackageLimits = OFFICE_PACKAGE_LIMITS): string[] {
  if (bytes.length === 0) throw new FolioError('INVALID_FILE_FORMAT', 'The file is empty');
  if (isCompoundFile(bytes)) {
    throw new FolioError('UNPROCESSABLE_DOCUMENT', 'The document is encrypted (password-protected OOXML) or a legacy binary Word file');
  }
  if (isPdf(bytes)) throw new FolioError('INVALID_FILE_FORMAT', 'The file is a PDF, not a DOCX');
  if (!isZip(bytes)) throw new FolioError('INVALID_FILE_FORMAT', 'The file is not a DOCX (not a ZIP package)');
  const entries = checkZipBounds(bytes, limits);
  const names = new Map(entries.map((e) => [e.name.replace(/^\//, ''), e]));
  if (!names.has('[Content_Types].xml')) {
    throw new FolioError('INVALID_FILE_FORMAT', 'The ZIP package has no [Content_Types].xml; it is not a DOCX');
  }
  const main = mainDocumentPart(bytes, names.get('_rels/.rels')?.uncompressedSize);
  if (!main || !names.has(main)) throw new FolioError('INVALID_FILE_FORMAT', 'The package has no Word main document part');
  return [...names.keys()];
}

/** The officeDocument target of _rels/.rels, or word/document.xml when the package has no such relationship. */
function mainDocumentPart(bytes: Uint8Array, relsSize: number | undefined): string | undefined {
  if (relsSize !== undefined && relsSize <= MAX_RELS_BYTES) {
    let rels: string | undefined;
    try {
      const part = unzipSync(bytes, { filter: (f) => f.name.replace(/^\//, '') === '_rels/.rels' });
      const data = Object.values(part)[0];
      rels = data ? strFromU8(data) : undefined;
    } catch (e) {
      throw new FolioError('UNPROCESSABLE_DOCUMENT', 'The DOCX package is corrupt and cannot be unpacked', { cause: e });
    }
    const rel = rels && /<Relationship\b[^>]*Type="[^"]*\/officeDocument"[^>]*>/.exec(rels);
    const target = rel && /Target="([^"]+)"/.exec(rel[0]);
    if (target?.[1]) {
      const t = target[1].replace(/^\//, '');
      // Only Word main parts: a spreadsheet or presentation package is not a DOCX.
      if (/\.xml$/i.test(t) && !/^(xl|ppt)\//i.test(t)) return t;
      return undefined;
    }
  }
  return 'word/document.xml';
}
