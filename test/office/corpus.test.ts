/**
 * Fidelity over the DOCX corpus (test/fixtures/corpus/docx, ~120 real files from pandoc, POI, docx4j,
 * python-docx and mammoth) through one warm worker:
 * - every valid file converts, the three broken ones get a 4xx;
 * - word recall: the words of the document text (pandoc's plain-text reading, or the w:t runs when pandoc
 *   cannot read the file) appear in the PDF text (pdftotext);
 * - header/footer text on every page (single-section files without odd/even headers; field results and
 *   content controls excluded, the first page skipped when it has its own header);
 * - a table with a marked header row that spans pages shows the header row's words on each of its pages;
 * - numbered lists nested 2+ levels show, at each level, the level's number format before an item's text;
 * - tracked changes: accept mode shows no deletion-only words and reject mode no insertion-only words.
 * Corpus-wide figures are printed.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unzipSync, strFromU8 } from 'fflate';
import { OfficePool } from '../../src/office/index.js';
import { FolioError } from '../../src/errors.js';
import { BROKEN_CORPUS_FILES, CORPUS_DOCX, pdfPages, words } from './helpers.js';

const hasPandoc = spawnSync('pandoc', ['--version']).status === 0;
const files = fs
  .readdirSync(CORPUS_DOCX)
  .filter((f) => /\.(docx|docm|dotx)$/i.test(f))
  .sort();
const valid = files.filter((f) => !BROKEN_CORPUS_FILES.includes(f));

/** Minimum per-file recall; below it only for the files listed here, with the reason. */
const MIN_RECALL = 0.9;
const LOW_RECALL_EXPECTED: Record<string, string> = {};

/**
 * Pictures and formulas are not text: pandoc's plain writer would give a picture's alt text and a formula's
 * TeX, neither of which a PDF shows as words. This filter drops both from the reference.
 */
const filterDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-office-corpus-'));
const LUA_FILTER = path.join(filterDir, 'text-only.lua');
fs.writeFileSync(LUA_FILTER, 'function Image(el) return {} end\nfunction Math(el) return {} end\n');

function referenceText(file: string, trackChanges: 'accept' | 'reject' = 'accept'): { text: string; source: 'pandoc' | 'runs' } {
  if (hasPandoc) {
    const r = spawnSync('pandoc', ['-t', 'plain', '--wrap=none', `--track-changes=${trackChanges}`, `--lua-filter=${LUA_FILTER}`, file], {
      maxBuffer: 256 * 1024 * 1024,
      timeout: 60_000,
    });
    if (r.status === 0) return { text: r.stdout.toString('utf8'), source: 'pandoc' };
  }
  const parts = unzipSync(new Uint8Array(fs.readFileSync(file)), { filter: (f) => f.name === 'word/document.xml' });
  const xml = strFromU8(parts['word/document.xml'] ?? new Uint8Array());
  return { text: [...xml.matchAll(/<w:t(?:\s[^>]*)?>([^<]*)<\/w:t>/g)].map((m) => m[1]).join(' '), source: 'runs' };
}

/**
 * The PDF's text as a word set and as one compact string (lower-cased, whitespace removed). A reference word
 * counts as found when it is a PDF word or appears in the compact text: pdftotext glues footnote marks to
 * the word before them ("ouch1") and splits words that wrap inside narrow table cells ("col1heade r").
 */
function pdfTextIndex(pages: string[]) {
  const text = pages.join('\n').replace(/-\n\s*/g, '');
  const set = new Set(words(text));
  const compact = text.normalize('NFKC').toLowerCase().replace(/\s+/g, '');
  return { has: (w: string) => set.has(w) || compact.includes(w), words: set };
}

interface FileResult {
  file: string;
  ok: boolean;
  error?: string;
  pages?: number;
  recall?: number;
  refWords?: number;
  missing?: string[];
  source?: string;
  millis?: number;
}

let pool: OfficePool;
const results = new Map<string, FileResult>();
const pdfs = new Map<string, string[]>();
const layoutPdfs = new Map<string, string[]>();

beforeAll(async () => {
  pool = new OfficePool({ workers: 1, queueSize: 16, timeoutMs: 120_000 });
  await pool.start();
});
afterAll(async () => {
  await pool?.close();
  fs.rmSync(filterDir, { recursive: true, force: true });
});

