/**
 * The merge engine against inputs built to amplify (test/merge/hostile.ts): pages inheriting a large
 * resource, a page object listed many times, the same stream in every input, a page tree claiming a
 * million pages, a looping tree; and the output budget (OUTPUT_MAX_MB). Outputs are read back by qpdf and
 * poppler, not by the code that wrote them.
 */
import { describe, expect, it } from 'vitest';
import { mergePdfs, type MergeInput } from '../../src/merge/engine.js';
import { FolioError } from '../../src/errors.js';
import { MAX_MERGE_PAGES } from '../../src/merge/schema.js';
import { pageTexts, pdfinfoPages, qpdfObjects, taggedPdf } from './helpers.js';
import { buildPdf, flatMillionPagePdf, inheritedResourcePdf, loopingPageTreePdf, millionPagePdf, repeatedPagePdf } from './hostile.js';

const OPTIONS = { outline: true, pageLabels: true };
const KB = 1024;

async function refusal(inputs: MergeInput[], outputMaxBytes?: number): Promise<FolioError> {
  const err = await mergePdfs(inputs, { ...OPTIONS, outputMaxBytes }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(FolioError);
  return err as FolioError;
}

/** The value of `key` in every page dictionary of `pdf`, as qpdf reads them. */
function pageEntries(pdf: Uint8Array, key: string): unknown[] {
  const { pages, objects } = qpdfObjects(pdf);
  return pages.map((ref) => objects[`obj:${ref}`]?.value?.[key]);
}

describe('mergePdfs: resources written once', () => {
  it('shares a large resource that the page tree passes down, instead of writing it into every page', async () => {
    // 100 pages inheriting a direct /Resources of ~80 KB (a font with 20,000 widths), packed in an object
    // stream: 20 KB on disk. Two copies made a 16 MB merge before.
    const input = inheritedResourcePdf({ pages: 100, widths: 20_000, packed: true });
    const { pdf, pageCount } = await mergePdfs(
      [
        { pdf: input, fileName: 'a.pdf' },
        { pdf: input, fileName: 'b.pdf' },
      ],
      OPTIONS,
    );
    expect(pageCount).toBe(200);
    expect(pdfinfoPages(pdf)).toBe(200);
    // Every page refers to its input's one resource dictionary: two in all.
    const resources = pageEntries(pdf, '/Resources');
    expect(resources.every((r) => typeof r === 'string' && / 0 R$/.test(r))).toBe(true);
    expect(new Set(resources).size).toBe(2);
    expect(pdf.length).toBeLessThan(512 * KB);
    expect(pageTexts(pdf)[199]).toMatch(/Inh/);
  }, 60_000);

  it('merges a page object listed many times as that many pages, each a page object of its own', async () => {
    const { pdf, pageCount } = await mergePdfs(
      [
        { pdf: repeatedPagePdf(4, { text: 'Echo' }), fileName: 'echo.pdf' },
        { pdf: await taggedPdf('Tail', 1), fileName: 'tail.pdf' },
      ],
      OPTIONS,
    );
    expect(pageCount).toBe(5);
    expect(pdfinfoPages(pdf)).toBe(5);
    expect(new Set(qpdfObjects(pdf).pages).size).toBe(5);
    expect(pageTexts(pdf).map((t) => t.trim())).toEqual(['Echo', 'Echo', 'Echo', 'Echo', 'Tail page 1']);
  }, 60_000);

  it("shares a repeated page's large direct resources between its occurrences", async () => {
    // One page listed 200 times whose own /Resources holds a ~110 KB font dictionary: 22 MB if each
    // occurrence wrote it out.
    const { pdf } = await mergePdfs(
      [
        { pdf: repeatedPagePdf(200, { widths: 20_000 }), fileName: 'echo.pdf' },
        { pdf: await taggedPdf('Tail', 1), fileName: 'tail.pdf' },
      ],
      OPTIONS,
    );
    expect(pdfinfoPages(pdf)).toBe(201);
    expect(new Set(pageEntries(pdf, '/Resources').slice(0, 200)).size).toBe(1);
    expect(pdf.length).toBeLessThan(512 * KB);
  }, 60_000);

  it('copies a stream that several inputs carry with the same bytes once', async () => {
    const input = inheritedResourcePdf({ pages: 3, widths: 10, imageBytes: 150_000 });
    const { pdf } = await mergePdfs(
      [0, 1, 2].map((i) => ({ pdf: input, fileName: `copy${i}.pdf` })),
      OPTIONS,
    );
    expect(pdfinfoPages(pdf)).toBe(9);
    const { objects } = qpdfObjects(pdf);
    const images = Object.values(objects).filter(
      (o) => (o as { stream?: { dict?: Record<string, unknown> } }).stream?.dict?.['/Subtype'] === '/Image',
    );
    expect(images).toHaveLength(1);
    expect(pdf.length).toBeLessThan(200 * KB);
  }, 60_000);

  it('keeps streams apart whose bytes are the same but whose dictionaries refer to different objects', async () => {
    // Two inputs, each an image with the same bytes but a soft mask of its own (different bytes): sharing
    // the image would give the second input the first one's mask.
    const masked = (maskByte: number) =>
      buildPdf(
        [
          { num: 1, body: '<< /Type /Catalog /Pages 2 0 R >>' },
          { num: 2, body: '<< /Type /Pages /Count 1 /Kids [3 0 R] >>' },
          { num: 3, body: '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R /Resources << /XObject << /Im0 5 0 R >> >> >>' },
          { num: 4, body: '<< >>', stream: Buffer.from('q 100 0 0 100 50 50 cm /Im0 Do Q') },
          {
            num: 5,
            body: '<< /Type /XObject /Subtype /Image /Width 4 /Height 4 /ColorSpace /DeviceGray /BitsPerComponent 8 /SMask 6 0 R >>',
            stream: new Uint8Array(16).fill(0x40),
          },
          {
            num: 6,
            body: '<< /Type /XObject /Subtype /Image /Width 4 /Height 4 /ColorSpace /DeviceGray /BitsPerComponent 8 >>',
            stream: new Uint8Array(16).fill(maskByte),
          },
        ],
        1,
      );
    const { pdf } = await mergePdfs(
      [
        { pdf: masked(0x00), fileName: 'a.pdf' },
        { pdf: masked(0xff), fileName: 'b.pdf' },
      ],
      OPTIONS,
    );
    const { objects } = qpdfObjects(pdf);
    const images = Object.values(objects).filter(
      (o) => (o as { stream?: { dict?: Record<string, unknown> } }).stream?.dict?.['/SMask'] !== undefined,
    );
    expect(images).toHaveLength(2);
  }, 60_000);
});

describe('mergePdfs: bounds', () => {
  it('refuses an output past OUTPUT_MAX_MB with a 422 naming the limit', async () => {
    const input = inheritedResourcePdf({ pages: 10, widths: 20_000 });
    const err = await refusal(
      [
        { pdf: input, fileName: 'a.pdf' },
        { pdf: input, fileName: 'b.pdf' },
      ],
      100 * KB,
    );
    expect(err.code).toBe('UNPROCESSABLE_DOCUMENT');
    expect(err.message).toMatch(/merged PDF would be larger than the 0\.1 MB .*OUTPUT_MAX_MB/);
  }, 60_000);

  it('refuses a page tree of a million pages (shared intermediate nodes) at the page limit', async () => {
    const err = await refusal([
      { pdf: await taggedPdf('Lead', 1), fileName: 'lead.pdf' },
      { pdf: millionPagePdf(), fileName: 'million.pdf' },
    ]);
    expect(err.code).toBe('UNPROCESSABLE_DOCUMENT');
    expect(err.message).toBe(`The merged document would have more than ${MAX_MERGE_PAGES} pages`);
    expect(err.details).toEqual([{ field: 'documents.1', issue: expect.stringMatching(/^million\.pdf: /) }]);
    // A billion, in 2 KB: pdf-lib's own walk would visit every one.
    const billion = await refusal([
      { pdf: millionPagePdf(10, 9), fileName: 'billion.pdf' },
      { pdf: await taggedPdf('Tail', 1), fileName: 'tail.pdf' },
    ]);
    expect(billion.details).toEqual([{ field: 'documents.0', issue: `billion.pdf: pages beyond the ${MAX_MERGE_PAGES}-page limit` }]);
  }, 60_000);

  it('refuses a file with more page objects than the limit from the reader, before pdf-lib parses it', async () => {
    // 20,000 distinct pages in object streams: more objects than pages allowed, so counted by src/pdf.
    const err = await refusal([
      { pdf: await taggedPdf('Lead', 1), fileName: 'lead.pdf' },
      { pdf: flatMillionPagePdf(20_000), fileName: 'many.pdf' },
    ]);
    expect(err.message).toBe(`The merged document would have more than ${MAX_MERGE_PAGES} pages`);
    expect(err.details).toEqual([{ field: 'documents.1', issue: `many.pdf: pages beyond the ${MAX_MERGE_PAGES}-page limit` }]);
  }, 60_000);

  it('refuses a page tree of empty nodes that fans out, and one that loops, naming the problem', async () => {
    // 8 levels of 10 kids each down to an empty node: 10^8 visits for no page at all.
    const fanout = buildPdf(
      [
        { num: 1, body: '<< /Type /Catalog /Pages 10 0 R >>' },
        ...Array.from({ length: 8 }, (_, d) => ({
          num: 10 + d,
          body: `<< /Type /Pages /Count 0 /Kids [${Array(10)
            .fill(`${11 + d} 0 R`)
            .join(' ')}] >>`,
        })),
        { num: 18, body: '<< /Type /Pages /Count 0 /Kids [] >>' },
      ],
      1,
    );
    const fanned = await refusal([
      { pdf: fanout, fileName: 'fan.pdf' },
      { pdf: await taggedPdf('Tail', 1), fileName: 'tail.pdf' },
    ]);
    expect(fanned.message).toMatch(/^Cannot merge input 0 \(fan\.pdf\): its page tree has more than \d+ nodes/);
    const looped = await refusal([
      { pdf: await taggedPdf('Lead', 1), fileName: 'lead.pdf' },
      { pdf: loopingPageTreePdf(), fileName: 'loop.pdf' },
    ]);
    expect(looped.message).toBe('Cannot merge input 1 (loop.pdf): its page tree contains a loop');
  }, 60_000);
});
