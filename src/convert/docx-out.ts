/**
 * DOCX → Markdown and DOCX → HTML: the public entry points. The package is read once into a small document
 * model (src/docx/read: openDocx's bounds, the lossless XML tree), which the two writers walk
 * (docx-markdown.ts, docx-html.ts). Warnings say what the target format could not keep.
 *
 * What they produce is bounded like what they read: the writers count their output against an OutputBudget
 * (`outputMaxBytes`, OUTPUT_MAX_MB in the API) while they write it, and the result is UTF-8 bytes
 * (output-sink.ts), so a document that multiplies a picture or an island gets the 422 at the limit, not a
 * gigabyte string.
 */
import { OutputBudget } from '../budget/index.js';
import { readDocxModel, type ReadLimits } from '../docx/read/reader.js';
import { writeHtml } from './docx-html.js';
import { writeMarkdown } from './docx-markdown.js';
import { trustIslands } from './markdown-safety.js';
import { ByteSink } from './output-sink.js';
import { convertHtml } from './html-to-docx.js';
import { buildDocxPackage } from './package.js';

/**
 * An embedded HTML chunk (w:altChunk) → a DOCX, through Folio's own HTML → DOCX engine (the DOM walk, its
 * CSS and bounds), which the reader then reads like any document: the chunk keeps its headings, lists,
 * tables, emphasis and links. Nothing is fetched (images by URL become their alt text), no script runs.
 */
function chunkHtmlToDocx(html: string): Uint8Array {
  return buildDocxPackage(convertHtml(html, {}), {});
}

/** The output budget when the caller gives none: OUTPUT_MAX_MB's default (src/config). */
export const DEFAULT_OUTPUT_MAX_BYTES = 100 * 1024 * 1024;

export interface DocxExportOptions {
  /** `inline` (default): images as data URIs; `drop`: images left out (their alt text kept), with a warning. */
  images?: 'inline' | 'drop';
  /** Bounds of the read (defaults: src/docx/read/reader.ts DEFAULT_READ_LIMITS). */
  limits?: Partial<ReadLimits>;
  /** Bytes the output may have (default DEFAULT_OUTPUT_MAX_BYTES); beyond: 422 UNPROCESSABLE_DOCUMENT naming it. */
  outputMaxBytes?: number;
  /**
   * Markdown: write every source island's kept Markdown verbatim, even raw HTML that is not safe to render
   * (markdown-safety.ts). Only for a DOCX made from Markdown the caller trusts; the API never sets it.
   */
  trustIslands?: boolean;
}

/**
 * DOCX bytes → Markdown (`md`) or HTML (`html`) as UTF-8 bytes in a buffer of their own (transferable to
 * another thread), counted against the output budget while written.
 */
export function docxToText(bytes: Uint8Array, to: 'md' | 'html', options: DocxExportOptions = {}): { bytes: Uint8Array; warnings: string[] } {
  const doc = readDocxModel(bytes, { ...options, htmlToDocx: chunkHtmlToDocx });
  if (options.trustIslands) trustIslands(doc);
  const warnings = new Set(doc.warnings);
  const sink = new ByteSink(new OutputBudget(options.outputMaxBytes ?? DEFAULT_OUTPUT_MAX_BYTES, to === 'md' ? 'Markdown' : 'HTML'));
  if (to === 'md') writeMarkdown(doc, warnings, sink);
  else writeHtml(doc, warnings, sink);
  return { bytes: sink.finish(), warnings: [...warnings] };
}

/** DOCX bytes → CommonMark + GFM (tables, strikethrough, task lists, footnotes), as a string. */
export function docxToMarkdown(bytes: Uint8Array, options: DocxExportOptions = {}): { markdown: string; warnings: string[] } {
  const r = docxToText(bytes, 'md', options);
  return { markdown: utf8(r.bytes), warnings: r.warnings };
}

/** DOCX bytes → one self-contained HTML5 document (inline CSS, data-URI images, no scripts), as a string. */
export function docxToHtml(bytes: Uint8Array, options: DocxExportOptions = {}): { html: string; warnings: string[] } {
  const r = docxToText(bytes, 'html', options);
  return { html: utf8(r.bytes), warnings: r.warnings };
}

const utf8 = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8');
