/**
 * `FolioClient.merge` against the real API (in this process, engine pool, no office engine): the multipart
 * form with several files (bytes, a Blob, a `{ path }`), the JSON form (titles, label prefixes, `{ base64 }`),
 * the warning for a signed input, the 422 that names a damaged input by index, and a retry after a 503 that
 * sends the same files again. Readers nobody here wrote check the result: poppler's pdfinfo/pdftotext, qpdf.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FolioClient, FolioUnprocessableError, toBase64, type RetryEvent } from '../../packages/client/src/index.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { pageTexts, pdfinfoPages, qpdfJson, taggedPdf } from '../merge/helpers.js';
import { signMinimal } from '../sign/helpers.js';
import { envelope, scriptedServer } from './local-server.js';

let t: TestApi;
let client: FolioClient;
let dir: string;
beforeAll(async () => {
  t = await startTestApi();
  client = new FolioClient({ baseUrl: t.url, apiKey: t.apiKey });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-client-merge-'));
});
afterAll(async () => {
  await t?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const trimmed = (pdf: Uint8Array) => pageTexts(pdf).map((s) => s.trim());

describe('FolioClient.merge', () => {
  it('sends uploads as one multipart request: pages in order, outline named after the file names', async () => {
    const file = path.join(dir, 'charlie.pdf');
    fs.writeFileSync(file, await taggedPdf('Charlie', 1));
    const result = await client.merge([
      { document: await taggedPdf('Alpha', 2), fileName: 'alpha.pdf' },
      new File([(await taggedPdf('Bravo', 3)) as BlobPart], 'bravo.pdf', { type: 'application/pdf' }),
      { path: file },
    ]);
    expect(result.pageCount).toBe(6);
    expect(result.warnings).toEqual([]);
    expect(result.filename).toBe('merged.pdf');
    expect(pdfinfoPages(result.bytes)).toBe(6);
    expect(trimmed(result.bytes)).toEqual(['Alpha page 1', 'Alpha page 2', 'Bravo page 1', 'Bravo page 2', 'Bravo page 3', 'Charlie page 1']);
    expect(qpdfJson(result.bytes).outlines.map((o) => [o.title, o.destpageposfrom1])).toEqual([
      ['alpha.pdf', 1],
      ['bravo.pdf', 3],
      ['charlie.pdf', 6],
    ]);
  });

  it('sends the JSON form when an input has a title or label prefix: outline titles and page labels as given', async () => {
    const result = await client.merge(
      [
        { document: await taggedPdf('Cover', 1), title: 'Cover letter', labelPrefix: 'C-' },
        { document: { base64: toBase64(await taggedPdf('Terms', 2)) }, fileName: 'terms.pdf', labelPrefix: 'T-' },
      ],
      { outline: true, pageLabels: true },
    );
    expect(result.pageCount).toBe(3);
    expect(trimmed(result.bytes)).toEqual(['Cover page 1', 'Terms page 1', 'Terms page 2']);
    const json = qpdfJson(result.bytes);
    expect(json.outlines.map((o) => o.title)).toEqual(['Cover letter', 'terms.pdf']);
    // qpdf's JSON writes text strings as `u:<text>`.
    expect(json.pagelabels.map((l) => [l.index, l.label['/P']])).toEqual([
      [0, 'u:C-'],
      [1, 'u:T-'],
    ]);
  });

  it('passes the options: no outline, no page labels', async () => {
    const result = await client.merge([await taggedPdf('One', 1), await taggedPdf('Two', 1)], { outline: false, pageLabels: false });
    expect(trimmed(result.bytes)).toEqual(['One page 1', 'Two page 1']);
    const json = qpdfJson(result.bytes);
    expect(json.outlines).toEqual([]);
    expect(json.pagelabels).toEqual([]);
  });

  it("returns the server's warning when a signed input lost its signature", async () => {
    const signed = (await signMinimal(t.services.signing!, await taggedPdf('Signed', 1))).pdf;
    const result = await client.merge([
      { document: await taggedPdf('Plain', 1), fileName: 'plain.pdf' },
      { document: signed, fileName: 'signed.pdf' },
    ]);
    expect(result.pageCount).toBe(pdfinfoPages(result.bytes));
    expect(trimmed(result.bytes)[0]).toBe('Plain page 1');
    expect(result.warnings).toHaveLength(1);
    expect(result.warnings[0]).toMatch(/^input 1 \(signed\.pdf\) is signed; .*signature is not valid in the merged PDF$/);
  });

  it('throws the 422 that names a damaged input by index and file name', async () => {
    const broken = new TextEncoder().encode('%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 9 0 R >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');
    const error = await client
      .merge([
        { document: await taggedPdf('Good', 1), fileName: 'good.pdf' },
        { document: broken, fileName: 'broken.pdf' },
      ])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FolioUnprocessableError);
    const e = error as FolioUnprocessableError;
    expect(e.status).toBe(422);
    expect(e.code).toBe('UNPROCESSABLE_DOCUMENT');
    expect(e.message).toContain('input 1 (broken.pdf)');
    expect(e.details?.[0]).toMatchObject({ field: 'documents.1' });
    expect(e.details?.[0]?.issue).toMatch(/^broken\.pdf: /);
    expect(e.requestId).toBeTruthy();
  });

  it('retries after a 503 with Retry-After, sending the same files again', async () => {
    // A front that refuses the first attempt and hands the second to the real API.
    const front = await scriptedServer((req, res, index) => {
      if (index === 0) {
        envelope(res, 503, 'SERVICE_UNAVAILABLE', { 'retry-after': '1' });
        return;
      }
      const arrival = front.arrivals[index]!;
      void fetch(`${t.url}${req.url}`, {
        method: 'POST',
        headers: { 'content-type': arrival.headers['content-type']!, authorization: arrival.headers.authorization! },
        body: new Uint8Array(arrival.body),
      }).then(async (answer) => {
        const headers = Object.fromEntries([...answer.headers].filter(([k]) => !['transfer-encoding', 'connection', 'keep-alive'].includes(k)));
        res.writeHead(answer.status, headers);
        res.end(Buffer.from(await answer.arrayBuffer()));
      });
    });
    try {
      const retries: RetryEvent[] = [];
      const viaFront = new FolioClient({ baseUrl: front.url, apiKey: t.apiKey, onRetry: (e) => retries.push(e) });
      const file = path.join(dir, 'second.pdf');
      fs.writeFileSync(file, await taggedPdf('Second', 2));
      const result = await viaFront.merge([await taggedPdf('First', 1), { path: file }]);
      expect(retries).toHaveLength(1);
      expect(front.arrivals).toHaveLength(2);
      // Same two files both times (the multipart boundary differs, its length does not).
      expect(front.arrivals[1]!.bodyBytes).toBe(front.arrivals[0]!.bodyBytes);
      expect(trimmed(result.bytes)).toEqual(['First page 1', 'Second page 1', 'Second page 2']);
    } finally {
      await front.close();
    }
  });
});
