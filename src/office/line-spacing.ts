/**
 * Word's "multiple" line spacing (`w:spacing w:line="N" w:lineRule="auto"`) is N/240 of a single line;
 * LibreOffice 7.4's DOCX import keeps it as a whole per cent, truncated: Office's default since 2023, 278
 * (1.158×), becomes 115 %, and every line of an Aptos 12 pt page sits 0.17 pt higher than the one above it in
 * Word (6.7 pt down a page; measured, bench/README.md "Word parity"). The value is rewritten before conversion
 * to the smallest N that LibreOffice reads as the *nearest* per cent (278 → 279, read as 116 %: 0.02 pt per
 * line); values already on a whole per cent are left alone.
 */

/** A `w:spacing` element that carries a line value (paragraph spacing; run spacing has only `w:val`). */
const SPACING = /<w:spacing\b[^>]*?\bw:line="(\d+)"[^>]*>/g;
const LINE_RULE = /\bw:lineRule="([^"]*)"/;

/** The line value LibreOffice reads as the per cent nearest to Word's N/240, or N itself when it already does. */
export function nearestPercentLine(n: number): number {
  const wanted = Math.round((n * 100) / 240);
  if (Math.floor((n * 100) / 240) === wanted) return n;
  return Math.ceil((wanted * 240) / 100);
}

/** The part with every automatic line spacing moved to the nearest whole per cent, or the same string. */
export function wordLineSpacing(xml: string): string {
  if (!xml.includes('w:line=')) return xml;
  return xml.replace(SPACING, (element: string, value: string) => {
    const rule = LINE_RULE.exec(element)?.[1];
    // No lineRule means "auto" (ECMA-376 17.3.1.33); exact and atLeast are twips, kept as they are.
    if (rule !== undefined && rule !== 'auto') return element;
    const n = Number(value);
    const fixed = nearestPercentLine(n);
    return fixed === n ? element : element.replace(`w:line="${value}"`, `w:line="${fixed}"`);
  });
}
