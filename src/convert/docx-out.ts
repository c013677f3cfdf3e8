/**
 * DOCX → Markdown and DOCX → HTML: the public entry points. The package is read once into a small document
 * model (src/docx/read: openDocx's bounds, the lossless XML tree), which the two writers walk
 * (docx-markdown.ts, docx-html.ts). Warnings say what the target format could not keep.
 */
import { readDocxModel, type ReadLimits } from '../docx/read/reader.js';
import { modelToHtml } from './docx-html.js';
import { modelToMarkdown } from './docx-markdown.js';

export interface DocxExportOptions {
  /** `inline` (default): images as data URIs; `drop`: images left out (their alt text kept), with a warning. */
  images?: 'inline' | 'drop';
  /** Bounds of the read (defaults: src/docx/read/reader.ts DEFAULT_READ_LIMITS). */
  limits?: Partial<ReadLimits>;
}

/** DOCX bytes → CommonMark + GFM (tables, strikethrough, task lists, footnotes). */
export function docxToMarkdown(bytes: Uint8Array, options: DocxExportOptions = {}): { markdown: string; warnings: string[] } {
  const doc = readDocxModel(bytes, options);
  const warnings = new Set(doc.warnings);
  const markdown = modelToMarkdown(doc, warnings);
  return { markdown, warnings: [...warnings] };
}

/** DOCX bytes → one self-contained HTML5 document (inline CSS, data-URI images, no scripts). */
export function docxToHtml(bytes: Uint8Array, options: DocxExportOptions = {}): { html: string; warnings: string[] } {
  const doc = readDocxModel(bytes, options);
  const warnings = new Set(doc.warnings);
  const html = modelToHtml(doc, warnings);
  return { html, warnings: [...warnings] };
}
