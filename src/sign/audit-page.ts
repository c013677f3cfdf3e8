/**
 * Renders the audit trail as PDF pages (title, signer, document hashes, signing time, certificate, then a
 * table of every event, paginated) into a pdf-lib document. The pages are created detached; the caller
 * links them into the page tree. Text is drawn with DejaVu Sans (broad Unicode coverage); code points the
 * font cannot show and control characters are replaced by a visible escape so that no input can break
 * the content stream or the layout.
 */
import fs from 'node:fs';
import fontkit from '@pdf-lib/fontkit';
import { PDFPage, rgb, StandardFonts, type PDFDocument, type PDFFont } from '../pdf/index.js';
import { AUDIT_TRAIL_FILE_NAME, type AuditRecord } from '../pdf/index.js';
import { formatUtc } from './audit-trail.js';

const FONT_DIR = '/usr/share/fonts/truetype/dejavu';
const REGULAR_TTF = `${FONT_DIR}/DejaVuSans.ttf`;
const BOLD_TTF = `${FONT_DIR}/DejaVuSans-Bold.ttf`;

/** Details of one event longer than this are cut on the page; the attachment keeps them whole. */
const MAX_DETAIL_CHARS = 600;
const MAX_CELL_LINES = 10;
const YIELD_EVERY_ROWS = 200;

interface FontFace {
  pdfFont: PDFFont;
  /** Advance width of one code point at size 1. */
  advance(cp: number): number;
  has(cp: number): boolean;
}

interface LoadedFonts {
  regularBytes: Uint8Array;
  boldBytes: Uint8Array;
  regular: fontkit.Font;
  bold: fontkit.Font;
}

let loaded: LoadedFonts | null | undefined;

const RTL = '\\u0590-\\u08FF\\uFB1D-\\uFDFF\\uFE70-\\uFEFF';
const RTL_CHAR = new RegExp(`[${RTL}]`);
/** A right-to-left run: RTL letters, with any spaces, digits-free punctuation between two of them. */
const RTL_RUN = new RegExp(`[${RTL}](?:[${RTL}\\s\\p{P}]*[${RTL}])?`, 'gu');

/**
 * @cantoo/pdf-lib calls `subset.encode()` when it is a function (the fontkit 2 API); @pdf-lib/fontkit's
 * subset has an `encode(stream)` that needs a stream, used internally by its working `encodeStream()`.
 * Each subset therefore shows no `encode` until `encodeStream()` has started, so pdf-lib takes that path.
 */
// Parsed fonts are shared by every request (pdf-lib would parse the 700 KB TTF for each document); only
// the subset is per document.
const parsedFonts = new WeakMap<Uint8Array, { createSubset(): Record<string, unknown> }>();

const compatibleFontkit = {
  create(data: Uint8Array, postscriptName?: string) {
    const cached = parsedFonts.get(data);
    if (cached) return cached;
    const font = fontkit.create(Buffer.from(data), postscriptName) as unknown as {
      createSubset(): Record<string, unknown>;
      layout(text: string): { glyphs: unknown[] };
      glyphForCodePoint(cp: number): unknown;
    };
    parsedFonts.set(data, font);
    // The audit pages draw plain runs (text is sanitised first; no bidi): a direct cmap lookup per code
    // point gives the same glyphs as full OpenType shaping at a fraction of its cost.
    const glyphCache = new Map<number, unknown>();
    const shape = (font.layout as (text: string) => { glyphs: unknown[] }).bind(font);
    const cmapGlyphs = (text: string, glyphs: unknown[]) => {
      for (const ch of text) {
        const cp = ch.codePointAt(0)!;
        let glyph = glyphCache.get(cp);
        if (glyph === undefined) {
          glyph = font.glyphForCodePoint(cp);
          glyphCache.set(cp, glyph);
        }
        glyphs.push(glyph);
      }
    };
    font.layout = (text: string) => {
      const glyphs: unknown[] = [];
      if (!RTL_CHAR.test(text)) {
        cmapGlyphs(text, glyphs);
        return { glyphs };
      }
      // Lines are laid out left to right; each right-to-left run (Hebrew, Arabic, with the spaces and
      // punctuation inside it) goes through fontkit's shaper, which joins Arabic letters and returns
      // the run's glyphs in visual order.
      let at = 0;
      for (const m of text.matchAll(RTL_RUN)) {
        cmapGlyphs(text.slice(at, m.index), glyphs);
        glyphs.push(...shape(m[0]).glyphs);
        at = m.index! + m[0].length;
      }
      cmapGlyphs(text.slice(at), glyphs);
      return { glyphs };
    };
    const createSubset = font.createSubset.bind(font);
    font.createSubset = () => {
      const subset = createSubset();
      const encode = subset.encode as (...args: unknown[]) => unknown;
      const encodeStream = subset.encodeStream as () => unknown;
      let streaming = false;
      Object.defineProperty(subset, 'encode', { get: () => (streaming ? encode : undefined) });
      subset.encodeStream = () => {
        streaming = true;
        return encodeStream.call(subset);
      };
      return subset;
    };
    return font;
  },
};

