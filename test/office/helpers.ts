/** Test helpers for the office capability: DOCX builders, PDF text/pixels through poppler, the corpus. */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { strToU8, zipSync, type Zippable } from 'fflate';
import { CORPUS_DOCX } from '../helpers/corpus.js';

export { CORPUS_DOCX };
export const BROKEN_CORPUS_FILES = ['poi--bug53475-password-is-pass.docx', 'poi--truncated62886.docx', 'poi--clusterfuzz-XWPF-5313273089884160.docx'];

const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
const R = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PKG_REL = 'http://schemas.openxmlformats.org/package/2006/relationships';
const WML = 'application/vnd.openxmlformats-officedocument.wordprocessingml';

export interface DocxParts {
  /** Inner XML of w:body (a w:sectPr is appended when `sectPr` is given). */
  body: string;
  sectPr?: string;
  header?: string;
  footer?: string;
  numbering?: string;
  /** Extra relationships of the main part (Id, Type, Target, TargetMode). */
  rels?: string[];
  extra?: Record<string, Uint8Array>;
  macroEnabled?: boolean;
}

/** Builds a DOCX from body XML and optional header, footer and numbering parts. */
export function buildDocx(p: DocxParts): Uint8Array {
  const overrides = [
    `<Override PartName="/word/document.xml" ContentType="${p.macroEnabled ? 'application/vnd.ms-word.document.macroEnabled.main+xml' : `${WML}.document.main+xml`}"/>`,
  ];
  const rels: string[] = [...(p.rels ?? [])];
  const files: Zippable = {};
  if (p.header) {
    overrides.push(`<Override PartName="/word/header1.xml" ContentType="${WML}.header+xml"/>`);
    rels.push(`<Relationship Id="rIdH" Type="${R}/header" Target="header1.xml"/>`);
    files['word/header1.xml'] = strToU8(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:hdr xmlns:w="${W}">${p.header}</w:hdr>`);
  }
  if (p.footer) {
    overrides.push(`<Override PartName="/word/footer1.xml" ContentType="${WML}.footer+xml"/>`);
    rels.push(`<Relationship Id="rIdF" Type="${R}/footer" Target="footer1.xml"/>`);
    files['word/footer1.xml'] = strToU8(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:ftr xmlns:w="${W}">${p.footer}</w:ftr>`);
  }
  if (p.numbering) {
    overrides.push(`<Override PartName="/word/numbering.xml" ContentType="${WML}.numbering+xml"/>`);
    rels.push(`<Relationship Id="rIdN" Type="${R}/numbering" Target="numbering.xml"/>`);
    files['word/numbering.xml'] = strToU8(
      `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:numbering xmlns:w="${W}">${p.numbering}</w:numbering>`,
    );
  }
  const refs =
    (p.header ? '<w:headerReference w:type="default" r:id="rIdH"/>' : '') + (p.footer ? '<w:footerReference w:type="default" r:id="rIdF"/>' : '');
  const sectPr =
    p.sectPr ??
    (refs
      ? `<w:sectPr>${refs}<w:pgSz w:w="11906" w:h="16838"/><w:pgMar w:top="1440" w:right="1440" w:bottom="1440" w:left="1440" w:header="708" w:footer="708" w:gutter="0"/></w:sectPr>`
      : '');
  return zipSync({
    '[Content_Types].xml': strToU8(
      `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
        `<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>` +
        `<Default Extension="bin" ContentType="application/vnd.ms-office.vbaProject"/>${overrides.join('')}</Types>`,
    ),
    '_rels/.rels': strToU8(
      `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="${PKG_REL}"><Relationship Id="rId1" Type="${R}/officeDocument" Target="word/document.xml"/></Relationships>`,
    ),
    'word/_rels/document.xml.rels': strToU8(
      `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="${PKG_REL}">${rels.join('')}</Relationships>`,
    ),
    'word/document.xml': strToU8(
      `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="${W}" xmlns:r="${R}" ` +
        `xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" ` +
        `xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"><w:body>${p.body}${sectPr}</w:body></w:document>`,
    ),
    ...files,
    ...(p.extra ?? {}),
  });
}

