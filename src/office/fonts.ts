import { execFileSync } from 'node:child_process';

/**
 * The font replacement table of the workers' LibreOffice profile (profile.ts): Word's fonts that no free
 * metric-compatible twin covers, mapped to the installed font whose advance widths come closest, so that
 * lines — and therefore pages — break where Word breaks them. Without an entry LibreOffice asks fontconfig,
 * which falls back to DejaVu Sans (about 16 % wider than Aptos: a page of Aptos text runs onto the next).
 *
 * Widths were measured against the glyph widths Word embedded in the PDFs of ../shared/corpus/word-pdf
 * (ASCII letters weighted by English frequency; ratio = substitute / Word, per-glyph error in 1/1000 em);
 * the measurement and the before/after scores are in bench/README.md ("Word parity"):
 *
 * | Word font     | substitute       | width ratio | per-glyph error | package               |
 * |---------------|------------------|-------------|-----------------|-----------------------|
 * | Aptos         | Liberation Sans  | 1.013       | 22              | fonts-liberation2     |
 * | Aptos Display | Carlito          | 1.025       | 15              | fonts-crosextra-carlito |
 * | Segoe UI      | Lato             | 0.995       | 16              | fonts-lato            |
 * | Georgia       | DejaVu Serif Condensed | 1.036 | 23              | fonts-dejavu-extra    |
 * | Verdana       | DejaVu Sans      | 1.004       | 10              | fonts-dejavu          |
 *
 * Calibri → Carlito and Cambria → Caladea are metric-compatible twins that LibreOffice and fontconfig
 * already pick; they are listed too so that the choice does not depend on the host's fontconfig. Selawik,
 * Microsoft's metric-compatible fallback for Segoe UI, and Gelasio (Georgia) are not packaged in Debian 12.
 */

/** [Word's font, substitutes in order of preference]: the first installed one stands in where the font is missing. */
export const FONT_REPLACEMENTS: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['Aptos', ['Liberation Sans']],
  ['Aptos Display', ['Carlito']],
  ['Segoe UI', ['Lato', 'Liberation Sans']],
  ['Georgia', ['DejaVu Serif Condensed']],
  ['Verdana', ['DejaVu Sans']],
  ['Calibri', ['Carlito']],
  ['Cambria', ['Caladea']],
  // Weights Word names as families of their own (Office's heading font before 2023 is Calibri Light): the
  // substitute's family or its matching weight. Not in the Word PDFs measured; fontconfig gave DejaVu Sans,
  // about 20 % wider than Calibri and 16 % wider than Aptos.
  ['Calibri Light', ['Carlito']],
  ['Aptos Light', ['Liberation Sans']],
  ['Aptos SemiBold', ['Liberation Sans']],
  ['Aptos ExtraBold', ['Liberation Sans']],
  ['Aptos Black', ['Liberation Sans']],
  ['Segoe UI Light', ['Lato Light', 'Liberation Sans']],
  ['Segoe UI Semilight', ['Lato Light', 'Liberation Sans']],
  ['Segoe UI Semibold', ['Lato Semibold', 'Liberation Sans']],
];

/**
 * The families fontconfig knows, or undefined when fc-list cannot tell (then every entry is written).
 * Read once per profile (a worker start): about 20 ms.
 */
function installedFamilies(): Set<string> | undefined {
  try {
    const out = execFileSync('fc-list', ['--format', '%{family}\\n'], { encoding: 'utf8', timeout: 10_000, maxBuffer: 16 << 20 });
    return new Set(
      out
        .split(/[\n,]/)
        .map((f) => f.trim().toLowerCase())
        .filter(Boolean),
    );
  } catch {
    return undefined;
  }
}

const prop = (name: string, type: string, value: string) =>
  `<prop oor:name="${name}" oor:op="fuse" oor:type="${type}"><value>${value}</value></prop>`;

/**
 * Registry items of LibreOffice's replacement table (Tools ▸ Options ▸ Fonts), for the Word fonts that are
 * not installed and whose substitute is. `Always=true` because LibreOffice 7.4 ignores an entry without it
 * (fontconfig's fallback counts as "available": measured, the table then changes nothing); a Word font
 * installed on the host therefore gets no entry and is used as it is. `OnScreenOnly=false`: the replacement
 * holds for layout and PDF export.
 */
export function fontReplacementItems(installed: Set<string> | undefined = installedFamilies()): string[] {
  const base = '/org.openoffice.Office.Common/Font/Substitution';
  const pairs: Array<[string, string]> = [];
  for (const [font, candidates] of FONT_REPLACEMENTS) {
    if (installed?.has(font.toLowerCase())) continue;
    const substitute = installed ? candidates.find((c) => installed.has(c.toLowerCase())) : candidates[0];
    if (substitute) pairs.push([font, substitute]);
  }
  const items = [`<item oor:path="${base}">${prop('Replacement', 'xs:boolean', String(pairs.length > 0))}</item>`];
  pairs.forEach(([font, substitute], i) => {
    items.push(
      `<item oor:path="${base}/FontPairs"><node oor:name="_${i}" oor:op="replace">` +
        prop('Always', 'xs:boolean', 'true') +
        prop('OnScreenOnly', 'xs:boolean', 'false') +
        prop('ReplaceFont', 'xs:string', font) +
        prop('SubstituteFont', 'xs:string', substitute) +
        '</node></item>',
    );
  });
  return items;
}
