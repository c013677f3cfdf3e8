/**
 * Public surface of the convert capability: Markdown/HTML → DOCX natively (no process spawn), DOCX → PDF
 * through the office engine, and the (from, to) pair dispatch used by POST /v1/convert.
 */
import { FolioError } from '../errors.js';
import { isCompoundFile, isZip } from '../formats/sniff.js';
import type { DocxToPdfOptions, OfficeEngine } from '../office/types.js';
import { decodeText } from './text.js';
import { markdownForDocx, parseMarkdown } from './markdown.js';
import { markdownDocxBody } from './markdown-docx.js';
import { hasIslands, islandHtml } from './markdown-islands.js';
import { buildDocxPackage } from './package.js';
import { convertHtml, convertMarkdownDom, type ConvertedBody, type ConvertOptions } from './html-to-docx.js';

export type { ConvertOptions, WordFragment, FragmentOptions } from './html-to-docx.js';
export { htmlToWordFragment } from './html-to-docx.js';
export { markdownToHtml, GFM_EXTENSIONS, type GfmExtension, type MarkdownOptions } from './markdown.js';
export { docxToMarkdown, docxToHtml, docxToText, DEFAULT_OUTPUT_MAX_BYTES, type DocxExportOptions } from './docx-out.js';
import { docxToText } from './docx-out.js';

export type SourceFormat = 'docx' | 'md' | 'html';
export type TargetFormat = 'pdf' | 'docx' | 'md' | 'html';

/** A DOCX made from Markdown or HTML, with what it could not keep as it was (wide tables split, images dropped…). */
export interface DocxResult {
  docx: Uint8Array;
  warnings: string[];
}

/** Markdown (CommonMark + GFM) → DOCX bytes. */
export function markdownToDocx(markdown: string, options: ConvertOptions = {}): Uint8Array {
  return markdownToDocxWithWarnings(markdown, options).docx;
}

/** HTML (with inline and <style> CSS) → DOCX bytes. Never fetches anything; scripts are ignored. */
export function htmlToDocx(html: string, options: ConvertOptions = {}): Uint8Array {
  return htmlToDocxWithWarnings(html, options).docx;
}

function withWarnings(body: ConvertedBody, options: ConvertOptions): DocxResult {
  return { docx: buildDocxPackage(body, options), warnings: body.warnings };
}

/** Markdown → DOCX and the conversion's warnings (POST /v1/convert reports them in `X-Folio-Warnings`). */
export function markdownToDocxWithWarnings(markdown: string, options: ConvertOptions = {}): DocxResult {
  // Without raw HTML, WordprocessingML is written straight from markdown-it's tokens; with it, through the
  // HTML walk (over a DOM built from the tokens, or over the rendered HTML).
  // Blocks Word cannot carry (raw HTML, images, nested emphasis, loose lists) keep their Markdown beside them
  // (markdown-islands.ts): the direct writer does it itself; the HTML walk is given islands in the HTML.
  const parse = parseMarkdown(markdown, { extensions: options.markdownExtensions });
  const direct = parse.rawHtml ? undefined : markdownDocxBody(parse, options);
  if (direct) return withWarnings(direct, options);
  if (hasIslands(parse)) {
    const { html, key } = islandHtml(parse);
    return withWarnings(convertHtml(html, options, !parse.rawHtml, key), options);
  }
  const md = markdownForDocx(parse);
  const body = 'dom' in md ? convertMarkdownDom(md.dom, options) : convertHtml(md.html, options, !md.rawHtml);
  return withWarnings(body, options);
}

/** HTML → DOCX and the conversion's warnings. */
export function htmlToDocxWithWarnings(html: string, options: ConvertOptions = {}): DocxResult {
  return withWarnings(convertHtml(html, options), options);
}

const MD_EXT = new Set(['md', 'markdown', 'mdown', 'mkd', 'mkdn', 'mdwn', 'txt', 'text']);
const HTML_EXT = new Set(['html', 'htm', 'xhtml', 'xht']);

/** The source format from the file name and the first bytes, or undefined when neither tells. */
const HTML_START = /^(<!doctype\s+html|<html[\s>]|<\?xml[^>]*>\s*(<!doctype\s+html|<html)|<head[\s>]|<body[\s>])/i;

