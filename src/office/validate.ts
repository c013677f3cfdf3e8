/**
 * Checks that bytes are a DOCX LibreOffice may see: src/docx/package.ts's openDocx (sniff, bounded central
 * directory, [Content_Types].xml, the Word main part the relationships name) with the office bounds. Only
 * `_rels/.rels` is inflated, within those bounds (a size that lies stops at the declared size).
 */
import { DEFAULT_PACKAGE_LIMITS, openDocx, type DocxLimits, type DocxPackage } from '../docx/package.js';

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
