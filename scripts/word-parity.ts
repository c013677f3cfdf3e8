/**
 * Word parity of DOCX→PDF: how close Folio's PDF of a DOCX is to the PDF Microsoft Word exported of it.
 *
 *   npx tsx scripts/word-parity.ts [folder] [--json] [--keep <dir>]
 *
 * `folder` (default ../shared/corpus/word-pdf beside the repository) holds pairs `<name>.docx` + `<name>.word.pdf`. Each DOCX is
 * converted by the office engine exactly as the API does (OfficePool, one worker) and scored against Word's PDF:
 *
 * - pageCount: 1 when both have as many pages, else 0;
 * - pageSize: 1 when every page has Word's size within 1 pt, else 0;
 * - wordF1: per page, the F1 of the two word multisets (pdftotext, words compared with surrounding punctuation
 *   removed), averaged over the pages of the longer document (a missing page scores 0);
 * - pixel: per page, both rendered by `pdftoppm` at 50 dpi in grey, each blurred by a 3×3 box (one-pixel offsets
 *   are not differences); `pixelDiff` is the fraction of the page's pixels whose grey differs by more than 48 of
 *   255, `pixelSimilarity` = 1 − pixelDiff averaged over the pages of the longer document (a missing page: 0).
 *   Blank paper agrees everywhere, so `inkDiff` also gives the differing pixels over the pixels inked in either.
 *
 * `--keep <dir>` writes Folio's PDFs there. The functions are exported for test/office/word-parity.test.ts.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const DPI = 50;
const GREY_THRESHOLD = 48;
const INK = 200;

export interface PageScore {
  page: number;
  wordF1: number;
  pixelDiff: number;
  inkDiff: number;
}

export interface PairScore {
  name: string;
  pages: { word: number; folio: number };
  pageCount: number;
  pageSize: number;
  wordF1: number;
  pixelSimilarity: number;
  inkSimilarity: number;
  perPage: PageScore[];
}

function withTemp<T>(fn: (dir: string) => T): T {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-word-parity-'));
  try {
    return fn(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Page sizes in points, from pdfinfo. */
export function pageSizes(pdf: Uint8Array): Array<[number, number]> {
  return withTemp((dir) => {
    const file = path.join(dir, 'a.pdf');
    fs.writeFileSync(file, pdf);
    const out = execFileSync('pdfinfo', ['-f', '1', '-l', '100000', file], { maxBuffer: 64 << 20 }).toString('utf8');
    const sizes: Array<[number, number]> = [];
    for (const m of out.matchAll(/^Page\s+\d+ size:\s+([\d.]+) x ([\d.]+)/gm)) sizes.push([Number(m[1]), Number(m[2])]);
    return sizes;
  });
}

/** The words of each page (pdftotext in reading order), surrounding punctuation removed. */
export function pageWords(pdf: Uint8Array): string[][] {
  return withTemp((dir) => {
    const file = path.join(dir, 'a.pdf');
    fs.writeFileSync(file, pdf);
    const text = execFileSync('pdftotext', ['-enc', 'UTF-8', file, '-'], { maxBuffer: 256 << 20 }).toString('utf8');
    const pages = text.split('\f');
    if (pages.length > 1 && pages[pages.length - 1]!.trim() === '') pages.pop();
    return pages.map((p) =>
      p
        .normalize('NFKC')
        .split(/\s+/)
        .map((w) => w.replace(/^[\p{P}\p{S}]+|[\p{P}\p{S}]+$/gu, ''))
        .filter((w) => w.length > 0),
    );
  });
}

/** F1 of two multisets: 2·|A∩B| / (|A|+|B|); two empty pages agree. */
export function multisetF1(a: string[], b: string[]): number {
  if (a.length === 0 && b.length === 0) return 1;
  const counts = new Map<string, number>();
  for (const w of a) counts.set(w, (counts.get(w) ?? 0) + 1);
  let common = 0;
  for (const w of b) {
    const n = counts.get(w) ?? 0;
    if (n > 0) {
      common++;
      counts.set(w, n - 1);
    }
  }
  return (2 * common) / (a.length + b.length);
}

interface Grey {
  width: number;
  height: number;
  data: Uint8Array;
}

