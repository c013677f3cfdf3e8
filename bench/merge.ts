/**
 * POST /v1/merge's engine (src/merge, in process, no HTTP) against `qpdf --empty --pages … --` (process start
 * included, as a caller would run it), in one run on the same inputs: 20 five-page PDFs with text and an
 * embedded standard font. Runs are interleaved so both see the same load on a shared machine. Folio also
 * writes an outline entry per input and page labels (on by default); the figure without them is printed too.
 * Issue 17's goal: ≤ 1.2× qpdf for PDFs. (The DOCX half of the issue's benchmark, 10 DOCX through LibreOffice,
 * is dominated by the office conversion, which is measured by bench/office.ts.)
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PDFDocument, StandardFonts } from '@cantoo/pdf-lib';
import { mergePdfs } from '../src/merge/engine.js';

const INPUTS = 20;
const PAGES = 5;
const RUNS = Number(process.env.MERGE_BENCH_RUNS ?? 9);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function fivePages(n: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.TimesRoman);
  for (let p = 1; p <= PAGES; p++) {
    const page = doc.addPage([595.28, 841.89]);
    for (let line = 0; line < 45; line++) {
      page.drawText(`Document ${n}, page ${p}, line ${line + 1}: the quick brown fox jumps over the lazy dog.`, {
        x: 50,
        y: 790 - line * 16,
        size: 11,
        font,
      });
    }
  }
  return doc.save();
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-bench-merge-'));
try {
  const pdfs = await Promise.all(Array.from({ length: INPUTS }, (_, i) => fivePages(i + 1)));
  const files = pdfs.map((bytes, i) => {
    const file = path.join(tmp, `in${i + 1}.pdf`);
    fs.writeFileSync(file, bytes);
    return file;
  });
  const inputs = pdfs.map((pdf, i) => ({ pdf, fileName: `in${i + 1}.pdf` }));
  const out = path.join(tmp, 'qpdf-out.pdf');
  const qpdf = () => execFileSync('qpdf', ['--empty', '--pages', ...files, '--', out]);
  const folio = (on: boolean) => mergePdfs(inputs, { outline: on, pageLabels: on });

  for (let i = 0; i < 3; i++) {
    await folio(true); // warm-up (JIT)
    qpdf();
  }
  const t = { folio: [] as number[], bare: [] as number[], qpdf: [] as number[] };
  let folioBytes = 0;
  for (let i = 0; i < RUNS; i++) {
    let s = performance.now();
    folioBytes = (await folio(true)).pdf.length;
    t.folio.push(performance.now() - s);
    s = performance.now();
    await folio(false);
    t.bare.push(performance.now() - s);
    s = performance.now();
    qpdf();
    t.qpdf.push(performance.now() - s);
  }
  const inBytes = pdfs.reduce((n, p) => n + p.length, 0);
  const q = median(t.qpdf);
  console.log(`merge: ${INPUTS} PDFs × ${PAGES} pages (${(inBytes / 1024).toFixed(0)} KB in), median of ${RUNS} interleaved runs`);
  console.log(
    `  Folio engine, outline + page labels: ${median(t.folio).toFixed(1)} ms (${(median(t.folio) / q).toFixed(2)}× qpdf), ${(folioBytes / 1024).toFixed(0)} KB out`,
  );
  console.log(`  Folio engine, no outline or labels:  ${median(t.bare).toFixed(1)} ms (${(median(t.bare) / q).toFixed(2)}× qpdf)`);
  console.log(`  qpdf --empty --pages … -- (process): ${q.toFixed(1)} ms, ${(fs.statSync(out).size / 1024).toFixed(0)} KB out`);
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
