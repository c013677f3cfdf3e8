/** What the HTML walk does with each element name: skip it, treat it as a block, style it as a heading. */
import { CODE_LANGUAGE_MAX, codeLanguageControl } from '../docx/read/model.js';
import type { WordWriter } from '../docx/wordml/writer.js';
import { escapeAttr } from '../docx/xml.js';

export const HEADING_STYLE: Record<string, string> = {
  h1: 'Heading1',
  h2: 'Heading2',
  h3: 'Heading3',
  h4: 'Heading4',
  h5: 'Heading5',
  h6: 'Heading6',
};
export const HEADING_PT: Record<string, number> = { h1: 16, h2: 14, h3: 13, h4: 12, h5: 12, h6: 12 };
/** Elements whose content is never document text (metadata, scripts, media, form controls). */
export const SKIP = new Set([
  'script',
  'style',
  'head',
  'template',
  'noscript',
  'iframe',
  'object',
  'embed',
  'meta',
  'link',
  'title',
  'base',
  'svg',
  'math',
  'canvas',
  'audio',
  'video',
  'source',
  'track',
  'map',
  'area',
  'select',
  'option',
  'button',
  'param',
  'dialog',
]);
/** Elements that start a block (paragraph, list, table, rule) rather than continue the inline flow. */
export const BLOCKS = new Set([
  'p',
  'div',
  'section',
  'article',
  'header',
  'footer',
  'main',
  'nav',
  'aside',
  'address',
  'center',
  'details',
  'summary',
  'form',
  'fieldset',
  'legend',
  'figure',
  'figcaption',
  'body',
  'html',
  'hgroup',
  'search',
  'dl',
  'dt',
  'dd',
  'blockquote',
  'pre',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'ul',
  'ol',
  'menu',
  'dir',
  'li',
  'table',
  'hr',
  'caption',
  'listing',
  'xmp',
  'plaintext',
]);

/**
 * Wraps the blocks written since `from` (one code block's paragraphs) in the content control that names its
 * language (model.ts CODE_LANGUAGE_TAG). The frame then ends in a content control, not a paragraph: a table
 * cell closing on it gets its final paragraph as after a nested table.
 */
export function codeLanguage(w: WordWriter, from: number, lang: string): void {
  const blocks = w.frame.blocks;
  if (blocks.length === from || lang.length > CODE_LANGUAGE_MAX) return; // too long for a tag: model.ts
  blocks.push(codeLanguageControl(lang, blocks.splice(from).join(''), escapeAttr));
  w.frame.lastIsTable = true;
}
