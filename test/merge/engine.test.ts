/**
 * The merge engine without HTTP: the page bound, and an input's own outline whose entries point through
 * named destinations (the /Names /Dests tree), read back by qpdf.
 */
import { describe, expect, it } from 'vitest';
import { PDFDocument, PDFHexString, PDFName, PDFString } from '@cantoo/pdf-lib';
import { mergePdfs } from '../../src/merge/engine.js';
import { FolioError } from '../../src/errors.js';
import { qpdfJson, taggedPdf } from './helpers.js';

async function blankPages(n: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  for (let i = 0; i < n; i++) doc.addPage([200, 200]);
  return doc.save({ useObjectStreams: false });
}

describe('mergePdfs', () => {
  it('refuses more than 10,000 pages in all, naming the input that crosses the bound', async () => {
    const half = await blankPages(5_001);
    const err = await mergePdfs(
      [
        { pdf: half, fileName: 'first.pdf' },
        { pdf: half, fileName: 'second.pdf' },
      ],
      { outline: true, pageLabels: true },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FolioError);
    expect((err as FolioError).code).toBe('UNPROCESSABLE_DOCUMENT');
    expect((err as FolioError).details).toEqual([{ field: 'documents.1', issue: expect.stringMatching(/^second\.pdf: /) }]);
  }, 60_000);

  it('maps outline entries that use named destinations to the merged pages', async () => {
    const doc = await PDFDocument.load(await taggedPdf('Named', 3));
    const ctx = doc.context;
    const pages = doc.getPages();
    const names = ctx.obj({
      Names: ctx.obj([
        PDFString.of('chap2'),
        ctx.obj([pages[1]!.ref, 'XYZ', 0, 800, null]),
        PDFString.of('chap3'),
        ctx.obj({ D: [pages[2]!.ref, 'Fit'] }),
      ]),
    });
    doc.catalog.set(PDFName.of('Names'), ctx.obj({ Dests: ctx.register(names) }));
    const root = ctx.nextRef();
    const one = ctx.nextRef();
    const two = ctx.nextRef();
    ctx.assign(one, ctx.obj({ Title: PDFHexString.fromText('Chapter 2'), Parent: root, Next: two, Dest: PDFString.of('chap2') }));
    ctx.assign(two, ctx.obj({ Title: PDFHexString.fromText('Chapter 3'), Parent: root, Prev: one, A: { S: 'GoTo', D: PDFString.of('chap3') } }));
    ctx.assign(root, ctx.obj({ Type: 'Outlines', First: one, Last: two, Count: 2 }));
    doc.catalog.set(PDFName.of('Outlines'), root);
    const named = await doc.save({ useObjectStreams: false });

    const { pdf } = await mergePdfs(
      [
        { pdf: await taggedPdf('Lead', 2), fileName: 'lead.pdf' },
        { pdf: named, fileName: 'named.pdf', title: 'Book' },
      ],
      { outline: true, pageLabels: true },
    );
    const outlines = qpdfJson(pdf).outlines;
    expect(outlines.map((o) => [o.title, o.destpageposfrom1])).toEqual([
      ['lead.pdf', 1],
      ['Book', 3],
    ]);
    expect(outlines[1]!.kids.map((k) => [k.title, k.destpageposfrom1])).toEqual([
      ['Chapter 2', 4],
      ['Chapter 3', 5],
    ]);
  });
});
