/**
 * Fonts Word lacks become the alternative Word recorded in the font table (src/office/alt-fonts.ts), as in
 * the PDF Word exported of sample100kB (test/fixtures/word-pdf): DejaVu Sans → Verdana, Open Sans → Segoe UI.
 */
import { describe, expect, it } from 'vitest';
import { useWordAlternatives, wordAlternatives } from '../../src/office/alt-fonts.js';

const table =
  '<w:fonts>' +
  '<w:font w:name="DejaVu Sans"><w:altName w:val="Verdana"/><w:panose1 w:val="020B0604020202020204"/></w:font>' +
  '<w:font w:name="Open Sans;Arial"><w:altName w:val="Segoe UI"/></w:font>' +
  '<w:font w:name="OpenSymbol"><w:altName w:val="Arial Unicode MS"/></w:font>' + // not one of Word's fonts
  '<w:font w:name="Calibri"><w:altName w:val="Arial"/></w:font>' + // Word has Calibri: kept
  '<w:font w:name="Liberation Serif"><w:panose1 w:val="02020603050405020304"/></w:font>' + // no alternative
  '</w:fonts>';

describe("Word's alternatives for fonts it lacks", () => {
  it('are read from the font table: only fonts Word lacks, only alternatives Word has', () => {
    expect([...wordAlternatives(table)]).toEqual([
      ['DejaVu Sans', 'Verdana'],
      ['Open Sans;Arial', 'Segoe UI'],
    ]);
  });

  it('replace the run fonts of every script, nothing else', () => {
    const alternatives = wordAlternatives(table);
    const xml =
      '<w:rPr><w:rFonts w:ascii="DejaVu Sans" w:hAnsi="DejaVu Sans" w:cs="DejaVu Sans" w:eastAsia="Open Sans;Arial"/></w:rPr>' +
      '<w:rPr><w:rFonts w:ascii="OpenSymbol" w:hAnsi="Calibri"/></w:rPr><w:t>DejaVu Sans</w:t>';
    expect(useWordAlternatives(xml, alternatives)).toBe(
      '<w:rPr><w:rFonts w:ascii="Verdana" w:hAnsi="Verdana" w:cs="Verdana" w:eastAsia="Segoe UI"/></w:rPr>' +
        '<w:rPr><w:rFonts w:ascii="OpenSymbol" w:hAnsi="Calibri"/></w:rPr><w:t>DejaVu Sans</w:t>',
    );
    expect(useWordAlternatives(xml, new Map())).toBe(xml);
  });
});
