/**
 * HTML → WordprocessingML, the public entry points: a whole body for a DOCX package (htmlToDocx, and the
 * Markdown path's DOM), or a fragment for insertion into another document (annotate). The walk itself is
 * html-walker.ts; the WordprocessingML it writes comes from the shared writer in src/docx/wordml.
 */
import type { Document } from 'domhandler';
import type { GfmExtension } from './markdown.js';
import type { Relationship } from '../docx/wordml/relationships.js';
import { HtmlConverter } from './html-walker.js';
import { islandSources } from './markdown-islands.js';
import type { WordWriter } from '../docx/wordml/writer.js';

export type { Relationship } from '../docx/wordml/relationships.js';

export interface ConvertOptions {
  pageSize?: 'A4' | 'Letter';
  /** Markdown input only: the GFM extensions to enable (default all; [] is strict CommonMark). */
  markdownExtensions?: readonly GfmExtension[];
}

/** Everything a package (or a host document, for a fragment) needs to hold the converted body. */
export interface ConvertedBody {
  bodyXml: string;
  relationships: Relationship[];
  media: MediaPart[];
  /** <w:abstractNum> elements, then <w:num> elements, for numbering.xml. */
  abstractNums: string[];
  nums: string[];
  /** <w:footnote> elements (user footnotes only; the separators are the package's). */
  footnotes: string[];
  title?: string;
  warnings: string[];
  /** The Markdown of the source islands the body's content controls name (markdown-islands.ts), if any. */
  islands?: string[];
}

export interface MediaPart {
  /** Path inside the package, e.g. word/media/image1.png. */
  path: string;
  bytes: Uint8Array;
  contentType: string;
  extension: string;
}

export interface FragmentOptions {
  /** Text width in twips for scaling images and sizing tables (default: A4 with 1" margins). */
  textWidthTwips?: number;
  /** Relationship id prefix; ids are `${relIdPrefix}${n}` (default 'rIdC'). Must not collide in the host. */
  relIdPrefix?: string;
  /** First w:abstractNumId / w:numId to allocate (default 1). */
  firstNumId?: number;
  /** First footnote id (default 1). */
  firstFootnoteId?: number;
  /** First wp:docPr id for drawings (default 1). */
  firstDrawingId?: number;
  /** Media file name prefix inside word/media/ (default 'image'). */
  mediaPrefix?: string;
  /**
   * Header rows get their bold look from the table style (true only where the package's styles.xml is ours:
   * whole documents; default false, since a template's table style may not make the first row bold).
   */
  styledHeaderRows?: boolean;
}

export type WordFragment = ConvertedBody;
const PAGE = {
  A4: { w: 11906, h: 16838 },
  Letter: { w: 12240, h: 15840 },
} as const;
export const PAGE_MARGIN = 1440;

export function pageGeometry(size: 'A4' | 'Letter' = 'A4') {
  const p = PAGE[size];
  return { width: p.w, height: p.h, margin: PAGE_MARGIN, textWidth: p.w - 2 * PAGE_MARGIN };
}

function fragmentDefaults(opts: FragmentOptions): Required<FragmentOptions> {
  return {
    textWidthTwips: opts.textWidthTwips ?? pageGeometry('A4').textWidth,
    relIdPrefix: opts.relIdPrefix ?? 'rIdC',
    firstNumId: opts.firstNumId ?? 1,
    firstFootnoteId: opts.firstFootnoteId ?? 1,
    firstDrawingId: opts.firstDrawingId ?? 1,
    mediaPrefix: opts.mediaPrefix ?? 'image',
    styledHeaderRows: opts.styledHeaderRows ?? false,
  };
}

/** HTML → body XML plus the parts it references. Used by htmlToDocx and, for insertion, by annotate. */
export function htmlToWordFragment(html: string, opts: FragmentOptions = {}): WordFragment {
  return fragment(html, opts, false);
}

function fragment(html: string, opts: FragmentOptions, depthBounded: boolean, islandKey?: string): WordFragment {
  const conv = new HtmlConverter(fragmentDefaults(opts));
  conv.islandKey = islandKey;
  return collectBody(conv.w, conv.images.media, conv.convert(html, depthBounded), conv.title);
}

/** What a writer collected, as a body (or fragment) for a package. */
export function collectBody(w: WordWriter, media: MediaPart[], bodyXml: string, title?: string): ConvertedBody {
  const islands = islandSources(w);
  return {
    bodyXml,
    relationships: w.relationships.list,
    media,
    abstractNums: w.numbering.abstractNums,
    nums: w.numbering.nums,
    footnotes: w.footnotes.notes,
    title,
    warnings: [...new Set(w.warnings)],
    ...(islands.length ? { islands } : {}),
  };
}

/** A DOM built from Markdown (markdownToDom) → body XML plus its parts, as convertHtml. */
export function convertMarkdownDom(doc: Document, options: ConvertOptions): ConvertedBody {
  const conv = new HtmlConverter(bodyOptions(options));
  return collectBody(conv.w, conv.images.media, conv.convertDom(doc), conv.title);
}

/** The options of a whole document's body (as opposed to a fragment for a host document). */
export function bodyOptions(options: ConvertOptions): Required<FragmentOptions> {
  return fragmentDefaults({ textWidthTwips: pageGeometry(options.pageSize).textWidth, relIdPrefix: 'rId', firstNumId: 1, styledHeaderRows: true });
}

/** `islandKey`: the key of the source islands (markdown-islands.ts) in HTML rendered from Markdown. */
export function convertHtml(html: string, options: ConvertOptions, depthBounded = false, islandKey?: string): ConvertedBody {
  return fragment(html, bodyOptions(options), depthBounded, islandKey);
}
