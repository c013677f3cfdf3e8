/**
 * POST /v1/verify's engine against poppler's `pdfsig -nocert` (process start included, as a caller would run
 * it), in one run on the same files: a 1-signature 1-page PDF, a 3-signature 100-page PDF, and files/s over
 * the 24 files of the attack corpus. Folio does the full revision diff and DocMDP analysis pdfsig does not.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { X509Certificate } from 'node:crypto';
import { verifyPdf } from '../src/verify/index.js';
import { CORPUS, makePdf, makePki, signPdf } from '../test/verify/fixtures.js';

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

const pki = makePki();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-bench-verify-'));
try {
  const trust = { anchors: [new X509Certificate(pki.caPem)], service: [] };
  const one = signPdf(await makePdf(1), { signer: pki.rsa });
  let three = await makePdf(100, 'Benchmark contract');
  three = signPdf(three, { signer: pki.rsa, fieldName: 'First' });
  three = signPdf(three, { signer: pki.ec, fieldName: 'Second' });
  three = signPdf(three, { signer: pki.rsa, fieldName: 'Third', digest: 'sha384' });
  const files: Array<{ name: string; bytes: Uint8Array; file: string }> = [
    { name: '1 signature, 1 page', bytes: one, file: path.join(tmp, 'one.pdf') },
    { name: '3 signatures, 100 pages', bytes: three, file: path.join(tmp, 'three.pdf') },
  ];
  for (const f of files) fs.writeFileSync(f.file, f.bytes);

  const folioTime = (bytes: Uint8Array, runs: number) => {
    for (let i = 0; i < 5; i++) verifyPdf(bytes, { trust }); // warm-up (JIT)
    const xs: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      const r = verifyPdf(bytes, { trust });
      xs.push(performance.now() - t);
      if (!r.valid) throw new Error('benchmark fixture did not verify');
    }
    return median(xs);
  };
  const pdfsigOnce = (file: string) => {
    try {
      execFileSync('pdfsig', ['-nocert', file], { stdio: 'ignore' });
    } catch {
      // pdfsig exits non-zero for some corpus files; the time still counts.
    }
  };
  const pdfsigTime = (file: string, runs: number) => {
    const xs: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      pdfsigOnce(file);
      xs.push(performance.now() - t);
    }
    return median(xs);
  };

  console.log('verify (median ms per file; Folio in-process with full modification analysis, pdfsig -nocert as a process)');
  console.log('file                       |   bytes | folio ms | pdfsig ms | speed-up');
  for (const f of files) {
    const folio = folioTime(f.bytes, 30);
    const pop = pdfsigTime(f.file, 15);
    console.log(`${f.name.padEnd(26)} | ${String(f.bytes.length).padStart(7)} | ${folio.toFixed(2).padStart(8)} | ${pop.toFixed(2).padStart(9)} | ${(pop / folio).toFixed(1)}×`);
  }

  const corpus = (fs.readdirSync(CORPUS, { recursive: true }) as string[]).filter((f) => f.endsWith('.pdf')).map((f) => path.join(CORPUS, f));
  const corpusBytes = corpus.map((f) => new Uint8Array(fs.readFileSync(f)));
  for (const b of corpusBytes) verifyPdf(b, { trust }); // warm-up
  const passes = 5;
  let t = performance.now();
  for (let p = 0; p < passes; p++) for (const b of corpusBytes) verifyPdf(b, { trust });
  const folioFps = (passes * corpus.length) / ((performance.now() - t) / 1000);
  t = performance.now();
  for (let p = 0; p < 2; p++) for (const f of corpus) pdfsigOnce(f);
  const popFps = (2 * corpus.length) / ((performance.now() - t) / 1000);
  console.log(`\nattack corpus (${corpus.length} files): folio ${folioFps.toFixed(1)} files/s, pdfsig -nocert ${popFps.toFixed(1)} files/s → ${(folioFps / popFps).toFixed(1)}× (goal ≥ 3×)`);
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
  pki.cleanup();
}
