/**
 * Folio's DOCX → Markdown/HTML against pandoc's on every readable corpus file, scored kind by kind against the
 * DOCX's own reference (docx-export-reference.ts, docx-export-measure.ts), and the report tables. Used by
 * test/convert/docx-export-corpus.test.ts and scripts/docx-export-vs-pandoc.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { docxToHtml, docxToMarkdown } from '../../src/convert/index.js';
import { docxReference } from './docx-export-reference.js';
import {
  addScore,
  corpusFiles,
  CORPUS_DOCX,
  emptyScore,
  KINDS,
  mapLimit,
  measureHtml,
  measureMarkdown,
  pandocExport,
  pct,
  score,
  type Kind,
  type Score,
} from './docx-export-measure.js';

export type Format = 'md' | 'html';
export type Side = 'folio' | 'pandoc';
export const FORMATS: readonly Format[] = ['md', 'html'];

export interface FileResult {
  file: string;
  /** The reference could not be read (the file is then left out of every total). */
  error?: string;
  /** An exporter failed on the file: it scores nothing there. */
  failed: Partial<Record<`${Side}-${Format}`, string>>;
  scores: Record<Format, Record<Side, Score>>;
}

/** Runs both exporters over the corpus (pandoc two processes at a time, Folio in this process). */
export async function compareCorpus(files: readonly string[] = corpusFiles()): Promise<FileResult[]> {
  return mapLimit(files, 2, async (file) => {
    const full = path.join(CORPUS_DOCX, file);
    const bytes = new Uint8Array(fs.readFileSync(full));
    const result: FileResult = {
      file,
      failed: {},
      scores: { md: { folio: emptyScore(), pandoc: emptyScore() }, html: { folio: emptyScore(), pandoc: emptyScore() } },
    };
    let ref;
    await new Promise((resolve) => setImmediate(resolve));
    try {
      ref = docxReference(bytes);
    } catch (e) {
      result.error = (e as Error).message;
      return result;
    }
    const folio: Record<Format, () => string> = {
      md: () => docxToMarkdown(bytes).markdown,
      html: () => docxToHtml(bytes).html,
    };
    for (const format of FORMATS) {
      // With pandoc's outputs cached nothing here waits on I/O: give the event loop a turn between the
      // synchronous steps, or a test runner's messages to this process time out over the whole corpus.
      await new Promise((resolve) => setImmediate(resolve));
      const measure = format === 'md' ? measureMarkdown : measureHtml;
      try {
        result.scores[format].folio = score(ref, measure(folio[format]()));
      } catch (e) {
        result.failed[`folio-${format}`] = (e as Error).message;
        result.scores[format].folio = score(ref, measure(''));
      }
      await new Promise((resolve) => setImmediate(resolve));
      const theirs = await pandocExport(full, format);
      if (theirs === undefined) result.failed[`pandoc-${format}`] = 'pandoc failed';
      result.scores[format].pandoc = score(ref, measure(theirs ?? ''));
    }
    return result;
  });
}

export function total(results: readonly FileResult[], format: Format, side: Side): Score {
  const t = emptyScore();
  for (const r of results) if (!r.error) addScore(t, r.scores[format][side]);
  return t;
}

const LABEL: Record<Kind, string> = {
  words: 'text recall (words)',
  headings: 'headings (level + text)',
  items: 'list items (kind + depth)',
  tables: 'tables',
  shapes: 'table shapes (rows×cols)',
  strong: 'bold words',
  em: 'italic words',
  strike: 'struck words',
  links: 'links (href)',
  notes: 'foot/endnote refs',
};

const f1 = (x: number) => x.toFixed(1).padStart(6);

/** The totals table: per kind, the reference count and each export's matched share (and its extras). */
export function totalsTable(results: readonly FileResult[]): string {
  const lines = [
    `${'kind'.padEnd(26)}${'ref'.padStart(8)}   ${['Folio md', 'pandoc md', 'Folio html', 'pandoc html'].map((h) => h.padStart(17)).join('')}`,
  ];
  for (const k of KINDS) {
    const cells = FORMATS.flatMap((f) => (['folio', 'pandoc'] as const).map((s) => total(results, f, s)[k]));
    lines.push(
      `${LABEL[k].padEnd(26)}${String(cells[0]!.ref).padStart(8)}   ${cells.map((m) => `${f1(pct(m))}% (+${m.out - m.matched})`.padStart(17)).join('')}`,
    );
  }
  lines.push('(+n: found in the export beyond the reference; a word is matched at most as often as the DOCX has it)');
  return lines.join('\n');
}

/** Per file: word recall of each export and the kinds where Folio keeps less than the reference has. */
export function perFileTable(results: readonly FileResult[]): string {
  const lines = [
    `${'file'.padEnd(58)}${'words'.padStart(7)} ${['F md', 'P md', 'F html', 'P html'].map((h) => h.padStart(7)).join('')}  Folio md below the DOCX`,
  ];
  for (const r of results) {
    if (r.error) {
      lines.push(`${r.file.padEnd(58)} reference unreadable: ${r.error}`);
      continue;
    }
    const s = r.scores;
    const lost = KINDS.filter((k) => k !== 'words' && s.md.folio[k].matched < s.md.folio[k].ref)
      .map((k) => `${k} ${s.md.folio[k].matched}/${s.md.folio[k].ref} (pandoc ${s.md.pandoc[k].matched})`)
      .join(', ');
    const failed = Object.keys(r.failed).length
      ? ` FAILED: ${Object.entries(r.failed)
          .map(([k, v]) => `${k}: ${v}`)
          .join('; ')}`
      : '';
    lines.push(
      `${r.file.padEnd(58)}${String(s.md.folio.words.ref).padStart(7)} ${[s.md.folio, s.md.pandoc, s.html.folio, s.html.pandoc].map((x) => f1(pct(x.words))).join(' ')}  ${lost}${failed}`,
    );
  }
  return lines.join('\n');
}

/** For the exporter's author: per format and kind, the files where Folio keeps less than pandoc, worst first. */
export function findings(results: readonly FileResult[]): string {
  const out: string[] = [];
  for (const format of FORMATS) {
    out.push(`## docx→${format}: where Folio keeps less than pandoc`, '');
    for (const k of KINDS) {
      const rows = results
        .filter((r) => !r.error)
        .map((r) => ({ file: r.file, f: r.scores[format].folio[k], p: r.scores[format].pandoc[k] }))
        .filter((x) => x.f.matched < x.p.matched)
        .sort((a, b) => b.p.matched - b.f.matched - (a.p.matched - a.f.matched));
      if (!rows.length) continue;
      out.push(`### ${LABEL[k]}`, '');
      for (const x of rows)
        out.push(`- ${x.file}: Folio ${x.f.matched}/${x.f.ref} (found ${x.f.out}), pandoc ${x.p.matched}/${x.p.ref} (found ${x.p.out})`);
      out.push('');
    }
    const failed = results.filter((r) => r.failed[`folio-${format}`]);
    if (failed.length) out.push('### Folio failed', '', ...failed.map((r) => `- ${r.file}: ${r.failed[`folio-${format}`]}`), '');
  }
  return out.join('\n');
}