function loadFonts(): LoadedFonts | null {
  if (loaded !== undefined) return loaded;
  try {
    const regularBytes = new Uint8Array(fs.readFileSync(REGULAR_TTF));
    const boldBytes = new Uint8Array(fs.readFileSync(BOLD_TTF));
    loaded = {
      regularBytes,
      boldBytes,
      regular: fontkit.create(Buffer.from(regularBytes)) as fontkit.Font,
      bold: fontkit.create(Buffer.from(boldBytes)) as fontkit.Font,
    };
  } catch {
    loaded = null; // no DejaVu on this system: fall back to the standard Helvetica (WinAnsi only)
  }
  return loaded;
}

/**
 * Parses the fonts ahead of the first request (reading and parsing DejaVu takes most of a second); the
 * first /v1/sign would otherwise pay for it.
 */
export function warmUpAuditFonts(): void {
  const fonts = loadFonts();
  if (!fonts) return;
  for (const bytes of [fonts.regularBytes, fonts.boldBytes]) {
    const font = compatibleFontkit.create(bytes) as unknown as { layout(text: string): unknown };
    font.layout('Signature certificate and audit trail 0123456789');
  }
}

function fontkitFace(pdfFont: PDFFont, font: fontkit.Font): FontFace {
  const widths = new Map<number, number>();
  const unitsPerEm = font.unitsPerEm;
  return {
    pdfFont,
    has: (cp) => font.hasGlyphForCodePoint(cp),
    advance(cp) {
      let w = widths.get(cp);
      if (w === undefined) {
        w = font.glyphForCodePoint(cp).advanceWidth / unitsPerEm;
        widths.set(cp, w);
      }
      return w;
    },
  };
}

function standardFace(pdfFont: PDFFont): FontFace {
  const widths = new Map<number, number>();
  return {
    pdfFont,
    // WinAnsi covers Latin-1 plus a few punctuation marks; everything else is escaped.
    has: (cp) => (cp >= 0x20 && cp <= 0x7e) || (cp >= 0xa0 && cp <= 0xff),
    advance(cp) {
      let w = widths.get(cp);
      if (w === undefined) {
        w = pdfFont.widthOfTextAtSize(String.fromCodePoint(cp), 1);
        widths.set(cp, w);
      }
      return w;
    },
  };
}

/**
 * Makes a string safe to draw: control characters (C0, C1, bidi overrides and isolates, zero-width and
 * line/paragraph separators) and code points without a glyph become a visible `⟨U+XXXX⟩`-style escape.
 */
export function drawable(text: string, face: FontFace): string {
  let out = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    const control =
      cp < 0x20 ||
      (cp >= 0x7f && cp < 0xa0) ||
      (cp >= 0x200b && cp <= 0x200f) ||
      (cp >= 0x2028 && cp <= 0x202e) ||
      (cp >= 0x2060 && cp <= 0x206f) ||
      cp === 0xfeff ||
      (cp >= 0xd800 && cp <= 0xdfff) ||
      (cp >= 0xfff0 && cp <= 0xfffb);
    if (cp === 0x09) out += ' ';
    else if (control || !face.has(cp)) out += `[U+${cp.toString(16).toUpperCase().padStart(4, '0')}]`;
    else out += ch;
  }
  return out;
}

function textWidth(text: string, size: number, face: FontFace): number {
  let w = 0;
  for (const ch of text) w += face.advance(ch.codePointAt(0)!);
  return w * size;
}