describe('DOCX corpus fidelity', () => {
  it('converts every valid file and finds its words in the PDF', async () => {
    for (const f of valid) {
      const path = `${CORPUS_DOCX}/${f}`;
      const started = performance.now();
      let pdf: Uint8Array;
      try {
        pdf = await pool.docxToPdf(new Uint8Array(fs.readFileSync(path)));
      } catch (e) {
        results.set(f, { file: f, ok: false, error: e instanceof FolioError ? `${e.code}: ${e.message}` : String(e) });
        continue;
      }
      const millis = performance.now() - started;
      const pages = pdfPages(pdf, 'reading');
      pdfs.set(f, pages);
      layoutPdfs.set(f, pdfPages(pdf, 'layout'));
      const ref = referenceText(path);
      const refWords = new Set(words(ref.text));
      const got = pdfTextIndex(pages);
      const missing = [...refWords].filter((w) => !got.has(w));
      results.set(f, {
        file: f,
        ok: true,
        pages: pages.length,
        refWords: refWords.size,
        recall: refWords.size === 0 ? 1 : 1 - missing.length / refWords.size,
        missing: missing.slice(0, 12),
        source: ref.source,
        millis,
      });
    }
    const all = [...results.values()];
    const converted = all.filter((r) => r.ok);
    const totalRef = converted.reduce((s, r) => s + (r.refWords ?? 0), 0);
    const totalFound = converted.reduce((s, r) => s + (r.refWords ?? 0) * (r.recall ?? 0), 0);
    const lowest = [...converted].sort((a, b) => (a.recall ?? 0) - (b.recall ?? 0)).slice(0, 8);
    const times = converted.map((r) => r.millis ?? 0).sort((a, b) => a - b);
    console.log(
      [
        `corpus: ${converted.length}/${valid.length} valid files converted (${files.length} files, ${BROKEN_CORPUS_FILES.length} broken by design)`,
        `word recall (unique words of the document text found in the PDF): corpus-wide ${((totalFound / totalRef) * 100).toFixed(2)}% of ${totalRef} words; ` +
          `files at 100%: ${converted.filter((r) => r.recall === 1).length}; below ${MIN_RECALL * 100}%: ${converted.filter((r) => (r.recall ?? 0) < MIN_RECALL).length}`,
        `reference text: pandoc for ${converted.filter((r) => r.source === 'pandoc').length} files, w:t runs for ${converted.filter((r) => r.source === 'runs').length}`,
        `conversion time per file: median ${times[Math.floor(times.length / 2)]?.toFixed(0)} ms, total ${(times.reduce((a, b) => a + b, 0) / 1000).toFixed(1)} s; slowest: ` +
          [...converted]
            .sort((a, b) => (b.millis ?? 0) - (a.millis ?? 0))
            .slice(0, 4)
            .map((r) => `${r.file} ${((r.millis ?? 0) / 1000).toFixed(1)} s`)
            .join(', '),
        'lowest recall:',
        ...lowest.map(
          (r) => `  ${r.file}: ${((r.recall ?? 0) * 100).toFixed(1)}% of ${r.refWords} (missing e.g. ${r.missing?.slice(0, 6).join(', ')})`,
        ),
        ...all.filter((r) => !r.ok).map((r) => `  FAILED ${r.file}: ${r.error}`),
      ].join('\n'),
    );
    expect(all.filter((r) => !r.ok).map((r) => `${r.file}: ${r.error}`)).toEqual([]);
    for (const r of converted) {
      if (LOW_RECALL_EXPECTED[r.file]) continue;
      expect(r.recall, `${r.file} misses ${r.missing?.join(', ')}`).toBeGreaterThanOrEqual(MIN_RECALL);
    }
    expect(totalFound / totalRef).toBeGreaterThanOrEqual(0.97);
    expect(pool.status().status).toBe('healthy');
  }, 900_000);

  it('header and footer text appears on every page (single-section files with a default header or footer, no odd/even)', () => {
    let files = 0;
    let pagesChecked = 0;
    const failures: string[] = [];
    for (const f of valid) {
      const pages = pdfs.get(f);
      if (!pages) continue;
      const parts = unzipSync(new Uint8Array(fs.readFileSync(`${CORPUS_DOCX}/${f}`)), {
        filter: (e) => /^word\/[^/]+\.xml$/.test(e.name) || e.name === 'word/_rels/document.xml.rels',
      });
      const part = (n: string) => (parts[n] ? strFromU8(parts[n]!) : '');
      const doc = part('word/document.xml');
      // One section, same header on every page: no different first page, no odd/even headers.
      if ((doc.match(/<w:sectPr[\s>]/g) ?? []).length !== 1) continue;
      if (/<w:evenAndOddHeaders(?![^>]*w:val="(0|false|off)")/.test(part('word/settings.xml'))) continue;
      // A different first page uses the "first" header there: check the default one from page 2 on.
      const firstPage = /<w:titlePg(?![^>]*w:val="(0|false|off)")/.test(doc) ? 1 : 0;
      const rels = new Map(
        [...part('word/_rels/document.xml.rels').matchAll(/<Relationship\b[^>]*>/g)].map((m) => [
          /Id="([^"]+)"/.exec(m[0])?.[1],
          /Target="([^"]+)"/.exec(m[0])?.[1],
        ]),
      );
      let checkedHere = false;
      for (const kind of ['header', 'footer']) {
        const ref = [...doc.matchAll(new RegExp(`<w:${kind}Reference\\b[^>]*>`, 'g'))].map((m) => m[0]).find((r) => /w:type="default"/.test(r));
        const target = ref && rels.get(/r:id="([^"]+)"/.exec(ref)?.[1]);
        const xml = target ? part(`word/${target.replace(/^\/?word\//, '')}`) : '';
        // Static text only: content controls and hidden runs can legitimately render differently, and a
        // field's stored result (STYLEREF, DATE, …) is recomputed at layout.
        if (!xml || /<w:(sdt|vanish)[\s>/]/.test(xml)) continue;
        const staticXml = xml
          .replace(/<w:fldSimple\b[\s\S]*?<\/w:fldSimple>/g, '')
          .replace(/<w:fldChar[^>]*w:fldCharType="separate"[^>]*\/>[\s\S]*?<w:fldChar[^>]*w:fldCharType="end"[^>]*\/>/g, '');
        const expected = [...new Set(words([...staticXml.matchAll(/<w:t(?:\s[^>]*)?>([^<]*)<\/w:t>/g)].map((m) => m[1]).join(' ')))].filter((w) =>
          /^\p{L}{3,}$/u.test(w),
        );
        if (expected.length === 0) continue;
        checkedHere = true;
        pages.forEach((page, i) => {
          if (i < firstPage) return;
          const compact = page.normalize('NFKC').toLowerCase().replace(/\s+/g, '');
          const missing = expected.filter((w) => !compact.includes(w));
          if (missing.length) failures.push(`${f} page ${i + 1}/${pages.length}: ${kind} misses ${missing.slice(0, 4).join(', ')}`);
        });
      }
      if (checkedHere) {
        files++;
        pagesChecked += pages.length - firstPage;
      }
    }
    console.log(`headers/footers: ${files} corpus files, ${pagesChecked} pages checked`);
    expect(failures).toEqual([]);
    expect(files).toBeGreaterThanOrEqual(6);
  });

  it('a table spanning pages repeats its marked header row on every page it is on', () => {
    let tables = 0;
    let pagesChecked = 0;
    const failures: string[] = [];
    const compact = (t: string) => t.normalize('NFKC').toLowerCase().replace(/\s+/g, '');
    const rowText = (xml: string) => [...xml.matchAll(/<w:t(?:\s[^>]*)?>([^<]*)<\/w:t>/g)].map((m) => m[1]).join(' ');
    for (const f of valid) {
      const pages = pdfs.get(f);
      if (!pages || pages.length < 2) continue;
      const doc = strFromU8(
        unzipSync(new Uint8Array(fs.readFileSync(`${CORPUS_DOCX}/${f}`)), { filter: (e) => e.name === 'word/document.xml' })['word/document.xml'] ??
          new Uint8Array(),
      );
      if (!/<w:tblHeader(?![^>]*w:val="(0|false|off)")/.test(doc)) continue;
      const pageTexts = pages.map(compact);
      // Tables without nested tables: their rows are the w:tr between <w:tbl> and </w:tbl>.
      for (const tbl of doc.match(/<w:tbl>(?:(?!<w:tbl>)[\s\S])*?<\/w:tbl>/g) ?? []) {
        const rows = tbl.match(/<w:tr[\s>][\s\S]*?<\/w:tr>/g) ?? [];
        const headerRows = rows.filter((r) => /<w:tblHeader(?![^>]*w:val="(0|false|off)")/.test(r));
        const headerWords = [...new Set(words(headerRows.map(rowText).join(' ')))].filter((w) => /^\p{L}{3,}$/u.test(w));
        if (headerRows.length === 0 || headerWords.length === 0) continue;
        // Pages showing a body row, recognised by its text (long enough to be distinctive and found once in the PDF).
        const bodyTexts = rows
          .filter((r) => !headerRows.includes(r))
          .map((r) => compact(rowText(r)))
          .filter((t) => t.length >= 12);
        const onPages = new Set<number>();
        for (const t of bodyTexts) {
          const hits = pageTexts.flatMap((p, i) => (p.includes(t) ? [i] : []));
          if (hits.length === 1) onPages.add(hits[0]!);
        }
        if (onPages.size < 2) continue; // not spanning pages
        tables++;
        for (const i of onPages) {
          pagesChecked++;
          const missing = headerWords.filter((w) => !pageTexts[i]!.includes(w));
          if (missing.length) failures.push(`${f} page ${i + 1}: header row misses ${missing.slice(0, 4).join(', ')}`);
        }
      }
    }
    console.log(`repeated table headers: ${tables} corpus tables spanning pages, ${pagesChecked} pages checked`);
    expect(failures).toEqual([]);
    expect(tables).toBeGreaterThanOrEqual(2);
  });

  it('numbered lists show their number at each nesting level', () => {
    const FORMATS: Record<string, string> = {
      decimal: '\\d+',
      lowerLetter: '[a-z]+',
      upperLetter: '[A-Z]+',
      lowerRoman: '[ivxlcdm]+',
      upperRoman: '[IVXLCDM]+',
      decimalZero: '0?\\d+',
    };
    const escape = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    let levelsChecked = 0;
    let filesChecked = 0;
    const failures: string[] = [];
    for (const f of valid) {
      const lines = layoutPdfs.get(f)?.join('\n').split('\n');
      if (!lines) continue;
      const parts = unzipSync(new Uint8Array(fs.readFileSync(`${CORPUS_DOCX}/${f}`)), {
        filter: (e) => e.name === 'word/document.xml' || e.name === 'word/numbering.xml',
      });
      const numbering = parts['word/numbering.xml'] ? strFromU8(parts['word/numbering.xml']) : '';
      if (!numbering) continue;
      const doc = strFromU8(parts['word/document.xml'] ?? new Uint8Array());
      const abstractOf = new Map(
        [...numbering.matchAll(/<w:num w:numId="(\d+)"[^>]*>\s*<w:abstractNumId w:val="(\d+)"/g)].map((m) => [m[1]!, m[2]!]),
      );
      const levelDef = (numId: string, ilvl: number) => {
        const abs = new RegExp(`<w:abstractNum\\b[^>]*w:abstractNumId="${abstractOf.get(numId)}"[^>]*>([\\s\\S]*?)</w:abstractNum>`).exec(
          numbering,
        )?.[1];
        const lvl = abs && new RegExp(`<w:lvl\\b[^>]*w:ilvl="${ilvl}"[^>]*>([\\s\\S]*?)</w:lvl>`).exec(abs)?.[1];
        if (!lvl) return undefined;
        return { fmt: /<w:numFmt w:val="([^"]+)"/.exec(lvl)?.[1], text: /<w:lvlText w:val="([^"]*)"/.exec(lvl)?.[1] };
      };
      // level key → did some paragraph of it show "<marker> <its first word>" on one PDF line?
      const levels = new Map<string, boolean>();
      for (const para of doc.match(/<w:p[\s>][\s\S]*?<\/w:p>/g) ?? []) {
        const numPr = /<w:numPr>([\s\S]*?)<\/w:numPr>/.exec(para)?.[1];
        const numId = numPr && /<w:numId w:val="(\d+)"/.exec(numPr)?.[1];
        if (!numId || numId === '0' || /<w:(ins|del)\b/.test(para)) continue;
        const ilvl = Number(/<w:ilvl w:val="(\d+)"/.exec(numPr!)?.[1] ?? 0);
        const def = levelDef(numId, ilvl);
        if (!def?.fmt || !def.text || !FORMATS[def.fmt]) continue;
        const first = words([...para.matchAll(/<w:t(?:\s[^>]*)?>([^<]*)<\/w:t>/g)].map((m) => m[1]).join(' ')).find((w) => /^\p{L}{2,}$/u.test(w));
        if (!first) continue;
        const marker = def.text
          .split(/(%\d)/)
          .map((piece) => (/^%\d$/.test(piece) ? (Number(piece[1]) === ilvl + 1 ? FORMATS[def.fmt!] : '[\\dA-Za-z]+') : escape(piece)))
          .join('');
        const re = new RegExp(`(^|\\s)${marker}\\s+.*?${escape(first)}`, 'iu');
        const key = `${numId}/${ilvl}`;
        levels.set(key, levels.get(key) === true || lines.some((l) => re.test(l.toLowerCase())));
      }
      const byLevel = new Map<number, boolean>();
      for (const [key, ok] of levels) {
        const ilvl = Number(key.split('/')[1]);
        byLevel.set(ilvl, byLevel.get(ilvl) === true || ok);
      }
      if (byLevel.size < 2) continue; // only nested lists
      filesChecked++;
      for (const [ilvl, ok] of byLevel) {
        levelsChecked++;
        if (!ok) failures.push(`${f}: no numbered item of level ${ilvl} shows its number`);
      }
    }
    console.log(`nested numbering: ${filesChecked} corpus files with numbered lists of 2+ levels, ${levelsChecked} levels checked`);
    expect(failures).toEqual([]);
    expect(filesChecked).toBeGreaterThanOrEqual(2);
  });

  it('tracked changes: markup shows inserted and deleted words, accept only the inserted, reject only the deleted', async () => {
    const withChanges = valid.filter((f) =>
      /<w:(ins|del) /.test(
        strFromU8(
          unzipSync(new Uint8Array(fs.readFileSync(`${CORPUS_DOCX}/${f}`)), { filter: (e) => e.name === 'word/document.xml' })['word/document.xml'] ??
            new Uint8Array(),
        ),
      ),
    );
    expect(withChanges.length).toBeGreaterThanOrEqual(6);
    let insertedOnly = 0;
    let deletedOnly = 0;
    for (const f of withChanges) {
      const file = `${CORPUS_DOCX}/${f}`;
      const acceptedRef = new Set(words(referenceText(file, 'accept').text));
      const rejectedRef = new Set(words(referenceText(file, 'reject').text));
      const ins = [...acceptedRef].filter((w) => !rejectedRef.has(w));
      const del = [...rejectedRef].filter((w) => !acceptedRef.has(w));
      insertedOnly += ins.length;
      deletedOnly += del.length;
      const bytes = new Uint8Array(fs.readFileSync(file));
      const markup = pdfTextIndex(pdfPages(await pool.docxToPdf(bytes), 'reading'));
      const accepted = pdfTextIndex(pdfPages(await pool.docxToPdf(bytes, { trackedChanges: 'accept' }), 'reading'));
      const rejected = pdfTextIndex(pdfPages(await pool.docxToPdf(bytes, { trackedChanges: 'reject' }), 'reading'));
      for (const w of [...ins, ...del]) expect(markup.has(w), `${f}: markup shows "${w}"`).toBe(true);
      for (const w of ins) {
        expect(accepted.has(w), `${f}: accept shows inserted "${w}"`).toBe(true);
        expect(rejected.words.has(w), `${f}: reject hides inserted "${w}"`).toBe(false);
      }
      for (const w of del) {
        expect(rejected.has(w), `${f}: reject shows deleted "${w}"`).toBe(true);
        expect(accepted.words.has(w), `${f}: accept hides deleted "${w}"`).toBe(false);
      }
    }
    console.log(
      `tracked changes: ${withChanges.length} corpus files, ${insertedOnly} insertion-only and ${deletedOnly} deletion-only words checked in markup/accept/reject`,
    );
    expect(insertedOnly).toBeGreaterThan(10);
    expect(deletedOnly).toBeGreaterThan(3);
  }, 300_000);

  it('the broken files get a 4xx', async () => {
    for (const f of BROKEN_CORPUS_FILES) {
      const e = await pool.docxToPdf(new Uint8Array(fs.readFileSync(`${CORPUS_DOCX}/${f}`))).then(
        () => undefined,
        (err: unknown) => err as FolioError,
      );
      expect(e, f).toBeInstanceOf(FolioError);
      expect(e!.status, f).toBeGreaterThanOrEqual(400);
      expect(e!.status, f).toBeLessThan(500);
    }
  });
});
