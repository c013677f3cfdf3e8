/**
 * Where templates and images come from: URLs fetched under docs/api.md § Common rules (an operator allow-list lets the test
 * reach its own local server), and ZIP packages whose headers lie about sizes (bounded, refused).
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { strToU8, unzipSync, zipSync } from 'fflate';
import { annotateDocx } from '../../src/annotate/index.js';
import { authed, startTestApi, type TestApi } from '../helpers/api.js';
import { b64, makeDocx, para, pngOfSize, run, TEMPLATES, textOf, unpack } from './helpers.js';

let server: http.Server;
let port: number;
let api: TestApi;
const template = makeDocx({ body: para(run('Logo: {{logo}}')) + para(run('Name: {{name}}')) });
let png: Uint8Array;

beforeAll(async () => {
  png = await pngOfSize(64, 32);
  server = http.createServer((req, res) => {
    if (req.url === '/logo.png') res.writeHead(200, { 'content-type': 'image/png' }).end(png);
    else if (req.url === '/template.docx') res.writeHead(200).end(template);
    else if (req.url === '/text.png') res.writeHead(200, { 'content-type': 'image/png' }).end('definitely not a png');
    else if (req.url === '/redirect') res.writeHead(302, { location: '/logo.png' }).end();
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  port = (server.address() as AddressInfo).port;
  api = await startTestApi({ env: { URL_FETCH_ALLOWLIST: `127.0.0.1:${port}` } });
});
afterAll(async () => {
  await api?.close();
  await new Promise<void>((r) => server.close(() => r()));
});

async function post(body: unknown) {
  const res = await fetch(
    `${api.url}/v1/annotate`,
    authed(api, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  );
  return {
    status: res.status,
    json: (await res.json()) as { document: { base64: string }; report: unknown; code?: string; details?: Array<{ field: string }> },
  };
}

describe('URLs', () => {
  it('fetches the template and an image (through a redirect) from allowed URLs', async () => {
    const r = await post({
      document: { url: `http://127.0.0.1:${port}/template.docx` },
      fields: [
        { id: 'logo', type: 'image', value: `http://127.0.0.1:${port}/redirect` },
        { id: 'name', type: 'text', value: 'Fetched' },
      ],
    });
    expect(r.status).toBe(200);
    const u = unpack(Buffer.from(r.json.document.base64, 'base64'));
    expect(textOf(u.document)).toContain('Name: Fetched');
    expect(u.document).toContain('<wp:extent cx="609600" cy="304800"/>');
  });

  it('a URL that serves something else than an image is 422 naming the field; a 404 is URL_FETCH_FAILED', async () => {
    const notImage = await post({
      document: { base64: b64(template) },
      fields: [{ id: 'logo', type: 'image', value: `http://127.0.0.1:${port}/text.png` }],
    });
    expect(notImage.status).toBe(422);
    expect(notImage.json).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'fields[0].value' }] });
    const missing = await post({
      document: { base64: b64(template) },
      fields: [{ id: 'logo', type: 'signature', value: `http://127.0.0.1:${port}/nothing.png` }],
    });
    expect(missing.status).toBe(422);
    expect(missing.json).toMatchObject({ code: 'URL_FETCH_FAILED', details: [{ field: 'fields[0].value' }] });
  });

  it('a URL to an address that is not allowed is refused before any fetch', async () => {
    const r = await post({ document: { url: 'http://10.0.0.1/template.docx' }, fields: [] });
    expect(r.status).toBe(400);
    expect(r.json.code).toBe('URL_NOT_ALLOWED');
  });
});

/** A one-entry-changed DOCX whose document.xml central-directory size is replaced by `declared`. */
function lyingDocx(realXml: string, declared: number): Uint8Array {
  const base = makeDocx({ body: para(run('{{a}}')) });
  const files = zipSync({ ...unzipSync(base), 'word/document.xml': strToU8(realXml) });
  // Patch the uncompressed size of word/document.xml in the central directory (and local header).
  const buf = Buffer.from(files);
  const name = Buffer.from('word/document.xml');
  for (let i = 0; i < buf.length - 46; i++) {
    if (buf.readUInt32LE(i) === 0x02014b50 && buf.subarray(i + 46, i + 46 + name.length).equals(name)) buf.writeUInt32LE(declared, i + 24);
    if (buf.readUInt32LE(i) === 0x04034b50 && buf.subarray(i + 30, i + 30 + name.length).equals(name)) buf.writeUInt32LE(declared, i + 22);
  }
  return new Uint8Array(buf);
}

describe('ZIP writing', () => {
  it('parts a fill does not touch come out byte-identical; changed ones re-read', async () => {
    const template = new Uint8Array(fs.readFileSync(`${TEMPLATES}/poi--ChronologicalResume.dotx`));
    const { docx } = await annotateDocx(template, [{ id: 'Email', type: 'text', value: 'x@y.z' }]);
    const before = unzipSync(template);
    const after = unzipSync(docx);
    expect(Object.keys(after).sort()).toEqual(Object.keys(before).sort());
    const changed = Object.keys(before).filter((n) => !Buffer.from(before[n]!).equals(Buffer.from(after[n]!)));
    // The document, the content types (.dotx → document) and the customXml store the Email control is bound to.
    expect(changed.sort()).toEqual(['[Content_Types].xml', 'customXml/item1.xml', 'word/document.xml']);
    expect(Buffer.from(after['customXml/item1.xml']!).toString()).toContain('x@y.z');
  });
});

describe('ZIP bounds', () => {
  it('an entry that inflates beyond its declared size is refused, not expanded', async () => {
    const big = `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>${'A'.repeat(2_000_000)}</w:t></w:r></w:p></w:body></w:document>`;
    const docx = lyingDocx(big, 1000);
    await expect(annotateDocx(docx, [])).rejects.toMatchObject({ code: 'UNPROCESSABLE_DOCUMENT' });
  });

  it('a declared expansion beyond the package limits (zip bomb) is refused before inflating', async () => {
    const docx = lyingDocx('<x/>', 300 * 1024 * 1024);
    await expect(annotateDocx(docx, [])).rejects.toMatchObject({ code: 'UNPROCESSABLE_DOCUMENT' });
  });
});