/**
 * Offset after a BOM, white space and leading HTML comments. A loop, not a regex: `(<!--[\s\S]*?-->\s*)*`
 * backtracks exponentially on `<!---->` repeated (24 repetitions took 0.24 s, each one more doubles it),
 * and this runs on the request thread before any engine.
 */
function afterLeadingComments(text: string): number {
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  for (;;) {
    while (i < text.length && /\s/.test(text[i]!)) i++;
    if (!text.startsWith('<!--', i)) return i;
    const end = text.indexOf('-->', i + 4);
    if (end < 0) return i;
    i = end + 3;
  }
}

export function inferSourceFormat(filename: string, bytes: Uint8Array): SourceFormat | undefined {
  const base = filename.split(/[\\/]/).pop() ?? '';
  const dot = base.lastIndexOf('.');
  const ext = dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
  if (isZip(bytes)) return ext === 'docx' || ext === '' || ext === 'docm' || ext === 'dotx' ? 'docx' : ext === 'zip' ? undefined : 'docx';
  // An encrypted OOXML file is a CFB container: it is a DOCX the office engine refuses with 422, not a mystery.
  if (isCompoundFile(bytes)) return ext === 'docx' || ext === 'docm' || ext === 'dotx' ? 'docx' : undefined;
  if (ext === 'docx') return undefined; // named DOCX, but not a ZIP
  const head = bytes.subarray(0, 8192);
  if (head.includes(0)) return undefined; // binary
  const text = new TextDecoder('utf-8').decode(head);
  // A PDF header at the start: not text (a Markdown file may well mention "%PDF-1.7" further down).
  if (/^\s*%PDF-/.test(text)) return undefined;
  const looksHtml = HTML_START.test(text.slice(afterLeadingComments(text)));
  if (HTML_EXT.has(ext) || looksHtml) return 'html';
  if (MD_EXT.has(ext) || ext === '') return 'md';
  return undefined;
}

export interface ConvertDocumentOptions {
  office?: OfficeEngine;
  pageSize?: 'A4' | 'Letter';
  pdf?: DocxToPdfOptions;
  /** docx→md|html: images as data URIs (default) or dropped. */
  images?: 'inline' | 'drop';
  /** docx→md|html: bytes the output may have (default: docx-out.ts DEFAULT_OUTPUT_MAX_BYTES). */
  outputMaxBytes?: number;
}

const PAIRS = new Set(['docx>pdf', 'md>docx', 'html>docx', 'md>pdf', 'html>pdf', 'docx>md', 'docx>html']);

/** Converts bytes of `from` into `to`; throws FolioError for an unsupported pair or unusable input. */
export async function convertDocument(bytes: Uint8Array, from: SourceFormat, to: TargetFormat, options: ConvertDocumentOptions): Promise<Uint8Array> {
  if (!PAIRS.has(`${from}>${to}`)) {
    throw new FolioError('UNSUPPORTED_CONVERSION', `Conversion from ${from} to ${to} is not supported`, {
      details: [{ field: 'to', issue: `supported: docx→pdf, docx→md, docx→html, md→docx, html→docx, md→pdf, html→pdf` }],
    });
  }
  if (to === 'md' || to === 'html') {
    // DOCX → Markdown/HTML in this thread (the API runs it on the engine pool: task convert.fromDocx).
    return docxToText(bytes, to, { images: options.images, outputMaxBytes: options.outputMaxBytes }).bytes;
  }
  if (to === 'pdf' && !options.office) {
    throw new FolioError('SERVICE_UNAVAILABLE', 'PDF conversion is not available on this instance', { retryAfter: 30 });
  }
  let docx: Uint8Array;
  if (from === 'docx') {
    // Encrypted OOXML (a CFB container) goes on to the office engine, which answers 422 saying so.
    if (!isZip(bytes) && !isCompoundFile(bytes)) throw new FolioError('INVALID_FILE_FORMAT', 'The file is not a DOCX (not a ZIP package)');
    docx = bytes;
  } else {
    const text = decodeText(bytes);
    docx = from === 'md' ? markdownToDocx(text, { pageSize: options.pageSize }) : htmlToDocx(text, { pageSize: options.pageSize });
  }
  if (to === 'docx') return docx;
  return options.office!.docxToPdf(docx, options.pdf ?? {});
}
