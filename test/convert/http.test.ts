/** POST /v1/convert over real HTTP (real API, real auth, SQLite in a temp DATA_DIR). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unzipSync, strFromU8 } from 'fflate';
import { authed, startTestApi, type TestApi } from '../helpers/api.js';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

function form(name: string, content: string | Uint8Array, type = 'application/octet-stream'): FormData {
  const fd = new FormData();
  fd.append('file', new Blob([content as BlobPart], { type }), name);
  return fd;
}

async function post(query: string, body: BodyInit, withKey = true): Promise<Response> {
  const init: RequestInit = { method: 'POST', body };
  return fetch(`${api.url}/v1/convert${query}`, withKey ? authed(api, init) : init);
}

describe('POST /v1/convert', () => {
  it('converts Markdown to DOCX with the attachment name of the input', async () => {
    const res = await post('?from=md&to=docx&pageSize=Letter', form('My "report".md', '# Hello\n\n- a\n- b\n'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/vnd.openxmlformats-officedocument.wordprocessingml.document');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="My report.docx"');
    const files = unzipSync(new Uint8Array(await res.arrayBuffer()));
    const doc = strFromU8(files['word/document.xml']!);
    expect(doc).toContain('<w:pStyle w:val="Heading1"/>');
    expect(doc).toContain('<w:pgSz w:w="12240" w:h="15840"/>');
  });

  it('infers HTML from the name or the content when from is absent', async () => {
    for (const [name, body] of [
      ['page.html', '<p>x</p>'],
      ['upload', '<!DOCTYPE html><html><body><h2>x</h2></body></html>'],
    ] as const) {
      const res = await post('?to=docx', form(name, body));
      expect(res.status).toBe(200);
      const doc = strFromU8(unzipSync(new Uint8Array(await res.arrayBuffer()))['word/document.xml']!);
      expect(doc).toContain('>x</w:t>');
    }
  });

  it('sanitises the file name stem', async () => {
    const res = await post('?from=html&to=docx', form('../../évil;\r\nname.html', '<p>x</p>'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="evilname.docx"');
  });

  it('answers 400 VALIDATION_ERROR when the source format cannot be inferred', async () => {
    const res = await post('?to=docx', form('blob.bin', new Uint8Array([0, 1, 2, 3, 255])));
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.code).toBe('VALIDATION_ERROR');
    expect(body.requestId).toBeTruthy();
  });

  it('answers 400 UNSUPPORTED_CONVERSION for a pair outside the contract', async () => {
    const res = await post('?from=html&to=docx', form('a.html', '<p>x</p>'));
    expect(res.status).toBe(200);
    const bad = await post('?from=docx&to=docx', form('a.docx', new Uint8Array([0x50, 0x4b, 3, 4])));
    expect(bad.status).toBe(400);
    expect((await bad.json()).code).toBe('UNSUPPORTED_CONVERSION');
  });

  it('validates the query: unknown option or value is 400', async () => {
    for (const q of ['?from=md&to=docx&colour=red', '?from=rtf&to=docx', '?from=md&to=odt', '?from=md&to=docx&pageSize=A3']) {
      const res = await post(q, form('a.md', 'x'));
      expect(res.status, q).toBe(400);
      expect((await res.json()).code).toBe('VALIDATION_ERROR');
    }
  });

  it('answers 415 for a body that is not multipart, 400 without the file field', async () => {
    const res = await fetch(
      `${api.url}/v1/convert?from=md&to=docx`,
      authed(api, { method: 'POST', headers: { 'content-type': 'text/markdown' }, body: '# x' }),
    );
    expect(res.status).toBe(415);
    expect((await res.json()).code).toBe('UNSUPPORTED_MEDIA_TYPE');
    const fd = new FormData();
    fd.append('other', 'x');
    const none = await post('?from=md&to=docx', fd);
    expect(none.status).toBe(400);
  });

  it('validates the form with its schema: an unknown field is a 400 as an unknown query parameter is', async () => {
    const fd = form('a.md', '# x');
    fd.append('colour', 'red');
    const res = await post('?from=md&to=docx', fd);
    expect(res.status).toBe(400);
    expect((await res.json()).details).toEqual([{ field: 'colour', issue: 'unknown property' }]);
    const text = new FormData();
    text.append('file', 'not a file');
    const notFile = await post('?from=md&to=docx', text);
    expect(notFile.status).toBe(400);
    expect((await notFile.json()).details).toEqual([{ field: 'file', issue: 'must be a file' }]);
  });

  it('checks which options go with which target once, whichever way they came (width only for previews)', async () => {
    const fd = form('a.md', '# x');
    fd.append('width', '300');
    const res = await post('?from=md&to=docx', fd);
    expect(res.status).toBe(400);
    expect((await res.json()).details).toEqual([{ field: 'width', issue: 'only with to=png or to=jpeg' }]);
    const pdfSource = await post('?from=pdf&to=docx', form('a.pdf', '%PDF-1.7'));
    expect(pdfSource.status).toBe(400);
    expect((await pdfSource.json()).code).toBe('UNSUPPORTED_CONVERSION');
  });

  it('requires an API key', async () => {
    const res = await post('?from=md&to=docx', form('a.md', 'x'), false);
    expect(res.status).toBe(401);
  });

  it('answers 503 for PDF when no office engine runs, and stays healthy after bad input', async () => {
    if (api.services.office) return; // this instance converts; covered by the office tests
    const res = await post('?from=md', form('a.md', '# x'));
    expect(res.status).toBe(503);
    expect((await res.json()).code).toBe('SERVICE_UNAVAILABLE');
    const deep = await post('?from=html&to=docx', form('deep.html', '<div>'.repeat(100_000)));
    expect(deep.status).toBe(200);
    expect((await fetch(`${api.url}/v1/health`)).status).toBeLessThan(600);
  });

  it('documents the route in OpenAPI', async () => {
    const spec = await (await fetch(`${api.url}/openapi.json`)).json();
    const op = spec.paths?.['/v1/convert']?.post;
    expect(op).toBeTruthy();
    expect(JSON.stringify(op)).toContain('pageSize');
  });
});
