/**
 * Issue 26 benchmark: what the sign engine itself costs per PAdES level (no HTTP, no thread hop), for a
 * 100-page PDF and the same with a 20 MB stream (a scan's weight), where reading or copying the whole
 * document shows. `signDocument` in this process with the generated identity and the test suite's TSA;
 * process CPU (user + system, the TSA's share included) and wall time per signature, median of 7 after
 * 2 warm-up runs. On a shared machine the CPU figure is the steadier one.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { PDFDocument, StandardFonts } from '@cantoo/pdf-lib';
import { loadConfig } from '../src/modules/config.js';
import { loadSigningIdentity, signDocument } from '../src/sign/index.js';
import { startTestTsa } from '../test/sign/tsa-server.js';

async function pdfOf(pages: number, streamMb: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 0; i < pages; i++) doc.addPage([595, 842]).drawText(`Page ${i + 1}`, { x: 40, y: 780, size: 14, font });
  if (streamMb > 0) doc.context.register(doc.context.stream(crypto.randomBytes(streamMb * 1024 * 1024)));
  return doc.save({ useObjectStreams: false });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-bench-sign-engine-'));
const identity = await loadSigningIdentity(loadConfig({ DATA_DIR: dir }), pino({ level: 'silent' }));
const tsa = await startTestTsa(dir);
console.log(
  `signDocument in-process, generated identity, audit page on, local test TSA; ${os.cpus().length} CPUs, load ${os.loadavg()[0]!.toFixed(2)}`,
);
try {
  for (const [name, pdf] of [
    ['100 pages', await pdfOf(100, 0)],
    ['100 pages + 20 MB stream', await pdfOf(100, 20)],
  ] as const) {
    for (const level of ['B-B', 'B-LT', 'B-LTA'] as const) {
      const cpu: number[] = [];
      const wall: number[] = [];
      for (let i = 0; i < 9; i++) {
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        await signDocument(
          {
            document: pdf,
            signer: { name: 'Ada Lovelace', email: 'ada@example.com' },
            auditTrail: [{ type: 'document.signed', timestamp: new Date('2026-11-20T09:15:00Z') }],
            level: { level, asked: true },
          },
          { identity, tsaUrl: tsa.url },
        );
        const c = process.cpuUsage(c0);
        if (i < 2) continue;
        cpu.push((c.user + c.system) / 1000);
        wall.push(performance.now() - t0);
      }
      console.log(
        `${`${name} ${level}`.padEnd(32)} CPU ${median(cpu).toFixed(1).padStart(6)} ms   wall ${median(wall).toFixed(1).padStart(6)} ms   ` +
          `(${(pdf.length / 1048576).toFixed(1)} MB, 7 signatures)`,
      );
    }
  }
} finally {
  await tsa.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
