/**
 * The small document model a DOCX is read into (reader.ts) and that the Markdown and HTML writers walk
 * (src/convert/docx-markdown.ts, docx-html.ts). It keeps what those formats can say: block structure
 * (headings, lists, tables, quotes, code, rules), inline marks, links, images, notes, checkboxes, equations; plus the
 * direct formatting HTML can carry as inline CSS (alignment, indentation, colour, size, highlight, shading).
 */

/** Character formatting of a run, after its character style and direct properties are resolved. */
export interface Marks {
  b?: true;
  i?: true;
  s?: true;
  u?: true;
  code?: true;
  sup?: true;
  sub?: true;
  /** RRGGBB, without '#'. */
  color?: string;
  /** Points. */
  size?: number;
  /** A CSS colour name or RRGGBB. */
  highlight?: string;
}

import type { MathRow } from '../math/ast.js';

export interface ImageData {
  mime: string;
  bytes: Uint8Array;
}

export type Inline =
  | { t: 'text'; text: string; m: Marks }
  | { t: 'br' }
  /** href is absolute (a scheme the writers accept) or '#anchor'; unsafe targets never reach the model. */
  | { t: 'link'; href: string; title?: string; children: Inline[] }
  /** data undefined: the picture was dropped (images: 'drop', external, over budget) and only alt remains. */
  | { t: 'image'; alt: string; title?: string; data?: ImageData; widthPx?: number; heightPx?: number }
  | { t: 'note'; kind: 'footnote' | 'endnote'; id: string }
  | { t: 'check'; checked: boolean }
  /** An equation (src/docx/math): `display` for Word's display math (m:oMathPara), else inline. */
  | { t: 'math'; display: boolean; row: MathRow }
  /** A bookmark: the target of `#name` links (HTML writes it as an id; Markdown has no place for it). */
  | { t: 'anchor'; name: string };

/** Direct paragraph formatting kept for HTML (twips for lengths). */
export interface ParaFormat {
  align?: 'left' | 'center' | 'right' | 'justify';
  indLeft?: number;
  indRight?: number;
  firstLine?: number;
  shading?: string;
}

export type Block =
  | { t: 'para'; inlines: Inline[]; f: ParaFormat }
  | { t: 'heading'; level: number; inlines: Inline[]; f: ParaFormat }
  /** `inlines`: the same lines with their run formatting (breaks between lines), which HTML can keep. */
  | { t: 'code'; text: string; inlines: Inline[]; lang?: string }
  | { t: 'hr' }
  | { t: 'quote'; blocks: Block[] }
  | { t: 'list'; ordered: boolean; start: number; items: ListItem[] }
  | { t: 'table'; rows: TableRow[]; bordered: boolean }
  /**
   * Markdown Word cannot say (raw HTML, images by URL), kept by Folio's Markdown → DOCX writer next to what it
   * shows for it (`blocks`), and read back only while that content is unchanged (see SOURCE_TAG).
   */
  | { t: 'source'; markdown: string; blocks: Block[] };

/**
 * A block content control whose w:tag is `folio-md:<id>:<fingerprint>` wraps what Folio's Markdown → DOCX
 * writer made of a top-level Markdown block that a DOCX cannot carry (raw HTML is interpreted, an image by
 * URL is never fetched and shows its alt text). The Markdown is the `<island id="<id>">` of the Custom XML
 * Data part whose root is `<islands xmlns="urn:folio:markdown-islands">` (ISLANDS_NS), related from the main
 * document part: Word limits a tag to a few dozen characters, a data part has no limit and keeps newlines.
 * The fingerprint is that of the text of the content's w:t elements: once the content is edited in Word it
 * no longer matches and the content is read as any other (as when the part or the island is missing).
 */
export const SOURCE_TAG = 'folio-md:';

/** The namespace of the source islands' Custom XML Data part. */
export const ISLANDS_NS = 'urn:folio:markdown-islands';

/** The longest w:tag and w:alias Folio writes: what Word accepts in a content control's properties. */
export const MAX_CONTROL_STRING = 64;

/**
 * A block content control whose w:tag is `folio-lang:<name>` (and alias the name, which Word shows) holds one
 * code block in that language: Markdown's info string, HTML's `class="language-…"`.
 */
export const CODE_LANGUAGE_TAG = 'folio-lang:';

/**
 * The longest language name a control carries (the tag within MAX_CONTROL_STRING). A longer one gets no
 * control: from Markdown its block is a source island (markdown-islands.ts), so the name is kept in full in
 * the islands part; from HTML it is dropped (a truncated name would be another language).
 */
export const CODE_LANGUAGE_MAX = MAX_CONTROL_STRING - CODE_LANGUAGE_TAG.length;

/** The content control around a code block's paragraphs naming its language (attribute-escaped by the caller's rules). */
export function codeLanguageControl(lang: string, blocksXml: string, escapeAttr: (s: string) => string): string {
  if (lang.length > CODE_LANGUAGE_MAX) return blocksXml;
  const v = escapeAttr(lang);
  return `<w:sdt><w:sdtPr><w:alias w:val="${v}"/><w:tag w:val="${escapeAttr(CODE_LANGUAGE_TAG + lang)}"/></w:sdtPr><w:sdtContent>${blocksXml}</w:sdtContent></w:sdt>`;
}

/** FNV-1a (32 bits, hex) of a content's text: a change detector, not a security measure. */
export function sourceFingerprint(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}

export interface ListItem {
  blocks: Block[];
  /** A task item (☐/☒ or a checkbox content control at its start). */
  checked?: boolean;
}

export interface TableRow {
  header: boolean;
  cells: TableCell[];
}

export interface TableCell {
  blocks: Block[];
  colspan: number;
  rowspan: number;
  shading?: string;
}

export interface Note {
  kind: 'footnote' | 'endnote';
  id: string;
  blocks: Block[];
}

export interface DocModel {
  title?: string;
  blocks: Block[];
  /** Notes in the order their references appear in the text. */
  notes: Note[];
  warnings: string[];
}
