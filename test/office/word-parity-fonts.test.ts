/**
 * The metric-compatible substitutes of Office fonts (scripts/fonts/build.py, fonts/README.md), built by
 * scripts/setup.sh into fonts/build: they carry every advance width Word embedded in its PDFs
 * (fonts/metrics/word-pdf.json, from test/fixtures/word-pdf) and Word's line metrics, and LibreOffice lays
 * Office-font text out in them, with Word's line heights.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fontkit from '@pdf-lib/fontkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OfficePool } from '../../src/office/index.js';
import { builtFamilies, builtFontsDir, fontReplacementItems, linkBuiltFonts } from '../../src/office/fonts.js';
import { buildDocx } from './helpers.js';

const ROOT = path.join(import.meta.dirname, '..', '..');
const readJson = <T>(...p: string[]) => JSON.parse(fs.readFileSync(path.join(ROOT, ...p), 'utf8')) as T;

interface WordFace {
  unitsPerEm: number;
  widths: Record<string, number>;
  hhea: { ascent: number; descent: number; lineGap: number };
  os2: { winAscent: number; winDescent: number; typoAscender: number; typoDescender: number; typoLineGap: number; useTypoMetrics: boolean };
}
interface Face {
  file: string;
  family: string;
  style: string;
  widths: string | null;
  vertical: string;
  office: string;
}
const word = readJson<{ faces: Record<string, WordFace> }>('fonts', 'metrics', 'word-pdf.json').faces;
const faces = readJson<{ faces: Face[] }>('fonts', 'faces.json').faces;
const dir = builtFontsDir();

interface FontkitFont {
  unitsPerEm: number;
  ascent: number;
  descent: number;
  lineGap: number;
  familyName: string;
  glyphForCodePoint(cp: number): { advanceWidth: number; id: number };
  hasGlyphForCodePoint(cp: number): boolean;
  'OS/2': { fsSelection: { useTypoMetrics?: boolean } | number; typoAscender: number; typoDescender: number; winAscent: number };
}
const open = (file: string) => fontkit.create(fs.readFileSync(path.join(dir!, file))) as unknown as FontkitFont;

/** Word's line metrics of a face, in its units: typo with USE_TYPO_METRICS, else win plus GDI's external leading. */
function wordLine(f: WordFace): { ascent: number; descent: number; gap: number } {
  if (f.os2.useTypoMetrics) return { ascent: f.os2.typoAscender, descent: -f.os2.typoDescender, gap: f.os2.typoLineGap };
  const win = f.os2.winAscent + f.os2.winDescent;
  return { ascent: f.os2.winAscent, descent: f.os2.winDescent, gap: Math.max(0, f.hhea.ascent - f.hhea.descent + f.hhea.lineGap - win) };
}

