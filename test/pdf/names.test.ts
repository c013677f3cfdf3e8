/**
 * pdf-lib's name interning made weak (src/pdf/names.ts): identity holds as pdf-lib needs it, and the names of
 * a document opened for authoring do not stay in an engine thread's heap after the document is gone. The memory
 * case runs in a child Node with --expose-gc (a full collection is the only way to see what is still held).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PDFName } from '../../src/pdf/index.js';
import { internNamesWeakly } from '../../src/pdf/names.js';

describe('weak name interning', () => {
  it("finds pdf-lib's map (a pdf-lib that works differently fails here, not in production)", () => {
    expect(internNamesWeakly()).toBe(true);
  });

  it('keeps identity: pdf-lib constants, new names, and escaped spellings of the same name', () => {
    expect(PDFName.of('Length')).toBe(PDFName.Length);
    const fresh = `FolioTest${Date.now()}`;
    const a = PDFName.of(fresh);
    expect(PDFName.of(fresh)).toBe(a);
    expect(PDFName.of(`${fresh}#20X`)).toBe(PDFName.of(`${fresh} X`));
    expect(PDFName.of(`${fresh}#20X`).asString()).toBe(`/${fresh}#20X`);
  });

  it("lets a document's names go once the document is gone", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-names-'));
    const script = path.join(dir, 'names.mts');
    const pdfIndex = path.resolve('src/pdf/index.ts');
    fs.writeFileSync(
      script,
      `import { openForAuthoring } from ${JSON.stringify(pdfIndex)};
function pdfWith(body: string): Uint8Array {
  const objects = ['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Extra 4 0 R >>', body];
  let out = '%PDF-1.7\\n'; const offsets: number[] = [];
  objects.forEach((o, i) => { offsets.push(Buffer.byteLength(out, 'latin1')); out += (i + 1) + ' 0 obj\\n' + o + '\\nendobj\\n'; });
  const xref = Buffer.byteLength(out, 'latin1');
  out += 'xref\\n0 ' + (objects.length + 1) + '\\n0000000000 65535 f \\n';
  for (const off of offsets) out += String(off).padStart(10, '0') + ' 00000 n \\n';
  out += 'trailer\\n<< /Size ' + (objects.length + 1) + ' /Root 1 0 R >>\\nstartxref\\n' + xref + '\\n%%EOF\\n';
  return new Uint8Array(Buffer.from(out, 'latin1'));
}
const gc = (globalThis as { gc: () => void }).gc;
const heaps: number[] = [];
for (let round = 0; round < 4; round++) {
  const names = Array.from({ length: 100_000 }, (_, i) => '/N' + round + 'x' + i.toString(36) + 'a'.repeat(32)).join(' ');
  await openForAuthoring(pdfWith('[' + names + ']'), { maxObjects: 1000, purpose: 'testing' });
  gc(); await new Promise((r) => setTimeout(r, 20)); gc();
  heaps.push(process.memoryUsage().heapUsed);
}
console.log(JSON.stringify(heaps));
`,
    );
    const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', script], { encoding: 'utf8', timeout: 120_000 });
    fs.rmSync(dir, { recursive: true, force: true });
    expect(r.status, r.stderr).toBe(0);
    const heaps = JSON.parse(r.stdout.trim().split('\n').pop()!) as number[];
    // Strongly interned, each round's 100,000 names stayed: ~120 MB more heap per round.
    expect(heaps[3]! - heaps[0]!).toBeLessThan(30 * 1024 * 1024);
  });
});