/** Greedy line breaking at spaces and punctuation; a token wider than the line is broken anywhere. */
export function wrapText(text: string, maxWidth: number, size: number, face: FontFace, maxLines = Infinity): string[] {
  const lines: string[] = [];
  let line = '';
  let width = 0;
  let breakAt = -1;
  for (const ch of text) {
    const w = face.advance(ch.codePointAt(0)!) * size;
    if (width + w > maxWidth && line.length > 0) {
      if (breakAt > 0 && breakAt < line.length) {
        lines.push(line.slice(0, breakAt).trimEnd());
        line = line.slice(breakAt).trimStart();
      } else {
        lines.push(line.trimEnd());
        line = '';
      }
      width = textWidth(line, size, face);
      breakAt = -1;
      if (lines.length >= maxLines) break;
    }
    if (line === '' && ch === ' ') continue;
    line += ch;
    width += w;
    if (ch === ' ' || ch === ',' || ch === '/' || ch === '-' || ch === ';' || ch === ':') breakAt = line.length;
  }
  if (lines.length < maxLines && line) lines.push(line);
  else if (lines.length >= maxLines && line) {
    const last = lines[maxLines - 1]!;
    lines[maxLines - 1] = last.length > 1 ? `${last.slice(0, -1)}…` : '…';
  }
  return lines.length > 0 ? lines.slice(0, maxLines) : [''];
}

export interface AuditPagesOptions {
  width: number;
  height: number;
}

const INK = rgb(0.1, 0.1, 0.12);
const MUTED = rgb(0.38, 0.38, 0.42);
const RULE = rgb(0.8, 0.8, 0.83);
const HEADER_BG = rgb(0.93, 0.94, 0.96);

function details(data: Record<string, unknown> | undefined): string {
  if (data === undefined) return '';
  let s = JSON.stringify(data);
  if (s === '{}') return '';
  if (s.length > MAX_DETAIL_CHARS) s = `${s.slice(0, MAX_DETAIL_CHARS)}… (cut; complete in ${AUDIT_TRAIL_FILE_NAME})`;
  return s;
}

/**
 * Draws the audit pages for `record` into `doc` and returns them, not yet linked into the page tree.
 * The pages take the given size (the document's last page), with a floor so that tiny pages stay legible.
 */
