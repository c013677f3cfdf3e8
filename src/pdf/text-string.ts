/**
 * PDF text strings and dates (ISO 32000-2 §7.9.2, §7.9.4), the one codec sign, verify and merge use (issue 26:
 * before, three `decodeText` read them three ways, two as Latin-1). Written here because pdf-lib's own codec
 * works only on its object model and the bounded reader has raw bytes.
 */

/**
 * PDFDocEncoding where it differs from Latin-1 (ISO 32000-2 Annex D.2): 0x18–0x1F and 0x80–0x9F carry
 * typographic marks; 0x7F, 0x9F and 0xAD are undefined (kept as U+FFFD).
 */
// prettier-ignore
const PDF_DOC_HIGH: Record<number, number> = {
  0x18: 0x02d8, 0x19: 0x02c7, 0x1a: 0x02c6, 0x1b: 0x02d9, 0x1c: 0x02dd, 0x1d: 0x02db, 0x1e: 0x02da, 0x1f: 0x02dc,
  0x7f: 0xfffd,
  0x80: 0x2022, 0x81: 0x2020, 0x82: 0x2021, 0x83: 0x2026, 0x84: 0x2014, 0x85: 0x2013, 0x86: 0x0192, 0x87: 0x2044,
  0x88: 0x2039, 0x89: 0x203a, 0x8a: 0x2212, 0x8b: 0x2030, 0x8c: 0x201e, 0x8d: 0x201c, 0x8e: 0x201d, 0x8f: 0x2018,
  0x90: 0x2019, 0x91: 0x201a, 0x92: 0x2122, 0x93: 0xfb01, 0x94: 0xfb02, 0x95: 0x0141, 0x96: 0x0152, 0x97: 0x0160,
  0x98: 0x0178, 0x99: 0x017d, 0x9a: 0x0131, 0x9b: 0x0142, 0x9c: 0x0153, 0x9d: 0x0161, 0x9e: 0x017e, 0x9f: 0xfffd,
  0xa0: 0x20ac, 0xad: 0xfffd,
};

/** A text string's bytes → text: UTF-16BE by its BOM, UTF-8 by its BOM (PDF 2.0), else PDFDocEncoding. */
export function decodePdfText(bytes: Uint8Array): string {
  if (bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes.subarray(2));
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return new TextDecoder('utf-8').decode(bytes.subarray(3));
  let out = '';
  for (const b of bytes) out += String.fromCharCode(PDF_DOC_HIGH[b] ?? b);
  return out;
}

/** Text → a text string's bytes: PDFDocEncoding's ASCII subset when it suffices, else UTF-16BE with a BOM. */
export function encodePdfText(text: string): Uint8Array {
  if (/^[\x20-\x7e\t\n\r]*$/.test(text)) return Buffer.from(text, 'latin1');
  return utf16(text);
}

function utf16(text: string): Uint8Array {
  const out = Buffer.alloc(2 + text.length * 2);
  out.writeUInt16BE(0xfeff, 0);
  for (let i = 0; i < text.length; i++) out.writeUInt16BE(text.charCodeAt(i), 2 + i * 2);
  return out;
}

/**
 * A hex string token for a text string (`<FEFF…>`): safe for any text, no escaping to get wrong. `utf-16`
 * writes UTF-16BE even for ASCII text (the signer's /Name and /Reason have always been written so).
 */
export function pdfHexText(text: string, encoding: 'shortest' | 'utf-16' = 'shortest'): string {
  return `<${Buffer.from(encoding === 'utf-16' ? utf16(text) : encodePdfText(text))
    .toString('hex')
    .toUpperCase()}>`;
}

const PDF_DATE = /^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?([Zz+-])?(\d{2})?'?(\d{2})?'?/;

/**
 * A PDF date (`D:YYYYMMDDHHmmSSOHH'mm'`, every part after the year optional; the apostrophes optional too,
 * as writers differ) → Date, or undefined when it is not one or names an impossible moment.
 */
export function parsePdfDate(text: string): Date | undefined {
  const m = PDF_DATE.exec(text.trim());
  if (!m) return undefined;
  const [, y, mo = '01', d = '01', h = '00', mi = '00', s = '00', tz, tzh = '00', tzm = '00'] = m;
  const month = +mo,
    day = +d,
    hour = +h,
    minute = +mi,
    second = +s;
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return undefined;
  let t = Date.UTC(+y!, month - 1, day, hour, minute, second);
  if (tz === '+' || tz === '-') t -= (tz === '+' ? 1 : -1) * (+tzh * 60 + +tzm) * 60_000;
  const date = new Date(t);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** Date → `D:YYYYMMDDHHmmSSZ` (UTC, the form PAdES writers use for /M). */
export function formatPdfDate(d: Date): string {
  const s = d.toISOString();
  return `D:${s.slice(0, 4)}${s.slice(5, 7)}${s.slice(8, 10)}${s.slice(11, 13)}${s.slice(14, 16)}${s.slice(17, 19)}Z`;
}
