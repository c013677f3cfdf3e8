/**
 * Word's default bullet is U+F0B7 in the Symbol font: a private-use code point that only Symbol's own
 * encoding makes a bullet. Word's PDF export maps it to U+2022 BULLET in the text layer; LibreOffice writes
 * the private-use character as it is, so a PDF reader, a screen reader or a copy-paste sees an unknown
 * character before every list item (and the Word-parity scorer counts a word Word does not have). The level
 * text is rewritten to U+2022 before conversion: the stand-in font for Symbol (OpenSymbol) draws the same
 * bullet for both, so the page looks the same (measured: scripts/word-parity.ts, bench/README.md).
 */

/** `w:lvlText w:val="…"` holding exactly the Symbol bullet, written raw or as a character reference. */
const SYMBOL_BULLET = /(<w:lvlText\b[^>]*?\bw:val=")(?:\uF0B7|&#xF0B7;|&#61623;)(")/gi;

/** The numbering part with Symbol bullets as U+2022, or the same string when it has none. */
export function unicodeBullets(numberingXml: string): string {
  return numberingXml.replace(SYMBOL_BULLET, '$1\u2022$2');
}