export async function renderAuditPages(doc: PDFDocument, record: AuditRecord, opts: AuditPagesOptions): Promise<PDFPage[]> {
  const fonts = loadFonts();
  let regular: FontFace;
  let bold: FontFace;
  if (fonts) {
    doc.registerFontkit(compatibleFontkit as unknown as Parameters<PDFDocument['registerFontkit']>[0]);
    regular = fontkitFace(await doc.embedFont(fonts.regularBytes, { subset: true }), fonts.regular);
    bold = fontkitFace(await doc.embedFont(fonts.boldBytes, { subset: true }), fonts.bold);
  } else {
    regular = standardFace(await doc.embedFont(StandardFonts.Helvetica));
    bold = standardFace(await doc.embedFont(StandardFonts.HelveticaBold));
  }

  const width = Math.max(opts.width, 240);
  const height = Math.max(opts.height, 240);
  const margin = Math.max(18, Math.min(width, height) * 0.07);
  const size = Math.min(10, Math.max(6, (width / 612) * 8.5));
  const lineHeight = size * 1.35;
  const contentWidth = width - 2 * margin;
  const top = height - margin;
  const bottom = margin + lineHeight * 2; // room for the footer

  const pages: PDFPage[] = [];
  let page!: PDFPage;
  let y = 0;
  const newPage = () => {
    page = PDFPage.create(doc);
    page.setSize(width, height);
    pages.push(page);
    y = top;
  };
  const text = (s: string, x: number, yy: number, face: FontFace, sz = size, color = INK) => {
    if (s) page.drawText(s, { x, y: yy, size: sz, font: face.pdfFont, color });
  };

  newPage();
  // Title block.
  const titleSize = size * 1.8;
  for (const line of wrapText('Signature certificate and audit trail', contentWidth, titleSize, bold)) {
    y -= titleSize * 1.2;
    text(line, margin, y, bold, titleSize);
  }
  y -= lineHeight * 0.6;
  for (const line of wrapText(
    `This page was added by Folio before sealing the document with a PAdES signature that covers the whole file, this page included. The same data is attached as ${AUDIT_TRAIL_FILE_NAME}.`,
    contentWidth,
    size * 0.9,
    regular,
  )) {
    y -= lineHeight * 0.9;
    text(line, margin, y, regular, size * 0.9, MUTED);
  }
  y -= lineHeight;

  // Summary (label / value).
  const labelWidth = Math.min(contentWidth * 0.32, 150);
  const valueWidth = contentWidth - labelWidth - size;
  const summary: Array<[string, string]> = [
    ['Signer', record.signer.name],
    ['E-mail', record.signer.email],
    ['IP address', record.signer.ip ?? '—'],
    ['User agent', record.signer.userAgent ?? '—'],
    ['Event ID', record.eventId ?? '—'],
    [`Original ${record.documentType.toUpperCase()} SHA-256`, record.documentSha256],
  ];
  if (record.documentType === 'docx') summary.push(['Converted PDF SHA-256', record.pdfSha256]);
  summary.push(
    ['Signing time', formatUtc(record.signedAt)],
    ['Certificate subject', record.certificate.subject],
    ['Certificate SHA-256', record.certificate.fingerprint],
    ['Audit events', String(record.auditTrail.length)],
  );
  for (const [label, value] of summary) {
    const labelLines = wrapText(drawable(label, bold), labelWidth, size, bold, 3);
    const valueLines = wrapText(drawable(value, regular), valueWidth, size, regular, MAX_CELL_LINES);
    const rows = Math.max(labelLines.length, valueLines.length);
    if (y - rows * lineHeight < bottom) newPage();
    labelLines.forEach((l, i) => text(l, margin, y - (i + 1) * lineHeight, bold));
    valueLines.forEach((l, i) => text(l, margin + labelWidth + size, y - (i + 1) * lineHeight, regular));
    y -= rows * lineHeight + lineHeight * 0.35;
  }
  y -= lineHeight;

  // Events table.
  const columns = [
    { title: '#', width: contentWidth * 0.07 },
    { title: 'Event', width: contentWidth * 0.23 },
    { title: 'Time (UTC)', width: contentWidth * 0.25 },
    { title: 'Details', width: contentWidth * 0.45 },
  ];
  const pad = size * 0.4;
  const tableHeader = () => {
    const h = lineHeight + pad * 2;
    page.drawRectangle({ x: margin, y: y - h, width: contentWidth, height: h, color: HEADER_BG });
    let x = margin;
    for (const c of columns) {
      text(c.title, x + pad, y - pad - size, bold);
      x += c.width;
    }
    y -= h;
  };
  if (y - (lineHeight + pad * 2) * 2 < bottom) newPage();
  const heading = 'Events';
  y -= size * 1.3 * 1.2;
  text(heading, margin, y, bold, size * 1.3);
  y -= lineHeight * 0.5;
  tableHeader();
  for (let index = 0; index < record.auditTrail.length; index++) {
    const event = record.auditTrail[index]!;
    // Long trails take a while to lay out: let other requests run between slices of rows.
    if (index > 0 && index % YIELD_EVERY_ROWS === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    const cells = [
      [String(index + 1)],
      wrapText(drawable(event.type, regular), columns[1]!.width - 2 * pad, size, regular, 4),
      wrapText(formatUtc(event.timestamp), columns[2]!.width - 2 * pad, size, regular, 2),
      wrapText(drawable(details(event.data), regular), columns[3]!.width - 2 * pad, size * 0.9, regular, MAX_CELL_LINES),
    ];
    const rows = Math.max(...cells.map((c) => c.length));
    const h = rows * lineHeight + pad * 2;
    if (y - h < bottom) {
      newPage();
      tableHeader();
    }
    let x = margin;
    cells.forEach((lines, ci) => {
      const sz = ci === 3 ? size * 0.9 : size;
      // One text object per cell: the lines are already wrapped and free of line breaks of their own.
      const cell = lines.join('\n');
      if (cell) page.drawText(cell, { x: x + pad, y: y - pad - size, size: sz, lineHeight, font: regular.pdfFont, color: ci === 3 ? MUTED : INK });
      x += columns[ci]!.width;
    });
    y -= h;
    page.drawLine({ start: { x: margin, y }, end: { x: margin + contentWidth, y }, thickness: 0.4, color: RULE });
  }

  // Footers, now that the page count is known.
  const footerSize = size * 0.8;
  pages.forEach((p, i) => {
    const footer = `Folio audit trail · page ${i + 1} of ${pages.length} · document SHA-256 ${record.documentSha256.slice(0, 16)}…`;
    const line = wrapText(footer, contentWidth, footerSize, regular, 1)[0]!;
    p.drawText(line, { x: margin, y: margin, size: footerSize, font: regular.pdfFont, color: MUTED });
  });
  return pages;
}
