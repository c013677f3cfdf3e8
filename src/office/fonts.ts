import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The font replacement table of the workers' LibreOffice profile (profile.ts): Word's fonts that are not
 * installed, mapped to a stand-in, so that lines — and therefore pages — break where Word breaks them and lines
 * sit where Word's do. Without an entry LibreOffice asks fontconfig, which falls back to DejaVu Sans (about
 * 16 % wider than Aptos: a page of Aptos text runs onto the next).
 *
 * First choice: the metric-compatible substitutes that scripts/fonts/build.py makes at setup from open fonts
 * (fonts/README.md): every advance width Word embedded in its PDFs, the rest estimated, and Word's line
 * metrics. Then the installed font of nearest width, for hosts where the build has not run. Figures (width
 * error against Word's embedded widths, before → after) are in bench/README.md ("Word parity"):
 *
 * | Word font          | substitute (built)  | from                  | fallback (installed)   |
 * |--------------------|---------------------|-----------------------|------------------------|
 * | Aptos              | Folio Sans          | Liberation Sans       | Liberation Sans        |
 * | Aptos Display      | Folio Sans Display  | Liberation Sans       | Carlito                |
 * | Aptos Narrow       | Folio Sans Narrow   | Liberation Sans       | Liberation Sans        |
 * | Segoe UI (+ Light, Semilight, Semibold) | Folio UI (…) | Lato | Lato                        |
 * | Verdana            | Folio Humanist      | DejaVu Sans           | DejaVu Sans            |
 * | Georgia            | Folio Serif         | DejaVu Serif Condensed| DejaVu Serif Condensed |
 * | Cambria            | Folio Office Serif  | Caladea (line metrics)| Caladea                |
 *
 * Caladea already has Cambria's widths; its built twin only carries Word's line height (Caladea's line is 2 %
 * shorter than Cambria's). Calibri stays Carlito: its twin with Word's baseline (Carlito's sits 0.02 em lower)
 * measured worse, LibreOffice's whole-twip line heights drifting the other way (bench/README.md).
 */

/** [Word's font, substitutes in order of preference]: the first available one stands in where the font is missing. */
export const FONT_REPLACEMENTS: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['Aptos', ['Folio Sans', 'Liberation Sans']],
  ['Aptos Display', ['Folio Sans Display', 'Carlito']],
  ['Aptos Narrow', ['Folio Sans Narrow', 'Liberation Sans Narrow', 'Liberation Sans']],
  ['Segoe UI', ['Folio UI', 'Lato', 'Liberation Sans']],
  ['Georgia', ['Folio Serif', 'DejaVu Serif Condensed']],
  ['Verdana', ['Folio Humanist', 'DejaVu Sans']],
  ['Calibri', ['Carlito']],
  ['Cambria', ['Folio Office Serif', 'Caladea']],
  // Weights Word names as families of their own (Office's heading font before 2023 is Calibri Light): the
  // substitute's family or its matching weight. fontconfig gave DejaVu Sans, about 20 % wider than Calibri
  // and 16 % wider than Aptos.
  ['Calibri Light', ['Carlito']],
  ['Aptos Light', ['Folio Sans', 'Liberation Sans']],
  ['Aptos SemiBold', ['Folio Sans', 'Liberation Sans']],
  ['Aptos ExtraBold', ['Folio Sans', 'Liberation Sans']],
  ['Aptos Black', ['Folio Sans', 'Liberation Sans']],
  ['Segoe UI Light', ['Folio UI Light', 'Lato Light', 'Liberation Sans']],
  ['Segoe UI Semilight', ['Folio UI Semilight', 'Lato Light', 'Liberation Sans']],
  ['Segoe UI Semibold', ['Folio UI Semibold', 'Lato Semibold', 'Liberation Sans']],
];

/**
 * The folder of the built substitutes: FOLIO_FONTS_DIR, else `fonts/build` of the installation (found upwards
 * from this module, which runs from src/ under tsx and from dist/src/ once compiled); undefined when no build
 * is there (scripts/setup.sh makes it; the Dockerfile copies it into the image).
 */
export function builtFontsDir(): string | undefined {
  const fromEnv = process.env.FOLIO_FONTS_DIR;
  if (fromEnv) return fs.existsSync(path.join(fromEnv, 'manifest.json')) ? fromEnv : undefined;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const candidate = path.join(dir, 'fonts', 'build');
    if (fs.existsSync(path.join(candidate, 'manifest.json'))) return candidate;
    dir = path.dirname(dir);
  }
  return undefined;
}

/** The families of the built substitutes (their manifest), lower-cased; empty without a build. */
export function builtFamilies(dir: string | undefined = builtFontsDir()): Set<string> {
  if (!dir) return new Set();
  try {
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as { families?: Array<{ family?: unknown }> };
    return new Set(
      (manifest.families ?? [])
        .map((f) => f.family)
        .filter((f): f is string => typeof f === 'string')
        .map((f) => f.toLowerCase()),
    );
  } catch {
    return new Set();
  }
}

/**
 * Makes the built substitutes visible to the LibreOffice of one profile: LibreOffice adds `<profile>/user/fonts`
 * to its font path, so a symbolic link there (not a copy: every worker start makes a profile) is enough. No-op
 * without a build.
 */
export function linkBuiltFonts(userDir: string, dir: string | undefined = builtFontsDir()): void {
  if (!dir) return;
  const link = path.join(userDir, 'fonts');
  if (!fs.existsSync(link)) fs.symlinkSync(path.resolve(dir), link, 'dir');
}

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

/** What LibreOffice can use: the host's fonts (fontconfig) and the built substitutes (linked into the profile). */
function availableFamilies(): Set<string> | undefined {
  const host = installedFamilies();
  if (!host) return undefined;
  for (const f of builtFamilies()) host.add(f);
  return host;
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
export function fontReplacementItems(installed: Set<string> | undefined = availableFamilies()): string[] {
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