/** Every page rendered in grey at DPI (pdftoppm -gray, PGM files). */
export function renderPages(pdf: Uint8Array): Grey[] {
  return withTemp((dir) => {
    const file = path.join(dir, 'a.pdf');
    fs.writeFileSync(file, pdf);
    execFileSync('pdftoppm', ['-r', String(DPI), '-gray', file, path.join(dir, 'p')], { maxBuffer: 64 << 20 });
    const files = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.pgm'))
      .sort((x, y) => Number(/(\d+)\.pgm$/.exec(x)![1]) - Number(/(\d+)\.pgm$/.exec(y)![1]));
    return files.map((f) => parsePgm(fs.readFileSync(path.join(dir, f))));
  });
}

function parsePgm(buf: Buffer): Grey {
  // P5\n<w> <h>\n255\n then bytes (pdftoppm writes no comments).
  const header: string[] = [];
  let offset = 0;
  while (header.length < 4) {
    while (buf[offset] === 0x20 || buf[offset] === 0x0a) offset++;
    let token = '';
    while (buf[offset] !== 0x20 && buf[offset] !== 0x0a) token += String.fromCharCode(buf[offset++]!);
    header.push(token);
  }
  offset++;
  const width = Number(header[1]);
  const height = Number(header[2]);
  return { width, height, data: new Uint8Array(buf.buffer, buf.byteOffset + offset, width * height) };
}

/** 3×3 box blur onto a canvas of `w`×`h` (white outside the image). */
function blurred(img: Grey, w: number, h: number): Uint8Array {
  const at = (x: number, y: number) => (x < 0 || y < 0 || x >= img.width || y >= img.height ? 255 : img.data[y * img.width + x]!);
  const out = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let s = 0;
      for (let dy = -1; dy <= 1; dy++) for (let dx = -1; dx <= 1; dx++) s += at(x + dx, y + dy);
      out[y * w + x] = Math.round(s / 9);
    }
  }
  return out;
}

/** Differing pixels of two renders compared on the larger canvas: over all pixels, and over the inked ones. */
export function pixelDifference(a: Grey, b: Grey): { pixelDiff: number; inkDiff: number } {
  const w = Math.max(a.width, b.width);
  const h = Math.max(a.height, b.height);
  const ba = blurred(a, w, h);
  const bb = blurred(b, w, h);
  let differ = 0;
  let ink = 0;
  for (let i = 0; i < w * h; i++) {
    if (ba[i]! < INK || bb[i]! < INK) ink++;
    if (Math.abs(ba[i]! - bb[i]!) > GREY_THRESHOLD) differ++;
  }
  return { pixelDiff: differ / (w * h), inkDiff: ink === 0 ? 0 : differ / ink };
}

/** Scores Folio's PDF against Word's. */
export function scorePair(name: string, wordPdf: Uint8Array, folioPdf: Uint8Array): PairScore {
  const wordSizes = pageSizes(wordPdf);
  const folioSizes = pageSizes(folioPdf);
  const wordWords = pageWords(wordPdf);
  const folioWords = pageWords(folioPdf);
  const wordImages = renderPages(wordPdf);
  const folioImages = renderPages(folioPdf);
  const n = Math.max(wordSizes.length, folioSizes.length);
  const perPage: PageScore[] = [];
  for (let i = 0; i < n; i++) {
    const both = i < wordSizes.length && i < folioSizes.length;
    const px = both && wordImages[i] && folioImages[i] ? pixelDifference(wordImages[i]!, folioImages[i]!) : { pixelDiff: 1, inkDiff: 1 };
    perPage.push({ page: i + 1, wordF1: both ? multisetF1(wordWords[i] ?? [], folioWords[i] ?? []) : 0, ...px });
  }
  const sameSize =
    wordSizes.length === folioSizes.length &&
    wordSizes.every(([w, h], i) => Math.abs(w - folioSizes[i]![0]) <= 1 && Math.abs(h - folioSizes[i]![1]) <= 1);
  const mean = (f: (p: PageScore) => number) => (perPage.length === 0 ? 0 : perPage.reduce((s, p) => s + f(p), 0) / perPage.length);
  return {
    name,
    pages: { word: wordSizes.length, folio: folioSizes.length },
    pageCount: wordSizes.length === folioSizes.length ? 1 : 0,
    pageSize: sameSize ? 1 : 0,
    wordF1: mean((p) => p.wordF1),
    pixelSimilarity: mean((p) => 1 - p.pixelDiff),
    inkSimilarity: mean((p) => 1 - p.inkDiff),
    perPage,
  };
}

