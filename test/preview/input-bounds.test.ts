/**
 * Previews open their PDF through the PDF core (src/pdf's openBounded, in page-sizes.ts) before poppler runs,
 * so they get the input bounds sign and merge have: a file the reader cannot read at all, or one past its
 * bounds, is a 422 saying so without a render turn or a child process; a hostile object stream is not
 * inflated to learn the page sizes. Encryption is poppler's to judge (the page tree is not encrypted): a
 * file with an empty user password renders, one that needs a password is a 422 naming it.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { FolioError } from '../../src/errors.js';
import { pageSizes, pngDimensions, renderPdfPages, type RenderAdmission } from '../../src/preview/index.js';
import { buildPdf, simplePdf } from '../adversarial/generators.js';

const MiB = 1024 * 1024;
const CATALOG = '<< /Type /Catalog /Pages 2 0 R >>';
const PAGES = '<< /Type /Pages /Kids [3 0 R] /Count 1 >>';
const PAGE = '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 600] >>';

/** An admission that records whether a render asked for a turn (a refusal before rendering never does). */
function watchedAdmission(): RenderAdmission & { asked: number } {
  const a = {
    asked: 0,
    acquireRenderSlot: async () => {
      a.asked++;
      return () => {};
    },
  };
  return a;
}

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => new Error('expected a refusal'),
    (e: unknown) => e,
  );

/** `%PDF-1.7` and `n` bytes of noise (xorshift, reproducible). */
function noise(n: number): Buffer {
  const b = Buffer.alloc(n + 9);
  b.write('%PDF-1.7\n', 'latin1');
  let x = 0x2545f491;
  for (let i = 9; i < b.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = x & 0xff;
  }
  return b;
}

/** A tail of buildPdf: an xref stream (object `num`) with `dict` over `rows`. */
const xrefStreamTail = (num: number, dict: string, rows: Buffer) => (_offsets: number[], end: number) =>
  `${num} 0 obj\n<< /Type /XRef /Root 1 0 R ${dict} /Length ${rows.length} >>\nstream\n${rows.toString('latin1')}\nendstream\nendobj\nstartxref\n${end}\n%%EOF\n`;

/** The page's /Resources in an object stream (object 4) of ~1.5 MB that inflates to 1.5 GB of spaces. */
function objectStreamBomb(): Buffer {
  const chunk = zlib.deflateRawSync(Buffer.alloc(16 * MiB, 0x20), { level: 9, finishFlush: zlib.constants.Z_FULL_FLUSH });
  const head = zlib.deflateRawSync(Buffer.from('5 0 '), { finishFlush: zlib.constants.Z_FULL_FLUSH });
  const z = Buffer.concat([Buffer.from([0x78, 0xda]), head, ...Array<Buffer>(96).fill(chunk), Buffer.from([0x03, 0x00]), Buffer.alloc(4)]);
  return buildPdf([
    CATALOG,
    PAGES,
    PAGE.replace('>>', '/Resources 5 0 R >>'),
    Buffer.concat([
      Buffer.from(`<< /Type /ObjStm /N 1 /First 4 /Filter /FlateDecode /Length ${z.length} >>\nstream\n`, 'latin1'),
      z,
      Buffer.from('\nendstream', 'latin1'),
    ]),
  ]);
}

function expectCoreRefusal(e: unknown, message: RegExp, admission: { asked: number }): void {
  expect(e).toBeInstanceOf(FolioError);
  expect((e as FolioError).code).toBe('UNPROCESSABLE_DOCUMENT');
  expect((e as FolioError).message).toMatch(message);
  expect(admission.asked, 'poppler was started').toBe(0);
}

