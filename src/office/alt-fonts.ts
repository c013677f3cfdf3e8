/**
 * Fonts Word does not have. A document made elsewhere may name fonts that Word's machines lack (DejaVu Sans,
 * Open Sans, …): Word lays such text out in another font and records it in the font table as the font's
 * `w:altName` when it saves. Word's PDF of the document shows that font, not the one named; LibreOffice would
 * use the named font where the host has it (DejaVu Sans is installed with LibreOffice), with other widths and
 * line heights. So a named font that is not one of Word's, whose `w:altName` is, is replaced by the alternative
 * before conversion; the alternative then reaches its metric-compatible substitute (fonts.ts). Measured on
 * sample100kB of test/fixtures/word-pdf (DejaVu Sans → Verdana, "Open Sans;Arial" → Segoe UI): bench/README.md.
 */

/**
 * Fonts every Word installation has (Office's and the operating systems' core fonts), lower-cased: their names
 * are never replaced, and only they are taken as alternatives.
 */
const WORD_FONTS = new Set(
  [
    'Aptos',
    'Aptos Display',
    'Aptos Narrow',
    'Aptos Light',
    'Aptos SemiBold',
    'Aptos ExtraBold',
    'Aptos Black',
    'Arial',
    'Arial Black',
    'Arial Narrow',
    'Book Antiqua',
    'Calibri',
    'Calibri Light',
    'Cambria',
    'Cambria Math',
    'Candara',
    'Century Gothic',
    'Comic Sans MS',
    'Consolas',
    'Constantia',
    'Corbel',
    'Courier New',
    'Franklin Gothic Medium',
    'Garamond',
    'Georgia',
    'Impact',
    'Lucida Console',
    'Palatino Linotype',
    'Segoe UI',
    'Segoe UI Light',
    'Segoe UI Semibold',
    'Segoe UI Semilight',
    'Symbol',
    'Tahoma',
    'Times New Roman',
    'Trebuchet MS',
    'Verdana',
    'Webdings',
    'Wingdings',
  ].map((f) => f.toLowerCase()),
);

const FONT = /<w:font\b[^>]*\bw:name="([^"]*)"[^>]*>([\s\S]*?)<\/w:font>/g;
const ALT_NAME = /<w:altName\b[^>]*\bw:val="([^"]*)"/;

/** Named font → Word's alternative, from the font table: only fonts Word lacks, only alternatives Word has. */
export function wordAlternatives(fontTableXml: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of fontTableXml.matchAll(FONT)) {
    const name = m[1]!;
    const alt = ALT_NAME.exec(m[2]!)?.[1];
    if (!alt || WORD_FONTS.has(name.toLowerCase()) || !WORD_FONTS.has(alt.toLowerCase())) continue;
    out.set(name, alt);
  }
  return out;
}

const RUN_FONTS = /(<w:rFonts\b[^>]*>)/g;
const FONT_ATTR = /(\bw:(?:ascii|hAnsi|cs|eastAsia)=")([^"]*)(")/g;

/** A part with the run fonts of `alternatives` replaced, or the same string. */
export function useWordAlternatives(xml: string, alternatives: Map<string, string>): string {
  if (alternatives.size === 0 || !xml.includes('<w:rFonts')) return xml;
  return xml.replace(RUN_FONTS, (element: string) =>
    element.replace(FONT_ATTR, (attr: string, pre: string, name: string, post: string) => {
      const alt = alternatives.get(name);
      return alt === undefined ? attr : `${pre}${alt}${post}`;
    }),
  );
}
