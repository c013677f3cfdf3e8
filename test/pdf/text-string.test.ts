import { describe, expect, it } from 'vitest';
import { decodePdfText, encodePdfText, formatPdfDate, parsePdfDate, pdfHexText } from '../../src/pdf/text-string.js';

describe('PDF text strings', () => {
  it('reads UTF-16BE and UTF-8 by their BOM and PDFDocEncoding otherwise (not Latin-1)', () => {
    expect(decodePdfText(Uint8Array.from([0xfe, 0xff, 0x00, 0x41, 0x20, 0xac]))).toBe('A€');
    expect(decodePdfText(Uint8Array.from([0xef, 0xbb, 0xbf, 0xc3, 0xa9]))).toBe('é');
    // 0x84 is an em dash and 0xA0 the euro sign in PDFDocEncoding; 0xE9 is é as in Latin-1.
    expect(decodePdfText(Uint8Array.from([0x84, 0xa0, 0xe9]))).toBe('—€é');
  });
  it('writes ASCII as is and anything else as UTF-16BE, and reads back what it wrote', () => {
    expect(Buffer.from(encodePdfText('Folio')).toString('latin1')).toBe('Folio');
    for (const s of ['Zoë Åström', '署名者', 'a\u{1F600}b']) expect(decodePdfText(encodePdfText(s))).toBe(s);
    expect(pdfHexText('é')).toBe('<FEFF00E9>');
  });
  it('parses PDF dates with and without zone and apostrophes, and refuses impossible ones', () => {
    expect(parsePdfDate("D:20240131120000+01'00'")?.toISOString()).toBe('2024-01-31T11:00:00.000Z');
    expect(parsePdfDate('D:20240131120000-0130')?.toISOString()).toBe('2024-01-31T13:30:00.000Z');
    expect(parsePdfDate('D:2024')?.toISOString()).toBe('2024-01-01T00:00:00.000Z');
    expect(parsePdfDate('D:20241301')).toBeUndefined();
    expect(parsePdfDate('yesterday')).toBeUndefined();
    const d = new Date('2026-11-28T09:30:05Z');
    expect(formatPdfDate(d)).toBe('D:20261128093005Z');
    expect(parsePdfDate(formatPdfDate(d))?.getTime()).toBe(d.getTime());
  });
});
