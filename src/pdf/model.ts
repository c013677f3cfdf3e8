/**
 * The authoring surface of @cantoo/pdf-lib that capabilities use on a document openForAuthoring opened (or
 * on a new one from createDocument): its object model (dictionaries, arrays, names, references, strings,
 * streams, the page tree), its object copier, and its drawing (pages, fonts, colours). Capabilities import
 * these from src/pdf/index.js; only src/pdf imports pdf-lib itself (ESLint `no-restricted-imports` in
 * eslint.config.js), so everything that reaches pdf-lib passes through this folder.
 *
 * Left out on purpose: pdf-lib's parser (`PDFParser`) and `PDFDocument` as a value, whose `load` parses
 * caller bytes with no bounds (see authoring.ts). `PDFDocument` is exported as a type; new documents come
 * from createDocument, input documents from openForAuthoring, bytes out from saveWithin (writer.ts).
 */
import { PDFDocument } from '@cantoo/pdf-lib';
// pdf-lib's name interning made weak before any document is built here (names.ts).
import './names.js';

export {
  PDFArray,
  PDFDict,
  PDFHexString,
  PDFName,
  PDFNull,
  PDFNumber,
  PDFObjectCopier,
  PDFPage,
  PDFPageLeaf,
  PDFPageTree,
  PDFRawStream,
  PDFRef,
  PDFString,
  ParseSpeeds,
  StandardFonts,
  rgb,
  type PDFContext,
  type PDFDocument,
  type PDFFont,
  type PDFObject,
} from '@cantoo/pdf-lib';

/** An empty pdf-lib document to author into (merge's output); no producer or dates set until the caller sets them. */
export function createDocument(): Promise<PDFDocument> {
  return PDFDocument.create({ updateMetadata: false });
}
