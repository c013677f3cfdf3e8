export { unpack, type Unpacked } from '../support/unpack.js';

export function count(haystack: string, needle: string | RegExp): number {
  if (typeof needle === 'string') return haystack.split(needle).length - 1;
  return (haystack.match(new RegExp(needle.source, needle.flags.includes('g') ? needle.flags : needle.flags + 'g')) ?? []).length;
}

/** Paragraph XML strings of a document body, in order. */
export function paragraphs(xml: string): string[] {
  return xml.match(/<w:p>.*?<\/w:p>|<w:p\/>/g) ?? [];
}

/** Visible text of a fragment of WordprocessingML. */
export function textOf(xml: string): string {
  return [...xml.matchAll(/<w:t(?: [^>]*)?>([^<]*)<\/w:t>/g)]
    .map((m) => m[1]!.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&'))
    .join('');
}

export const PNG_1x1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