describe('previews: the PDF core opens the input before poppler', () => {
  it('%PDF followed by 20 MB of noise is a 422 (no document catalog) without a render', async () => {
    const admission = watchedAdmission();
    const t0 = performance.now();
    const e = await refusal(renderPdfPages(noise(20 * MiB), 'png', { width: 200, pages: [1] }, { admission }));
    expectCoreRefusal(e, /^The PDF has no readable document catalog/, admission);
    // pdftoppm spent ~2 s of CPU on these bytes before failing; the reader ~0.1 s. Generous for a loaded machine.
    expect(performance.now() - t0).toBeLessThan(10_000);
  }, 30_000);

  it("more cross-reference entries than the reader reads is the reader's 422, without a render", async () => {
    const admission = watchedAdmission();
    const rows = zlib.deflateSync(Buffer.alloc(1_200_000));
    const pdf = buildPdf([CATALOG, PAGES, PAGE], { tail: xrefStreamTail(4, '/Size 1200000 /W [0 1 0] /Filter /FlateDecode', rows) });
    const e = await refusal(renderPdfPages(pdf, 'png', { width: 200, pages: [1] }, { admission }));
    expectCoreRefusal(e, /cross-reference entries than Folio reads/, admission);
  });

  it('a trailer /Size past what a PDF may number is a 422 before poppler', async () => {
    const admission = watchedAdmission();
    const pdf = buildPdf([CATALOG, PAGES, PAGE], { tail: xrefStreamTail(4, '/Size 20000000 /W [4 4 4] /Index [0 20000000]', Buffer.alloc(300)) });
    const e = await refusal(renderPdfPages(pdf, 'png', { width: 200, pages: [1] }, { admission }));
    expectCoreRefusal(e, /\/Size 20000000, beyond the PDF limit/, admission);
  });

  it('a 1.5 GB object-stream bomb is not inflated to read the page sizes', () => {
    const pdf = objectStreamBomb();
    expect(pdf.length).toBeLessThan(2 * MiB);
    const before = process.resourceUsage().maxRSS * 1024;
    expect(pageSizes(pdf, [1])).toEqual([{ width: 300, height: 600 }]);
    expect(process.resourceUsage().maxRSS * 1024 - before).toBeLessThan(256 * MiB);
  });

  it("the core's refusal handed back by the engine pool (a rebuilt FolioError) stops the preview", async () => {
    const admission = watchedAdmission();
    // As the API measures: on an engine thread, whose FolioError is flattened and rebuilt on the main thread.
    const measure = async (bytes: Uint8Array, pages: number[]) => {
      try {
        return pageSizes(bytes, pages);
      } catch (e) {
        const f = e as FolioError;
        throw new FolioError(f.code, f.message);
      }
    };
    const e = await refusal(renderPdfPages(Buffer.from('%PDF-1.4\n%%EOF\n'), 'png', { width: 200, pages: [1] }, { admission, measure }));
    expectCoreRefusal(e, /^The PDF has no readable document catalog/, admission);
  });
});

describe('previews of encrypted PDFs', () => {
  const withQpdf = (args: string[]): Uint8Array => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-preview-enc-'));
    try {
      fs.writeFileSync(path.join(dir, 'in.pdf'), simplePdf('encrypted'));
      execFileSync('qpdf', ['--encrypt', ...args, '256', '--', path.join(dir, 'in.pdf'), path.join(dir, 'out.pdf')]);
      return new Uint8Array(fs.readFileSync(path.join(dir, 'out.pdf')));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };

  it('an empty user password (permissions only) renders: poppler decrypts it', async () => {
    const pages = await renderPdfPages(withQpdf(['', 'owner']), 'png', { width: 120, pages: [1] });
    expect(pngDimensions(pages[0]!.bytes)).toEqual({ width: 120, height: 170 });
  });

  it('a user password is a 422 naming the encryption, not "damaged"', async () => {
    const e = await refusal(renderPdfPages(withQpdf(['user', 'owner']), 'png', { width: 120, pages: [1] }));
    expect(e).toBeInstanceOf(FolioError);
    expect((e as FolioError).code).toBe('UNPROCESSABLE_DOCUMENT');
    expect((e as FolioError).message).toMatch(/^The PDF is encrypted with a password/);
  });
});