/** The pairs of a folder: `<name>.docx` with `<name>.word.pdf`, by name. */
export function listPairs(folder: string): Array<{ name: string; docx: string; wordPdf: string }> {
  return fs
    .readdirSync(folder)
    .filter((f) => f.endsWith('.docx') && fs.existsSync(path.join(folder, f.replace(/\.docx$/, '.word.pdf'))))
    .sort()
    .map((f) => ({ name: f.replace(/\.docx$/, ''), docx: path.join(folder, f), wordPdf: path.join(folder, f.replace(/\.docx$/, '.word.pdf')) }));
}

export const SUMMARY_KEYS = ['pageCount', 'pageSize', 'wordF1', 'pixelSimilarity', 'inkSimilarity'] as const;

export function meanScores(scores: PairScore[]): Record<(typeof SUMMARY_KEYS)[number], number> {
  const out = {} as Record<(typeof SUMMARY_KEYS)[number], number>;
  for (const k of SUMMARY_KEYS) out[k] = scores.length === 0 ? 0 : scores.reduce((s, x) => s + x[k], 0) / scores.length;
  return out;
}

/** The corpus of Word-exported pairs beside the repository (the shared folder of the project's checkouts). */
export const DEFAULT_FOLDER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'shared', 'corpus', 'word-pdf');

/** `[folder] [--json] [--keep <dir>]`, in any order; the folder defaults to DEFAULT_FOLDER. */
export function parseArgs(args: string[]): { folder: string; json: boolean; keep?: string } {
  let folder: string | undefined;
  let keep: string | undefined;
  let json = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--json') json = true;
    else if (a === '--keep') {
      keep = args[++i];
      if (keep === undefined) throw new Error('--keep needs a folder');
    } else if (a.startsWith('--')) throw new Error(`unknown option ${a}`);
    else if (folder === undefined) folder = a;
    else throw new Error(`one folder only (got ${folder} and ${a})`);
  }
  return { folder: folder ?? DEFAULT_FOLDER, json, ...(keep !== undefined ? { keep } : {}) };
}

async function main(): Promise<void> {
  const { folder, json, keep } = parseArgs(process.argv.slice(2));
  const { OfficePool } = await import('../src/office/index.js');
  const pool = new OfficePool({ workers: 1, queueSize: 64, timeoutMs: 120_000 });
  await pool.start();
  const scores: PairScore[] = [];
  try {
    if (keep) fs.mkdirSync(keep, { recursive: true });
    for (const pair of listPairs(folder)) {
      const pdf = await pool.docxToPdf(new Uint8Array(fs.readFileSync(pair.docx)));
      if (keep) fs.writeFileSync(path.join(keep, `${pair.name}.folio.pdf`), pdf);
      scores.push(scorePair(pair.name, new Uint8Array(fs.readFileSync(pair.wordPdf)), pdf));
    }
  } finally {
    await pool.close();
  }
  const mean = meanScores(scores);
  if (json) {
    console.log(JSON.stringify({ scores, mean }, null, 1));
    return;
  }
  const f = (x: number) => x.toFixed(3);
  console.log('file | pages (Word/Folio) | pageCount | pageSize | wordF1 | pixelSimilarity | inkSimilarity');
  for (const s of scores) {
    console.log(
      `${s.name} | ${s.pages.word}/${s.pages.folio} | ${s.pageCount} | ${s.pageSize} | ${f(s.wordF1)} | ${f(s.pixelSimilarity)} | ${f(s.inkSimilarity)}`,
    );
  }
  console.log(`mean | | ${f(mean.pageCount)} | ${f(mean.pageSize)} | ${f(mean.wordF1)} | ${f(mean.pixelSimilarity)} | ${f(mean.inkSimilarity)}`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
