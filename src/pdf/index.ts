/**
 * Folio's PDF core, shared by sign, verify, merge and previews (modelled on pdf-lib's `src/core` and pyHanko's
 * `pdf_utils`); the only folder that imports @cantoo/pdf-lib (eslint.config.js):
 * - opening: `openBounded` / `openPdf` (open.ts), the bounded reader with the checks every capability shares;
 * - authoring: `openForAuthoring` (authoring.ts), the only way from input bytes to @cantoo/pdf-lib: the
 *   bounded reader reads, pdf-lib gets a document built from what it read (sign and merge open inputs so),
 *   pages repaired where pdf-lib would throw; pdf-lib's object model and drawing for capabilities (model.ts,
 *   never its parser) and its writer within an output budget (writer.ts);
 * - text strings and dates (text-string.ts), the one codec;
 * - reading: the bounded forensic reader (`PdfDocument`: every revision, its xref as a delta, objects
 *   resolved "as of" a revision, anomalies recorded) over a small object model;
 * - writing: PDF syntax for a parsed value, and the one incremental-update writer (new objects plus an
 *   xref section of the document's own kind, chained by /Prev), which takes what it chains to (last
 *   startxref, xref kind, trailer /Size /Root /Info /ID, entry offsets) from the reader's revisions;
 * - the audit-trail format that the signer embeds and the verifier reads back;
 * - PAdES long-term validation: the DSS (`dss.ts`) and the document timestamp (`doc-timestamp.ts`) updates.
 * The CMS in a signature's /Contents is DER, read and written in src/crypto (der.ts), which never imports src/pdf.
 * Everything else in this folder is internal to it.
 */
export {
  PdfDocument,
  MAX_DECODED_BYTES,
  MAX_OBJSTM_BYTES,
  MAX_REVISIONS,
  MAX_XREF_ENTRIES,
  type Anomaly,
  type ResolvedObject,
  type Revision,
  type XrefEntry,
  type XrefKind,
} from './reader.js';
export {
  MAX_NESTING,
  collectRefs,
  differingKeys,
  dictOf,
  isDict,
  isName,
  isRef,
  isStream,
  isString,
  sameValue,
  type IndirectObject,
  type PdfDict,
  type PdfName,
  type PdfRef,
  type PdfStream,
  type PdfString,
  type PdfValue,
} from './objects.js';
export { openBounded, openPdf, type OpenOptions } from './open.js';
export { ChunkWriter, serialize } from './serialize.js';
export { MAX_AUTHORING_OBJECTS, openForAuthoring, type AuthoringDocument, type AuthoringLimits } from './authoring.js';
// pdf-lib's object model and drawing, never its parser (model.ts: the only door to @cantoo/pdf-lib).
export * from './model.js';
export { saveWithin, type ByteCounter } from './writer.js';
export { decodePdfText, encodePdfText, formatPdfDate, parsePdfDate, pdfHexText } from './text-string.js';
export {
  MAX_OBJECT_NUMBER,
  appendIncrementalUpdate,
  lastXrefOf,
  readLastXref,
  scanObjects,
  type IncrementalUpdate,
  type LastXref,
  type TrailerEntries,
  type UpdateObject,
} from './incremental.js';
export { appendDss, contentsInGap, dssUpdate, vriKey, type DssContent, type UpdateBase, type ValidationData } from './dss.js';
export { afterUpdate } from './xref-chain.js';
export { authoredObjects } from './authored-update.js';
export { fillContents, placeByteRange, signatureDictionary, type PlacedSignature, type SignaturePlaceholder } from './signature-placeholder.js';
export { appendDocTimestampPlaceholder, byteRangeParts, fillDocTimestamp, type DocTimestampPlaceholder } from './doc-timestamp.js';
export {
  AUDIT_TRAIL_FILE_NAME,
  AUDIT_TRAIL_FORMAT,
  parseAuditRecord,
  type AuditEvent,
  type AuditRecord,
  type ClaimedAuditRecord,
  type Signer,
} from './audit-trail-format.js';