export const para = (text: string, pPr = '') => `<w:p>${pPr ? `<w:pPr>${pPr}</w:pPr>` : ''}<w:r><w:t xml:space="preserve">${text}</w:t></w:r></w:p>`;
export const pageBreak = '<w:p><w:r><w:br w:type="page"/></w:r></w:p>';

const tmpRoot = () => fs.mkdtempSync(path.join(os.tmpdir(), 'folio-office-test-'));

/**
 * Text of every page of a PDF (pdftotext), one string per page: in physical layout (columns side by side,
 * for per-page and per-line checks) or in reading order (a word wrapped inside a narrow table cell stays
 * together, for word counts).
 */
export function pdfPages(pdf: Uint8Array, mode: 'layout' | 'reading' = 'layout'): string[] {
  const dir = tmpRoot();
  try {
    fs.writeFileSync(path.join(dir, 'a.pdf'), pdf);
    const text = execFileSync('pdftotext', [...(mode === 'layout' ? ['-layout'] : []), path.join(dir, 'a.pdf'), '-'], {
      maxBuffer: 256 * 1024 * 1024,
    }).toString('utf8');
    const pages = text.split('\f');
    if (pages.length > 1 && pages[pages.length - 1]!.trim() === '') pages.pop();
    return pages;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export const pdfText = (pdf: Uint8Array) => pdfPages(pdf).join('\n');

export function pdfInfo(pdf: Uint8Array): Record<string, string> {
  const dir = tmpRoot();
  try {
    fs.writeFileSync(path.join(dir, 'a.pdf'), pdf);
    const out = execFileSync('pdfinfo', [path.join(dir, 'a.pdf')]).toString('utf8');
    return Object.fromEntries(
      out
        .split('\n')
        .filter((l) => l.includes(':'))
        .map((l) => [l.slice(0, l.indexOf(':')).trim(), l.slice(l.indexOf(':') + 1).trim()]),
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Counts strongly coloured pixels (not grey) of page 1 rendered at 40 dpi (pdftoppm, PPM). */
export function colouredPixels(pdf: Uint8Array): number {
  const dir = tmpRoot();
  try {
    fs.writeFileSync(path.join(dir, 'a.pdf'), pdf);
    execFileSync('pdftoppm', ['-r', '40', '-f', '1', '-l', '1', path.join(dir, 'a.pdf'), path.join(dir, 'p')]);
    const file = fs.readdirSync(dir).find((f) => f.endsWith('.ppm'))!;
    const ppm = fs.readFileSync(path.join(dir, file));
    // Header: P6\n<w> <h>\n255\n
    let nl = 0;
    let offset = 0;
    while (nl < 3) if (ppm[offset++] === 0x0a) nl++;
    let coloured = 0;
    for (let i = offset; i + 2 < ppm.length; i += 3) {
      const r = ppm[i]!,
        g = ppm[i + 1]!,
        b = ppm[i + 2]!;
      if (Math.max(r, g, b) - Math.min(r, g, b) > 60) coloured++;
    }
    return coloured;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

/**
 * Words of a text, lower-cased: runs of letters and digits of at least 2 characters; CJK scripts, written
 * without spaces, count each ideograph or syllable as a word (line breaks fall anywhere in them).
 */
export function words(text: string): string[] {
  const out: string[] = [];
  for (const token of text
    .normalize('NFKC')
    .toLowerCase()
    .match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (!CJK.test(token)) {
      if (token.length >= 2) out.push(token);
      continue;
    }
    for (const piece of token.split(/([\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}])/u)) {
      if (piece && (CJK.test(piece) || piece.length >= 2)) out.push(piece);
    }
  }
  return out;
}
