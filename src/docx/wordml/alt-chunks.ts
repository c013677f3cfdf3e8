/**
 * Embedded chunks (w:altChunk) for LibreOffice: LibreOffice 7.4 renders a DOCX chunk in place but leaves out
 * HTML, MIME web archive, RTF and plain-text chunks without a word (measured: a document of "Before", an
 * HTML chunk and "After" prints "Before After"). Before the office engine sees the document, each such chunk of
 * the main part is replaced by paragraphs of its text, so its content is in the PDF (its formatting is not:
 * DOCX → Markdown/HTML read HTML chunks with their structure, src/docx/read/reader.ts). DOCX chunks and chunks
 * whose part is missing are left as they are.
 *
 * Bounded: the chunks of the main part only, at most MAX_CHUNKS of them, each at most the package's entry
 * bound; one linear pass over each chunk's text.
 */
import { isZip } from '../../formats/sniff.js';
import type { DocxPackage } from '../package.js';
import { attr, childElements, parseXml, type XElement } from '../xml.js';
import { decodeChunk, mhtHtml, rtfText } from '../read/chunk-text.js';
import { contentTypes, declaredType } from '../read/image-kind.js';
import { MAX_CHUNKS } from '../read/reader.js';
import { resolvePart } from '../read/reader.js';
import { xmlText } from './escape.js';

/** HTML → lines of text: scripts and styles dropped, block elements and <br> break lines, tags removed. */
function htmlText(html: string): string {
  return html
    .replace(/<(script|style|head|title)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<\/?(p|div|br|li|tr|h[1-6]|blockquote|pre|table|ul|ol|dd|dt|section|article)\b[^>]*>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&(nbsp|amp|lt|gt|quot|apos|#\d{1,7}|#x[0-9a-f]{1,6});/gi, (m, e: string) => {
      const named: Record<string, string> = { nbsp: '\u00a0', amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
      if (named[e.toLowerCase()]) return named[e.toLowerCase()]!;
      const cp = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : Number(e.slice(1));
      return cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : m;
    });
}

const paragraphs = (text: string) =>
  text
    .split(/\r\n|\r|\n/)
    .map((l) => l.replace(/\s+/g, ' ').trim())
    .filter(Boolean)
    .map((l) => `<w:p><w:r><w:t xml:space="preserve">${xmlText(l)}</w:t></w:r></w:p>`)
    .join('') || '<w:p/>';

/** The text of a chunk LibreOffice does not render, as paragraphs; undefined for a chunk to leave as it is. */
function chunkParagraphs(pkg: DocxPackage, part: string, type: string): string | undefined {
  const bytes = pkg.get(part);
  if (!bytes || isZip(bytes) || type.includes('wordprocessingml')) return undefined;
  if (type === 'message/rfc822' || type === 'multipart/related' || /\.mht(ml)?$/i.test(part)) return paragraphs(htmlText(mhtHtml(bytes) ?? ''));
  if (type === 'text/html' || type === 'application/xhtml+xml' || /\.x?html?$/i.test(part)) return paragraphs(htmlText(decodeChunk(bytes)));
  if (type === 'text/rtf' || type === 'application/rtf' || /\.rtf$/i.test(part)) return paragraphs(rtfText(decodeChunk(bytes, 'latin1')));
  if (type === 'text/plain' || /\.txt$/i.test(part)) return paragraphs(decodeChunk(bytes));
  return undefined;
}

/**
 * Replaces the HTML, web archive, RTF and text chunks of the main document part by paragraphs of their text;
 * whether the package changed.
 */
export function expandTextChunks(pkg: DocxPackage): boolean {
  const main = pkg.mainDocumentPart();
  const xml = main ? pkg.text(main) : undefined;
  if (!main || !xml || !xml.includes('altChunk')) return false;
  const slash = main.lastIndexOf('/');
  const relsText = pkg.text(`${main.slice(0, slash + 1)}_rels/${main.slice(slash + 1)}.rels`);
  if (!relsText) return false;
  const targets = new Map<string, string>();
  for (const r of childElements(parseXml(relsText, 'relationships').root, 'Relationship')) {
    const id = attr(r, 'Id');
    const target = attr(r, 'Target');
    if (id && target && attr(r, 'TargetMode') !== 'External') targets.set(id, resolvePart(main, target));
  }
  const typesText = pkg.text('[Content_Types].xml');
  const types = contentTypes(typesText ? parseXml(typesText, '[Content_Types].xml').root : (undefined as XElement | undefined));
  let seen = 0;
  let changed = false;
  const out = xml.replace(/<w:altChunk\b[^>]*?(?:\/>|>[\s\S]*?<\/w:altChunk>)/g, (chunk) => {
    if (++seen > MAX_CHUNKS) return chunk;
    const id = /\br:id="([^"]*)"/.exec(chunk)?.[1];
    const part = id ? targets.get(id) : undefined;
    if (!part || !pkg.has(part)) return chunk;
    const replacement = chunkParagraphs(pkg, part, declaredType(types, part) ?? '');
    if (replacement === undefined) return chunk;
    changed = true;
    return replacement;
  });
  if (changed) pkg.setText(main, out);
  return changed;
}
