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

const ISLAND = /<w:sdt><w:sdtPr><w:tag w:val="folio-md:[^"]*"\/><\/w:sdtPr><w:sdtContent>/g;
const HIDDEN_EMPTY = '<w:p><w:pPr><w:rPr><w:vanish/></w:rPr></w:pPr></w:p>';

/**
 * WordprocessingML without the source islands of Markdown → DOCX (src/convert/markdown-islands.ts): each
 * content control keeping a block's Markdown replaced by its content (a hidden empty paragraph by nothing).
 */
export function withoutIslands(xml: string): string {
  ISLAND.lastIndex = 0;
  for (let m; (m = ISLAND.exec(xml));) {
    let depth = 1;
    const tags = /<w:sdt[ >]|<\/w:sdt>/g;
    tags.lastIndex = m.index + m[0].length;
    let t: RegExpExecArray | null = null;
    while (depth && (t = tags.exec(xml))) depth += t[0] === '</w:sdt>' ? -1 : 1;
    if (!t) break;
    let inner = xml.slice(m.index + m[0].length, t.index - '</w:sdtContent>'.length);
    if (inner === HIDDEN_EMPTY) inner = '';
    xml = xml.slice(0, m.index) + inner + xml.slice(t.index + '</w:sdt>'.length);
    ISLAND.lastIndex = m.index;
  }
  return xml;
}
