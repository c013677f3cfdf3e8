/**
 * options.origin: a DOCX Folio built itself is not re-validated as if it came from outside. The fixture is
 * what annotate makes of a data-bound template: a package written by Folio (src/docx/package.ts) with a
 * large, repetitive custom XML part, which compresses far past the zip-bomb ratio of the outside-input
 * bounds. Sent as an upload it is refused before LibreOffice sees it; sent as Folio's own it converts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OfficePool, minimalDocx, validateDocx } from '../../src/office/index.js';
import { openDocx } from '../../src/docx/package.js';
import { FolioError } from '../../src/errors.js';
import { pdfText } from './helpers.js';
import { manyEntries } from './bad-input.js';

/**
 * A Folio-written DOCX whose customXml part (2 MB of one short record repeated) deflates past 200:1: zlib
 * at the writer's level for large parts (3) reaches about 229:1 on a period this short.
 */
function folioBuiltRepetitiveDocx(): Uint8Array {
  const pkg = openDocx(minimalDocx('Built by Folio, bound data attached'));
  const record = '<v/>';
  const xml = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><data>${record.repeat(Math.ceil((2 * 1024 * 1024) / record.length))}</data>`;
  pkg.setText('customXml/item1.xml', xml);
  return pkg.toBytes();
}

describe('office pool: origin of the DOCX', () => {
  let pool: OfficePool;
  let docx: Uint8Array;
  beforeAll(async () => {
    docx = folioBuiltRepetitiveDocx();
    pool = new OfficePool({ workers: 1, queueSize: 8, timeoutMs: 120_000 });
    await pool.start();
  });
  afterAll(async () => {
    await pool?.close();
  });

  it('the fixture really fails the outside-input bounds (compression ratio), and only those', () => {
    expect(() => validateDocx(docx)).toThrow(/compression ratio/);
  });

  it('refuses the same bytes from an upload (the default origin and an explicit one)', async () => {
    for (const options of [{}, { origin: 'upload' as const }]) {
      const err = await pool.docxToPdf(docx, options).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(FolioError);
      expect((err as FolioError).code).toBe('UNPROCESSABLE_DOCUMENT');
      expect((err as FolioError).message).toMatch(/compression ratio/);
    }
  });

  it('converts them when Folio built them (origin: folio)', async () => {
    const pdf = await pool.docxToPdf(docx, { origin: 'folio' });
    expect(Buffer.from(pdf.subarray(0, 5)).toString('latin1')).toBe('%PDF-');
    expect(pdfText(pdf)).toContain('Built by Folio, bound data attached');
  });

  it('keeps the size bounds that protect LibreOffice for Folio-built packages too (entry count)', async () => {
    const err = await pool.docxToPdf(manyEntries(), { origin: 'folio' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(FolioError);
    expect((err as FolioError).code).toBe('UNPROCESSABLE_DOCUMENT');
    expect((err as FolioError).message).toMatch(/too many entries/);
  });
});
