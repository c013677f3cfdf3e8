/**
 * Helpers for the annotate tests: a tiny DOCX writer for hand-made templates (so each test shows the exact
 * markup it exercises), unpacking with a well-formedness check of every XML part, and text extraction.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { strToU8, zipSync, type Zippable } from 'fflate';

export { CORPUS_TEMPLATES as TEMPLATES } from '../helpers/corpus.js';
export const W_NS =
  'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" ' +
  'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" ' +
  'xmlns:w14="http://schemas.microsoft.com/office/word/2010/wordml" ' +
  'xmlns:w15="http://schemas.microsoft.com/office/word/2012/wordml" ' +
  'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"';

export interface TemplateParts {
  body: string;
  header?: string;
  footer?: string;
  footnotes?: string;
  endnotes?: string;
  /** Extra parts by name (e.g. customXml items), written as given. */
  extra?: Record<string, string>;
  styles?: string;
}

const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

/** Builds a DOCX from body XML (the children of w:body) and optional header/footer/notes content. */
export function makeDocx(parts: TemplateParts): Uint8Array {
  const rels: string[] = [`<Relationship Id="rIdStyles" Type="${REL}/styles" Target="styles.xml"/>`];
  const overrides: string[] = [
    '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>',
    '<Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/>',
  ];
  const files: Zippable = {};
  let sect =
    '<w:sectPr><w:pgSz w:w="12240" w:h="15840"/><w:pgMar w:top="1440" w:right="1440" w:bottom="1440" w:left="1440" w:header="720" w:footer="720" w:gutter="0"/>';
  if (parts.header !== undefined) {
    rels.push(`<Relationship Id="rIdH1" Type="${REL}/header" Target="header1.xml"/>`);
    overrides.push(
      '<Override PartName="/word/header1.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.header+xml"/>',
    );
    files['word/header1.xml'] = strToU8(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:hdr ${W_NS}>${parts.header}</w:hdr>`);
    sect = sect.replace('<w:pgSz', '<w:headerReference w:type="default" r:id="rIdH1"/><w:pgSz');
  }
  if (parts.footer !== undefined) {
    rels.push(`<Relationship Id="rIdF1" Type="${REL}/footer" Target="footer1.xml"/>`);
    overrides.push(
      '<Override PartName="/word/footer1.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.footer+xml"/>',
    );
    files['word/footer1.xml'] = strToU8(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:ftr ${W_NS}>${parts.footer}</w:ftr>`);
    sect = sect.replace('<w:pgSz', '<w:footerReference w:type="default" r:id="rIdF1"/><w:pgSz');
  }
  if (parts.footnotes !== undefined) {
    rels.push(`<Relationship Id="rIdFn" Type="${REL}/footnotes" Target="footnotes.xml"/>`);
    overrides.push(
      '<Override PartName="/word/footnotes.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml"/>',
    );
    files['word/footnotes.xml'] = strToU8(
      `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:footnotes ${W_NS}><w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote><w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/></w:r></w:p></w:footnote>${parts.footnotes}</w:footnotes>`,
    );
  }
  if (parts.endnotes !== undefined) {
    rels.push(`<Relationship Id="rIdEn" Type="${REL}/endnotes" Target="endnotes.xml"/>`);
    overrides.push(
      '<Override PartName="/word/endnotes.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.endnotes+xml"/>',
    );
    files['word/endnotes.xml'] = strToU8(
      `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:endnotes ${W_NS}><w:endnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:endnote><w:endnote w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/></w:r></w:p></w:endnote>${parts.endnotes}</w:endnotes>`,
    );
  }
  sect += '</w:sectPr>';
  files['[Content_Types].xml'] = strToU8(
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
      '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>' +
      overrides.join('') +
      '</Types>',
  );
  files['_rels/.rels'] = strToU8(
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL}/officeDocument" Target="word/document.xml"/></Relationships>`,
  );
  files['word/_rels/document.xml.rels'] = strToU8(
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${rels.join('')}</Relationships>`,
  );
  files['word/styles.xml'] = strToU8(
    parts.styles ??
      `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:styles ${W_NS}><w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/></w:style><w:style w:type="character" w:styleId="PlaceholderText"><w:name w:val="Placeholder Text"/><w:rPr><w:color w:val="808080"/></w:rPr></w:style></w:styles>`,
  );
  files['word/document.xml'] = strToU8(
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:document ${W_NS}><w:body>${parts.body}${sect}</w:body></w:document>`,
  );
  for (const [name, xml] of Object.entries(parts.extra ?? {})) files[name] = strToU8(xml);
  return zipSync(files);
}

export { unpack, type Unpacked } from '../support/unpack.js';

const unescape = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');

/** Visible text of WordprocessingML: w:t contents, w:br/w:cr as \n, w:tab as \t. */
export function textOf(xml: string): string {
  let out = '';
  for (const m of xml.matchAll(/<w:t(?:\s[^>]*)?>([^<]*)<\/w:t>|<w:(br|cr)\b[^>]*\/>|<w:tab\/>|<\/w:p>/g)) {
    if (m[1] !== undefined) out += unescape(m[1]);
    else if (m[2]) out += '\n';
    else if (m[0] === '<w:tab/>') out += '\t';
    else out += '\n';
  }
  return out;
}

/** The paragraph (w:p … </w:p>, not nested) containing `text`, or undefined. */
export function paragraphWith(xml: string, text: string): string | undefined {
  return (xml.match(/<w:p\b[^>]*>(?:(?!<w:p\b).)*?<\/w:p>/gs) ?? []).find((p) => textOf(p).includes(text));
}

export function count(haystack: string, needle: string | RegExp): number {
  if (typeof needle === 'string') return haystack.split(needle).length - 1;
  return (haystack.match(new RegExp(needle.source, needle.flags.includes('g') ? needle.flags : needle.flags + 'g')) ?? []).length;
}

export const PNG_1x1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

/** A PNG of the given size (solid colour), made with resvg so that sizes can be asserted. */
export async function pngOfSize(width: number, height: number): Promise<Uint8Array> {
  const { Resvg } = await import('@resvg/resvg-js');
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="#3a7"/></svg>`;
  return new Resvg(svg, { font: { loadSystemFonts: false } }).render().asPng();
}

export const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

export function pdfText(pdf: Uint8Array): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-annotate-pdf-'));
  try {
    fs.writeFileSync(path.join(dir, 'a.pdf'), pdf);
    return execFileSync('pdftotext', ['-layout', path.join(dir, 'a.pdf'), '-'], { encoding: 'utf8' });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export const sdt = (pr: string, content: string) => `<w:sdt><w:sdtPr>${pr}</w:sdtPr><w:sdtContent>${content}</w:sdtContent></w:sdt>`;
export const run = (text: string, rPr = '') => `<w:r>${rPr ? `<w:rPr>${rPr}</w:rPr>` : ''}<w:t xml:space="preserve">${text}</w:t></w:r>`;
export const para = (inner: string, pPr = '') => `<w:p>${pPr ? `<w:pPr>${pPr}</w:pPr>` : ''}${inner}</w:p>`;

/** `pdfimages -list` lines for a PDF (poppler). */
export function pdfImages(pdf: Uint8Array): string[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-annotate-pdf-'));
  try {
    fs.writeFileSync(path.join(dir, 'a.pdf'), pdf);
    return execFileSync('pdfimages', ['-list', path.join(dir, 'a.pdf')], { encoding: 'utf8' }).split('\n');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
