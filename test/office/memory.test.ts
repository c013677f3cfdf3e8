/**
 * The office pool's memory ceiling against real LibreOffice: a document whose conversion grows the worker's
 * native heap past the ceiling is stopped early with 422 UNPROCESSABLE_DOCUMENT, its worker is replaced,
 * and the next conversion succeeds. The hostile document is generated: a DOCX of a few kilobytes holding a
 * 12,000 × 12,000 single-colour PNG (432 MB of pixels once decoded), which LibreOffice decodes to render it.
 */
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OfficePool, minimalDocx, type MemoryExceededEvent } from '../../src/office/index.js';
import { FolioError } from '../../src/errors.js';
import { buildDocx, pdfText } from './helpers.js';

function png(width: number, height: number): Buffer {
  const row = Buffer.alloc(1 + width * 3, 0xc0);
  row[0] = 0; // filter: none
  const raw = Buffer.alloc(row.length * height);
  for (let y = 0; y < height; y++) row.copy(raw, y * row.length);
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(body) >>> 0);
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A DOCX showing one huge embedded picture. */
export function hugePictureDocx(side = 12_000): Uint8Array {
  const emu = 5_000_000;
  return buildDocx({
    rels: ['<Relationship Id="rIdImg" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="media/big.png"/>'],
    extra: { 'word/media/big.png': new Uint8Array(png(side, side)) },
    body:
      `<w:p><w:r><w:drawing><wp:inline><wp:extent cx="${emu}" cy="${emu}"/><wp:docPr id="1" name="Big"/>` +
      `<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic><pic:nvPicPr><pic:cNvPr id="1" name="Big"/><pic:cNvPicPr/></pic:nvPicPr>` +
      `<pic:blipFill><a:blip r:embed="rIdImg"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill>` +
      `<pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="${emu}" cy="${emu}"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></pic:spPr></pic:pic></a:graphicData></a:graphic>` +
      `</wp:inline></w:drawing></w:r></w:p>`,
  });
}

describe('office pool: memory ceiling per conversion', () => {
  // A warm worker holds about 300 MB; the picture drives it past 700 MB within seconds.
  const CEILING = 450 * 1024 * 1024;
  let pool: OfficePool;
  beforeAll(async () => {
    pool = new OfficePool({ workers: 1, queueSize: 8, timeoutMs: 60_000, maxJobRssBytes: CEILING, maxRssBytes: CEILING });
    await pool.start();
  });
  afterAll(async () => {
    await pool?.close();
  });

  it('stops a conversion above the ceiling with 422, replaces the worker, and serves the next one', async () => {
    const first = pool.workerPids()[0];
    const events: MemoryExceededEvent[] = [];
    pool.on('memory-exceeded', (e: MemoryExceededEvent) => events.push(e));
    const started = Date.now();
    let error: unknown;
    try {
      await pool.docxToPdf(hugePictureDocx());
    } catch (e) {
      error = e;
    }
    const elapsed = Date.now() - started;
    expect(error).toBeInstanceOf(FolioError);
    const e = error as FolioError;
    expect(e.code).toBe('UNPROCESSABLE_DOCUMENT');
    expect(e.status).toBe(422);
    expect(e.message).toBe('The document is too large to process: the conversion exceeded its memory ceiling of 450 MB');
    // Stopped on the ceiling, well before the time budget.
    expect(elapsed).toBeLessThan(30_000);
    expect(events).toHaveLength(1);
    expect(events[0]!.rss).toBeGreaterThan(CEILING);

    // The killed worker is replaced; the next conversion succeeds on the new one.
    const pdf = await pool.docxToPdf(minimalDocx('after the ceiling'));
    expect(pdfText(pdf)).toContain('after the ceiling');
    expect(pool.workerPids()[0]).not.toBe(first);
    expect(pool.status()).toMatchObject({ status: 'healthy', workers: 1 });
  });

  it('a conversion under the ceiling reports its peak memory', async () => {
    const peaks: number[] = [];
    pool.on('conversion', (e: { peakRss: number }) => peaks.push(e.peakRss));
    await pool.docxToPdf(minimalDocx('small'));
    expect(peaks).toHaveLength(1);
    expect(peaks[0]).toBeGreaterThan(0);
    expect(peaks[0]).toBeLessThan(CEILING);
  });
});
