/**
 * Previews inside the request's budgets (issue 23), in-process against real poppler: page sizes read through
 * src/pdf before rendering (pixel budget), pdftoppm's address-space cap and the 1×1 image it answers for a
 * page it could not allocate, each page run drawing from the one deadline, the images counted against the
 * output budget, and renders waiting for a turn from the admission.
 */
import { describe, expect, it } from 'vitest';
import { Deadline } from '../../src/budget/index.js';
import { FolioError } from '../../src/errors.js';
import { jpegDimensions, localAdmission, pageSizes, pngDimensions, renderPdfPages } from '../../src/preview/index.js';
import { limitTools } from '../../src/native/bounded-child.js';
import { buildPdf, simplePdf } from '../adversarial/generators.js';
import { slowPdf, tallPdf } from '../amplification/native-inputs.js';

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => new Error('expected a refusal'),
    (e: unknown) => e,
  );

describe('page sizes (src/pdf reader)', () => {
  it('inherits /MediaBox and /Rotate down the page tree, and swaps the sides for 90°', () => {
    const pdf = buildPdf([
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 3 /MediaBox [0 0 200 800] >>',
      '<< /Type /Page /Parent 2 0 R >>',
      '<< /Type /Pages /Parent 2 0 R /Kids [5 0 R] /Count 1 /Rotate 90 >>',
      '<< /Type /Page /Parent 4 0 R /MediaBox [10 10 310 110] >>',
    ]);
    expect(pageSizes(pdf, [1, 2, 3])).toEqual([{ width: 200, height: 800 }, { width: 100, height: 300 }, undefined]);
  });

  it('a page without a usable box is US Letter (as poppler); bytes the PDF core cannot read are its 422', () => {
    const pdf = buildPdf(['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [3 0 R] /Count 1 >>', '<< /Type /Page /MediaBox [0 0 0 0] >>']);
    expect(pageSizes(pdf, [1])).toEqual([{ width: 612, height: 792 }]);
    const e = (() => {
      try {
        return pageSizes(Buffer.from('not a pdf'), [1]);
      } catch (e) {
        return e;
      }
    })();
    expect(e).toBeInstanceOf(FolioError);
    expect((e as FolioError).code).toBe('UNPROCESSABLE_DOCUMENT');
    expect((e as FolioError).message).toMatch(/^The PDF has no readable document catalog/);
  });

  it('a page tree that refers to itself ends', () => {
    const pdf = buildPdf([
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 1 >>',
      '<< /Type /Page /MediaBox [0 0 50 100] >>',
    ]);
    expect(pageSizes(pdf, [1, 2])).toEqual([{ width: 50, height: 100 }, undefined]);
  });
});

describe('renderPdfPages within the budgets', () => {
  it('refuses a page over the pixel budget before rendering, naming the limit', async () => {
    const t0 = performance.now();
    const e = await refusal(renderPdfPages(tallPdf(200, 8800), 'png', { width: 4000, pages: [1] }));
    expect(e).toBeInstanceOf(FolioError);
    expect((e as FolioError).code).toBe('UNPROCESSABLE_DOCUMENT');
    expect((e as FolioError).message).toMatch(/4000 × 176000 px .*50 megapixels \(PREVIEW_MAX_MEGAPIXELS\)/);
    expect((e as FolioError).details).toEqual([{ field: 'width', issue: 'page 1 would be over 50 megapixels at this width' }]);
    // Generous: rendering it took 38 s and 3.4 GB.
    expect(performance.now() - t0).toBeLessThan(5_000);
  });

  // The cap needs util-linux's prlimit (in every Debian image).
  it.skipIf(!limitTools().prlimit)('a page poppler cannot allocate under its memory cap is a 422, not the 1×1 image poppler writes', async () => {
    const e = await refusal(
      renderPdfPages(tallPdf(200, 1000), 'png', { width: 4000, pages: [1] }, { maxPixels: 1e9, memoryBytes: 128 * 1024 * 1024 }),
    );
    expect(e).toBeInstanceOf(FolioError);
    expect((e as FolioError).message).toMatch(/could not be rendered at width 4000 within the renderer's memory limit/);
    // Also when the page size could not be read first: the image's own dimensions give it away.
    const blind = await refusal(
      renderPdfPages(
        tallPdf(200, 1000),
        'jpeg',
        { width: 4000, pages: [1] },
        { maxPixels: 1e9, memoryBytes: 128 * 1024 * 1024, measure: async () => [null] },
      ),
    );
    expect((blind as FolioError).message).toMatch(/could not be rendered/);
  });

  it('page sizes that could not be read leave the render to its own caps', async () => {
    const measure = async () => {
      throw new FolioError('CONVERSION_TIMEOUT', 'the reader took too long');
    };
    const pages = await renderPdfPages(simplePdf(), 'png', { width: 120, pages: [1] }, { measure });
    expect(pngDimensions(pages[0]!.bytes)).toEqual({ width: 120, height: 170 });
  });

  it('each page run draws from the one deadline: spent → 504, the run killed', async () => {
    const t0 = performance.now();
    const e = await refusal(renderPdfPages(slowPdf(6, 1000), 'png', { width: 800, pages: [1, 3, 5] }, { deadline: Deadline.after(1_500) }));
    expect(e).toBeInstanceOf(FolioError);
    expect((e as FolioError).code).toBe('CONVERSION_TIMEOUT');
    expect((e as FolioError).message).toMatch(/during rendering page previews/);
    expect(performance.now() - t0).toBeLessThan(10_000);
  }, 30_000);

  it('the images count against the output budget (OUTPUT_MAX_MB): past it, 422 naming the limit', async () => {
    const e = await refusal(renderPdfPages(simplePdf(), 'png', { width: 800, pages: [1] }, { outputMaxBytes: 1024 }));
    expect(e).toBeInstanceOf(FolioError);
    expect((e as FolioError).message).toMatch(/page images would be larger than .* \(OUTPUT_MAX_MB\)/);
    const ok = await renderPdfPages(simplePdf(), 'jpeg', { width: 300, pages: [1] }, { outputMaxBytes: 1024 * 1024 });
    expect(jpegDimensions(ok[0]!.bytes)).toEqual({ width: 300, height: 425 });
  });

  it('a render waits for a turn from its admission, within the deadline', async () => {
    const admission = localAdmission(1);
    const release = await admission.acquireRenderSlot();
    const e = await refusal(renderPdfPages(simplePdf(), 'png', { width: 200, pages: [1] }, { admission, deadline: Deadline.after(300) }));
    expect((e as FolioError).code).toBe('CONVERSION_TIMEOUT');
    expect((e as FolioError).message).toMatch(/waiting for a render slot/);
    release();
    const pages = await renderPdfPages(simplePdf(), 'png', { width: 200, pages: [1] }, { admission, deadline: Deadline.after(30_000) });
    expect(pngDimensions(pages[0]!.bytes)).toEqual({ width: 200, height: 284 });
  });
});