describe('built Office font substitutes', () => {
  it('are built (scripts/setup.sh), every family of fonts/faces.json', () => {
    expect(dir, 'fonts/build is missing: run scripts/setup.sh').toBeDefined();
    const families = builtFamilies(dir);
    for (const f of faces) {
      expect(families.has(f.family.toLowerCase()), f.family).toBe(true);
      expect(fs.existsSync(path.join(dir!, f.file)), f.file).toBe(true);
    }
    // The base fonts' licences travel with the fonts.
    const licences = fs.readdirSync(path.join(dir!, 'LICENSES'));
    expect(licences).toEqual(expect.arrayContaining(['fonts-liberation2.txt', 'fonts-lato.txt', 'fonts-dejavu-core.txt']));
  });

  it('take every advance width Word embedded for the face they stand in for', () => {
    let checked = 0;
    for (const f of faces) {
      const measured = f.widths ? word[f.widths] : undefined;
      if (!measured) continue;
      const font = open(f.file);
      for (const [hex, w] of Object.entries(measured.widths)) {
        const cp = parseInt(hex, 16);
        if (!font.hasGlyphForCodePoint(cp) || font.glyphForCodePoint(cp).id === 0) continue;
        const got = (font.glyphForCodePoint(cp).advanceWidth * 1000) / font.unitsPerEm;
        expect(Math.abs(got - (w * 1000) / measured.unitsPerEm), `${f.file} U+${hex}`).toBeLessThan(1);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(200);
  });

  it("carry Word's line metrics in hhea and typo alike, with USE_TYPO_METRICS, under names of their own", () => {
    for (const f of faces) {
      const font = open(f.file);
      expect(font.familyName).toBe(f.family);
      expect(font.familyName).not.toMatch(/Liberation|Lato|DejaVu|Vera|Caladea|Carlito|Aptos|Segoe|Verdana|Georgia|Cambria/);
      const target = word[f.vertical];
      if (!target) continue; // published metrics (Segoe UI's other weights): same as regular's
      const line = wordLine(target);
      const k = font.unitsPerEm / target.unitsPerEm;
      expect(Math.abs(font.ascent - line.ascent * k), `${f.file} ascent`).toBeLessThanOrEqual(1);
      expect(Math.abs(-font.descent - line.descent * k), `${f.file} descent`).toBeLessThanOrEqual(1);
      expect(Math.abs(font.lineGap - line.gap * k), `${f.file} line gap`).toBeLessThanOrEqual(1);
      expect(font['OS/2'].typoAscender).toBe(font.ascent);
    }
  });

  it('are linked into a profile and listed in the replacement table before the installed stand-ins', () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-fonts-link-'));
    try {
      linkBuiltFonts(tmp);
      expect(fs.realpathSync(path.join(tmp, 'fonts'))).toBe(fs.realpathSync(dir!));
      linkBuiltFonts(tmp); // a second profile write keeps the link
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
    const text = fontReplacementItems(new Set(['folio sans', 'liberation sans', 'folio ui', 'lato'])).join('');
    expect(text).toMatch(/<value>Aptos<\/value><\/prop><prop oor:name="SubstituteFont"[^>]*><value>Folio Sans</);
    expect(text).toMatch(/<value>Segoe UI<\/value><\/prop><prop oor:name="SubstituteFont"[^>]*><value>Folio UI</);
  });
});

/** Baselines (points from the top) of the first word of each line on page 1: pdftotext's boxes of one font. */
function lineBottoms(pdf: Uint8Array): number[] {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-fonts-lines-'));
  try {
    fs.writeFileSync(path.join(tmp, 'a.pdf'), pdf);
    const out = execFileSync('pdftotext', ['-f', '1', '-l', '1', '-bbox', path.join(tmp, 'a.pdf'), '-']).toString('utf8');
    const ys = [...out.matchAll(/<word xMin="[\d.]+" yMin="[\d.]+" xMax="[\d.]+" yMax="([\d.]+)">/g)].map((m) => Number(m[1]));
    return ys.filter((y, i) => i === 0 || Math.abs(y - ys[i - 1]!) > 0.5);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

describe("Word's line heights in LibreOffice", () => {
  let pool: OfficePool;
  beforeAll(async () => {
    pool = new OfficePool({ workers: 1, queueSize: 16, timeoutMs: 120_000 });
    await pool.start();
  });
  afterAll(async () => {
    await pool?.close();
  });

  const lines = (font: string, halfPoints: number, line: number) =>
    buildDocx({
      body: Array.from(
        { length: 24 },
        (_, i) =>
          `<w:p><w:pPr><w:spacing w:before="0" w:after="0" w:line="${line}" w:lineRule="auto"/></w:pPr>` +
          `<w:r><w:rPr><w:rFonts w:ascii="${font}" w:hAnsi="${font}"/><w:sz w:val="${halfPoints}"/></w:rPr><w:t>Line ${i + 1} of text</w:t></w:r></w:p>`,
      ).join(''),
    });

  // Word's line pitch = multiple × (ascent + descent + gap) of wordLine(); measured in the Word PDFs of
  // test/fixtures/word-pdf: Aptos and Aptos Display (case2: typo metrics), Verdana and Segoe UI (sample100kB:
  // win metrics, 15.31 and 16.76 pt at 10.5 pt ×1.2). LibreOffice rounds each line to whole twips (0.05 pt).
  it.each([
    ['Aptos', 'Aptos', 24, 278],
    ['Aptos Display', 'AptosDisplay', 32, 240],
    ['Verdana', 'Verdana', 21, 288],
    ['Segoe UI', 'SegoeUI', 21, 288],
    ['Georgia', 'Georgia', 22, 259],
  ])('%s: the line pitch is Word’s', async (font, key, halfPoints, line) => {
    const f = word[key]!;
    const m = wordLine(f);
    const expected = (((line / 240) * (m.ascent + m.descent + m.gap)) / f.unitsPerEm) * (halfPoints / 2);
    const ys = lineBottoms(await pool.docxToPdf(lines(font, halfPoints, line)));
    expect(ys.length).toBeGreaterThanOrEqual(20);
    const pitch = (ys[ys.length - 1]! - ys[0]!) / (ys.length - 1);
    expect(Math.abs(pitch - expected), `${font}: ${pitch.toFixed(3)} pt per line, Word ${expected.toFixed(3)}`).toBeLessThan(0.06);
  });
});
