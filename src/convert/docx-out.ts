/**
 * DOCX → Markdown and DOCX → HTML: the public entry points. The package is read once into a small document
 * model (src/docx/read), which the two writers walk.
 */
import { FolioError } from '../errors.js';
import { openDocx } from '../docx/package.js';
import { child, childElements, parseXml, textContent, attr } from '../docx/xml.js';

export interface DocxExportOptions {
  /** `inline` (default): images as data URIs; `drop`: images left out, with a warning. */
  images?: 'inline' | 'drop';
}

// Early version (paragraphs and headings only); replaced by the full reader.
function paragraphs(bytes: Uint8Array): Array<{ level: number; text: string }> {
  const pkg = openDocx(bytes);
  const xml = pkg.text(pkg.mainDocumentPart()!);
  if (xml === undefined) throw new FolioError('INVALID_FILE_FORMAT', 'The package has no Word main document part');
  const body = child(parseXml(xml, 'word/document.xml').root, 'w:body');
  const out: Array<{ level: number; text: string }> = [];
  for (const p of body ? childElements(body, 'w:p') : []) {
    const style = child(child(p, 'w:pPr') ?? p, 'w:pStyle');
    const m = /^Heading([1-6])$/.exec((style && attr(style, 'w:val')) ?? '');
    const text = childElements(p, 'w:r')
      .flatMap((r) => childElements(r, 'w:t'))
      .map(textContent)
      .join('');
    if (text) out.push({ level: m ? Number(m[1]) : 0, text });
  }
  return out;
}

export function docxToMarkdown(bytes: Uint8Array, _options: DocxExportOptions = {}): { markdown: string; warnings: string[] } {
  const md = paragraphs(bytes).map((p) => (p.level ? '#'.repeat(p.level) + ' ' : '') + p.text.replace(/[\\`*_[\]<>#|~]/g, '\\$&'));
  return { markdown: md.join('\n\n') + '\n', warnings: ['early version: only paragraphs and headings are converted'] };
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function docxToHtml(bytes: Uint8Array, _options: DocxExportOptions = {}): { html: string; warnings: string[] } {
  const body = paragraphs(bytes).map((p) => (p.level ? `<h${p.level}>${esc(p.text)}</h${p.level}>` : `<p>${esc(p.text)}</p>`));
  return {
    html: `<!doctype html>\n<html><head><meta charset="utf-8"><title>document</title></head><body>\n${body.join('\n')}\n</body></html>\n`,
    warnings: ['early version: only paragraphs and headings are converted'],
  };
}
