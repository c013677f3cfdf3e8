/**
 * `FolioClient.convert` to page previews (`to: 'png' | 'jpeg'`) against the real API: `width` and `pages`
 * reach the server. A PDF input needs no office engine (poppler renders it); the PNG header and the ZIP of
 * several pages are read back here, independently of the server's code.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unzipSync } from 'fflate';
import { FolioClient } from '../../packages/client/src/index.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { taggedPdf } from '../merge/helpers.js';

let t: TestApi;
let client: FolioClient;
beforeAll(async () => {
  t = await startTestApi();
  client = new FolioClient({ baseUrl: t.url, apiKey: t.apiKey });
});
afterAll(async () => {
  await t?.close();
});

/** Width and height of a PNG, from its IHDR chunk. */
function pngSize(bytes: Uint8Array): { width: number; height: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  expect([...bytes.subarray(1, 4)]).toEqual([0x50, 0x4e, 0x47]);
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

describe('FolioClient.convert previews', () => {
  it('passes width: one page comes back as a PNG of that width', async () => {
    const pdf = await taggedPdf('Preview', 3);
    const out = await client.convert(pdf, { from: 'pdf', to: 'png', width: '300', filename: 'three.pdf' });
    expect(out.contentType).toBe('image/png');
    expect(pngSize(out.bytes).width).toBe(300);
  });

  it('passes pages: a range gives a ZIP with one image per page', async () => {
    const pdf = await taggedPdf('Preview', 3);
    const out = await client.convert(pdf, { from: 'pdf', to: 'png', width: '200', pages: '2-3', filename: 'three.pdf' });
    expect(out.contentType).toBe('application/zip');
    const entries = Object.entries(unzipSync(out.bytes));
    expect(entries).toHaveLength(2);
    for (const [, png] of entries) expect(pngSize(png).width).toBe(200);
  });
});
