/**
 * Checks that bytes are a DOCX LibreOffice may see: src/docx/package.ts's openDocx (sniff, bounded central
 * directory, [Content_Types].xml, the Word main part the relationships name) with the office bounds. Only
 * `_rels/.rels` is inflated, within those bounds (a size that lies stops at the declared size).
 */
import { DEFAULT_PACKAGE_LIMITS, DocxPackage, openDocx, type DocxLimits } from '../docx/package.js';

/** Tighter than the generic package limits: LibreOffice holds a document's whole model in memory. */
export const OFFICE_PACKAGE_LIMITS: DocxLimits = {
  ...DEFAULT_PACKAGE_LIMITS,
  maxEntries: 5_000,
  maxTotalUncompressed: 256 * 1024 * 1024,
  maxEntryUncompressed: 128 * 1024 * 1024,
  maxRatio: 200,
};

/** Throws FolioError for anything but a bounded DOCX; returns the opened package (nothing else inflated yet). */
export function validateDocx(bytes: Uint8Array, limits: DocxLimits = OFFICE_PACKAGE_LIMITS): DocxPackage {
  return openDocx(bytes, limits);
}

/**
 * The bounds of a DOCX Folio built: the office size bounds stay (they protect LibreOffice's memory, which
 * holds the whole model whoever wrote the package; a filled template carries its template's media), the
 * compression-ratio heuristic goes. It guesses at declared sizes that lie, and Folio wrote these sizes
 * itself; a legitimately repetitive document (thousands of identical table rows, bound custom XML)
 * compresses past it.
 */
const FOLIO_BUILT_LIMITS: DocxLimits = { ...OFFICE_PACKAGE_LIMITS, maxRatio: Number.POSITIVE_INFINITY };

/**
 * Opens a DOCX Folio built itself (options.origin 'folio'): the ZIP directory only, which preparation
 * (prepare.ts) works on; it is still needed, because a filled template keeps its template's comments and
 * tracked changes. Skipped: the sniffing (PDF, legacy Word, encrypted OOXML), the [Content_Types].xml and
 * main-part checks and the zip-bomb ratio, which exist for hostile uploads; Folio's writers produce a
 * well-formed package by construction.
 */
export function openFolioBuiltDocx(bytes: Uint8Array): DocxPackage {
  return DocxPackage.open(bytes, FOLIO_BUILT_LIMITS);
}
