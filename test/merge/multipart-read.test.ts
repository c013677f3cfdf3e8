/**
 * Merge's multipart files are read with readFilePart (src/http/multipart-file.ts): each into one buffer
 * bounded by what is left of the Content-Length, or, for a chunked body, collected and counted against the
 * in-flight budget as it arrives. Asserted from the outside: a chunked merge (no Content-Length) is served,
 * and a body within the announced-size check whose files add up past 25 MB is refused with merge's own 413.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authed, startTestApi, type TestApi } from '../helpers/api.js';
import { pdfinfoPages, taggedPdf } from './helpers.js';

const MB = 1024 * 1024;
const BOUNDARY = '----folio-merge-read-3b7e';

/** A multipart body of `files` fields, built by hand so it can be sent with or without Content-Length. */
function multipart(files: Array<{ name: string; bytes: Uint8Array }>): Buffer {
  const parts: Buffer[] = [];
  for (const f of files) {
    parts.push(
      Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="files"; filename="${f.name}"\r\nContent-Type: application/pdf\r\n\r\n`),
      Buffer.from(f.bytes),
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(parts);
}

let t: TestApi;

beforeAll(async () => {
  t = await startTestApi();
});

afterAll(async () => {
  await t?.close();
});

describe('POST /v1/merge multipart files, one buffer each', () => {
  it('merges a chunked body (no Content-Length)', async () => {
    const body = multipart([
      { name: 'a.pdf', bytes: await taggedPdf('A', 1) },
      { name: 'b.pdf', bytes: await taggedPdf('B', 2) },
    ]);
    // A stream body goes out chunked: the server cannot size a buffer from the headers.
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < body.length; i += 4096) c.enqueue(body.subarray(i, i + 4096));
        c.close();
      },
    });
    const res = await fetch(
      `${t.url}/v1/merge`,
      authed(t, {
        method: 'POST',
        headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
        body: stream,
        duplex: 'half',
      } as RequestInit),
    );
    expect(res.status, await res.clone().text()).toBe(200);
    expect(pdfinfoPages(new Uint8Array(await res.arrayBuffer()))).toBe(3);
  });

  it('refuses files that add up past 25 MB with merge’s 413, after reading them into bounded buffers', async () => {
    const first = new Uint8Array(24.5 * MB);
    const second = new Uint8Array(0.9 * MB);
    const body = multipart([
      { name: 'one.pdf', bytes: first },
      { name: 'two.pdf', bytes: second },
    ]);
    // Within the announced-size check (25 MB + 1 MB of framing), so both files are read.
    expect(body.length).toBeLessThan(26 * MB);
    const res = await fetch(
      `${t.url}/v1/merge`,
      authed(t, { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, body: new Uint8Array(body) }),
    );
    expect(res.status).toBe(413);
    const json = (await res.json()) as { code: string; message: string; details: Array<{ field: string }> };
    expect(json.code).toBe('FILE_TOO_LARGE');
    expect(json.message).toMatch(/add up to more than 25 MB/);
    expect(json.details[0]!.field).toBe('files');
  });
});
