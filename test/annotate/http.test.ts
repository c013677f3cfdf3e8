/**
 * POST /v1/annotate and /v1/annotate/fields over HTTP on the real API, with the bad input of the issue:
 * not a DOCX, duplicate ids, an image that is not one, a 10,000-row table, DOCTYPE/entity expansion in any
 * part, XML metacharacters and control characters in values, and the request-shape errors of docs/api.md § Annotate.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { strToU8, unzipSync, zipSync } from 'fflate';
import { authed, startTestApi, type TestApi } from '../helpers/api.js';
import { b64, count, makeDocx, para, PNG_1x1, run, sdt, textOf, unpack } from './helpers.js';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

interface Envelope {
  code: string;
  message: string;
  requestId: string;
  details?: Array<{ field: string; issue: string }>;
}
interface Annotated {
  document: { base64: string; contentType: string };
  report: { filled: Array<{ id: string; type: string; occurrences: number }>; unmatched: string[]; unfilled: string[]; warnings: string[] };
}

async function post(path: string, body: unknown, withKey = true): Promise<{ status: number; json: unknown }> {
  const init: RequestInit = {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  };
  const res = await fetch(`${api.url}${path}`, withKey ? authed(api, init) : init);
  return { status: res.status, json: await res.json() };
}

const template = makeDocx({ body: para(run('Hello {{name}}')) + para(sdt('<w:tag w:val="city"/><w:id w:val="5"/>', run('x'))) });
const docOf = (r: { json: unknown }) => unpack(Buffer.from((r.json as Annotated).document.base64, 'base64'));

/** Rewrites one part of a DOCX. */
function withPart(docx: Uint8Array, name: string, xml: string): Uint8Array {
  const files = unzipSync(docx);
  files[name] = strToU8(xml);
  return zipSync(files);
}

describe('POST /v1/annotate', () => {
  it('fills and answers the document as base64 with the report', async () => {
    const r = await post('/v1/annotate', {
      document: { base64: b64(template) },
      fields: [
        { id: 'name', type: 'text', value: 'World' },
        { id: 'city', type: 'text', value: 'Paris' },
      ],
    });
    expect(r.status).toBe(200);
    const body = r.json as Annotated;
    expect(body.document.contentType).toBe('application/vnd.openxmlformats-officedocument.wordprocessingml.document');
    expect(body.report).toEqual({
      filled: [
        { id: 'name', type: 'text', occurrences: 1 },
        { id: 'city', type: 'text', occurrences: 1 },
      ],
      unmatched: [],
      unfilled: [],
      warnings: [],
    });
    expect(textOf(docOf(r).document)).toContain('Hello World');
    // A data: URI is accepted for the document too.
    const uri = await post('/v1/annotate', { document: { base64: `data:application/octet-stream;base64,${b64(template)}` }, fields: [] });
    expect(uri.status).toBe(200);
    expect((uri.json as Annotated).report.unfilled).toEqual(['name', 'city']);
  });

  it('needs an API key', async () => {
    const r = await post('/v1/annotate', { document: { base64: b64(template) }, fields: [] }, false);
    expect(r.status).toBe(401);
    expect((r.json as Envelope).code).toBe('AUTHENTICATION_ERROR');
  });

  it('?strict=true makes unmatched ids a 422 naming them; ?flatten=true removes every control', async () => {
    const strict = await post('/v1/annotate?strict=true', {
      document: { base64: b64(template) },
      fields: [
        { id: 'name', type: 'text', value: 'a' },
        { id: 'nothing', type: 'text', value: 'b' },
      ],
    });
    expect(strict.status).toBe(422);
    expect(strict.json).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'fields[1].id', issue: 'matches no field in the template' }] });
    const flat = await post('/v1/annotate?flatten=true', {
      document: { base64: b64(template) },
      fields: [{ id: 'city', type: 'text', value: 'Rome' }],
    });
    expect(flat.status).toBe(200);
    const doc = docOf(flat).document;
    expect(count(doc, '<w:sdt>')).toBe(0);
    expect(textOf(doc)).toContain('Rome');
  });

  it('?to=pdf without an office engine is 503 with Retry-After', async () => {
    const res = await fetch(
      `${api.url}/v1/annotate?to=pdf`,
      authed(api, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ document: { base64: b64(template) }, fields: [] }),
      }),
    );
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBeTruthy();
  });

  it('rejects request shapes the contract forbids with 400 and the offending fields', async () => {
    const doc = { base64: b64(template) };
    const cases: Array<[unknown, string]> = [
      [{ document: doc, fields: [], extra: 1 }, 'extra'],
      [{ document: doc, fields: [{ id: 'a', type: 'text', value: 'x', colour: 'red' }] }, 'fields.0.colour'],
      [{ document: doc, fields: [{ id: 'a', type: 'text', value: 'x', options: { bold: true } }] }, 'fields.0.options.bold'],
      [{ document: doc, fields: [{ id: 'a', group: 'g', type: 'text', value: 'x' }] }, 'fields.0'],
      [{ document: doc, fields: [{ type: 'text', value: 'x' }] }, 'fields.0'],
      [{ document: doc, fields: [{ id: 'a', type: 'number', value: 'x' }] }, 'fields.0.type'],
      [{ document: doc, fields: [{ id: 'a', type: 'text' }] }, 'fields.0.value'],
      [{ document: { base64: 'x', url: 'https://example.com/a.docx' }, fields: [] }, 'document'],
      [{ fields: [] }, 'document'],
    ];
    for (const [body, field] of cases) {
      const r = await post('/v1/annotate', body);
      expect(r.status, JSON.stringify(body).slice(0, 120)).toBe(400);
      const env = r.json as Envelope;
      expect(env.code).toBe('VALIDATION_ERROR');
      expect(env.details!.map((d) => d.field)).toContain(field);
    }
  });
});

describe('bad input', () => {
  it('a template that is not a DOCX is 400 INVALID_FILE_FORMAT', async () => {
    const notZip = await post('/v1/annotate', { document: { base64: Buffer.from('just some text, not a document').toString('base64') }, fields: [] });
    expect(notZip.status).toBe(400);
    expect((notZip.json as Envelope).code).toBe('INVALID_FILE_FORMAT');
    const pdf = await post('/v1/annotate', {
      document: { base64: Buffer.from('%PDF-1.7\n%âãÏÓ\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF').toString('base64') },
      fields: [],
    });
    expect(pdf.status).toBe(400);
    const zipNoWord = await post('/v1/annotate', { document: { base64: b64(zipSync({ 'a.txt': strToU8('hello') })) }, fields: [] });
    expect(zipNoWord.status).toBe(400);
    expect((zipNoWord.json as Envelope).code).toBe('INVALID_FILE_FORMAT');
    const fields = await post('/v1/annotate/fields', { document: { base64: Buffer.from('nope').toString('base64') } });
    expect(fields.status).toBe(400);
  });

  it('duplicate ids in the template are all filled and reported with their count', async () => {
    const dup = makeDocx({
      body:
        para(sdt('<w:tag w:val="n"/><w:id w:val="1"/>', run('x'))) +
        para(sdt('<w:tag w:val="n"/><w:id w:val="1"/>', run('y'))) +
        para(run('{{n}} {{n}}')),
      header: para(sdt('<w:tag w:val="n"/><w:id w:val="1"/>', run('z'))),
    });
    const r = await post('/v1/annotate', { document: { base64: b64(dup) }, fields: [{ id: 'n', type: 'text', value: 'Same' }] });
    expect(r.status).toBe(200);
    // Three controls tagged "n" (two in the body sharing a w:id, one in the header) and two {{n}}.
    expect((r.json as Annotated).report.filled).toEqual([{ id: 'n', type: 'text', occurrences: 5 }]);
    const u = docOf(r);
    expect(count(textOf(u.document), 'Same')).toBe(4);
    expect(textOf(u.part('word/header1.xml'))).toContain('Same');
  });

  it('an image that is not an image is 422 naming the field', async () => {
    for (const value of [
      Buffer.from('this is not an image at all, just text').toString('base64'),
      'data:image/png;base64,AAAA',
      'not base64 !!',
      'data:image/png;base64,' + Buffer.from('<html></html>').toString('base64'),
    ]) {
      const r = await post('/v1/annotate', {
        document: { base64: b64(template) },
        fields: [
          { id: 'name', type: 'text', value: 'ok' },
          { id: 'city', type: 'image', value },
        ],
      });
      expect(r.status, value).toBe(422);
      expect(r.json).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'fields[1].value' }] });
    }
    const ssrf = await post('/v1/annotate', {
      document: { base64: b64(template) },
      fields: [{ id: 'city', type: 'image', value: 'http://127.0.0.1:9/x.png' }],
    });
    expect(ssrf.status).toBe(400);
    expect(ssrf.json).toMatchObject({ code: 'URL_NOT_ALLOWED', details: [{ field: 'fields[0].value' }] });
  });

  it('a 10,000-row table value works (and a table beyond the cell budget is refused)', async () => {
    const tbl = makeDocx({
      body: `<w:tbl><w:tblPr/><w:tblGrid><w:gridCol w:w="3000"/><w:gridCol w:w="3000"/><w:gridCol w:w="3000"/></w:tblGrid><w:tr><w:tc>${para(run('Item'))}</w:tc><w:tc>${para(run('Qty'))}</w:tc><w:tc>${para(run('Price'))}</w:tc></w:tr><w:tr><w:tc>${para(run('{{rows}}', '<w:b/>'))}</w:tc><w:tc>${para('')}</w:tc><w:tc>${para('')}</w:tc></w:tr></w:tbl>${para('')}`,
    });
    const rows = Array.from({ length: 10_000 }, (_, i) => [`item ${i}`, String(i), `${i}.99`]);
    const r = await post('/v1/annotate', { document: { base64: b64(tbl) }, fields: [{ id: 'rows', type: 'table', value: rows }] });
    expect(r.status).toBe(200);
    const doc = docOf(r).document;
    expect(count(doc, '<w:tr>')).toBe(10_001);
    expect(doc).toContain('item 9999');
    expect(count(doc, '<w:b/>')).toBe(10_000);
    // Beyond the 100,000-cell budget of one table value, still below the JSON body's 500,000-value bound.
    const huge = Array.from({ length: 12_000 }, () => Array.from({ length: 10 }, () => 'x'));
    const over = await post('/v1/annotate', { document: { base64: b64(tbl) }, fields: [{ id: 'rows', type: 'table', value: huge }] });
    expect(over.status).toBe(422);
    expect(over.json).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'fields[0].value' }] });
    // Beyond the body bound the request is refused before annotate sees it, naming the bound.
    const bomb = Array.from({ length: 30_000 }, () => Array.from({ length: 20 }, () => 'x'));
    const refused = await post('/v1/annotate', { document: { base64: b64(tbl) }, fields: [{ id: 'rows', type: 'table', value: bomb }] });
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'body', issue: 'more than 500000 values' }] });
  });

  it('DOCTYPE or entity declarations in any part are rejected without expansion', async () => {
    const laughs =
      '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;"><!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">]>';
    const parts: Array<[string, string]> = [
      [
        'word/document.xml',
        `${laughs}<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>&lol9; {{name}}</w:t></w:r></w:p></w:body></w:document>`,
      ],
      [
        'word/header1.xml',
        `${laughs}<w:hdr xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:hdr>`,
      ],
      ['customXml/item1.xml', '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>'],
      [
        '[Content_Types].xml',
        '<?xml version="1.0"?><!DOCTYPE Types SYSTEM "http://example.com/t.dtd"><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>',
      ],
    ];
    // A UTF-16 part cannot hide its DOCTYPE from the check.
    const utf16 = Buffer.concat([
      Buffer.from([0xff, 0xfe]),
      Buffer.from('<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>', 'utf16le'),
    ]);
    const base = makeDocx({ body: para(run('{{name}}')), header: para(run('h')) });
    const utf16Docx = unzipSync(base);
    utf16Docx['customXml/item1.xml'] = new Uint8Array(utf16);
    const r16 = await post('/v1/annotate', { document: { base64: b64(zipSync(utf16Docx)) }, fields: [] });
    expect(r16.status).toBe(422);
    expect((r16.json as Envelope).code).toBe('UNPROCESSABLE_DOCUMENT');
    for (const [name, xml] of parts) {
      const r = await post('/v1/annotate', {
        document: { base64: b64(withPart(base, name, xml)) },
        fields: [{ id: 'name', type: 'text', value: 'v' }],
      });
      expect(r.status, name).toBe(422);
      const env = r.json as Envelope;
      expect(env.code).toBe('UNPROCESSABLE_DOCUMENT');
      expect(env.message).toMatch(/DOCTYPE|entities/);
      expect(env.message).not.toContain('lollol');
    }
  });

  it('malformed or absurdly deep XML in a part is 422, not a crash', async () => {
    const base = makeDocx({ body: para(run('{{name}}')) });
    const broken = withPart(
      base,
      'word/document.xml',
      '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>x</w:r></w:p></w:body></w:document>',
    );
    const deep = withPart(
      base,
      'word/document.xml',
      `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${'<w:sdt><w:sdtContent>'.repeat(5000)}${'</w:sdtContent></w:sdt>'.repeat(5000)}</w:body></w:document>`,
    );
    for (const docx of [broken, deep]) {
      const r = await post('/v1/annotate', { document: { base64: b64(docx) }, fields: [{ id: 'name', type: 'text', value: 'v' }] });
      expect(r.status).toBe(422);
      expect((r.json as Envelope).code).toBe('UNPROCESSABLE_DOCUMENT');
    }
  });

  it('XML metacharacters and control characters in every kind of value never corrupt the XML', async () => {
    const nasty = 'a</w:t></w:r><w:r><w:t>b]]>&amp;&lt;"\'\u0000\u0007\u001f\ud800 <!-- --> <?pi?> &#0; end';
    const docx = makeDocx({
      body:
        para(run('{{t}}')) +
        para(run('{{l}}')) +
        para(run('{{h}}')) +
        para(run('{{s}}')) +
        `<w:tbl><w:tblPr/><w:tblGrid><w:gridCol w:w="3000"/></w:tblGrid><w:tr><w:tc>${para(run('{{tb}}'))}</w:tc></w:tr></w:tbl>${para('')}`,
    });
    const r = await post('/v1/annotate', {
      document: { base64: b64(docx) },
      fields: [
        { id: 't', type: 'text', value: nasty },
        { id: 'l', type: 'link', value: { url: 'https://example.com/?q="<x>"&y=1', text: nasty } },
        { id: 'h', type: 'html', value: `<p>${nasty.replace(/</g, '&lt;')}</p>` },
        { id: 's', type: 'signature', value: 'Ann "O\'Neil" & Co' },
        { id: 'tb', type: 'table', value: [[nasty], ['\u0001\u0002plain']] },
      ],
    });
    expect(r.status).toBe(200);
    const u = docOf(r); // checks every XML part is well-formed
    const text = textOf(u.document);
    expect(text).toContain('a</w:t></w:r><w:r><w:t>b]]>&amp;&lt;"\' <!-- --> <?pi?> &#0; end');
    expect(text).toContain('plain');
    // eslint-disable-next-line no-control-regex
    expect(u.document).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/);
    expect(u.part('word/_rels/document.xml.rels')).toContain('Target="https://example.com/?q=&quot;&lt;x&gt;&quot;&amp;y=1"');
    expect(u.document).toContain('descr="Signature of Ann &quot;O\'Neil&quot; &amp; Co"');
  });
});

describe('POST /v1/annotate/fields', () => {
  it('lists controls and placeholders with their location', async () => {
    const docx = makeDocx({
      body: para(run('{{a}}')) + para(sdt('<w:alias w:val="Title"/><w:tag w:val="title"/><w:id w:val="12"/><w:text/>', run('t'))),
      header: para(run('{{a}} and {{ a }}')),
      footer: para(
        sdt(
          '<w:id w:val="13"/><w:tag w:val="{&quot;fieldId&quot;:&quot;f1&quot;,&quot;group&quot;:&quot;g1&quot;,&quot;fieldType&quot;:&quot;signature&quot;}"/>',
          run('s'),
        ),
      ),
    });
    const r = await post('/v1/annotate/fields', { document: { base64: b64(docx) } });
    expect(r.status).toBe(200);
    const fields = (r.json as { fields: Array<Record<string, unknown>> }).fields;
    expect(fields).toEqual([
      expect.objectContaining({ id: 'a', tag: null, alias: null, group: null, type: 'text', location: 'body', kind: 'placeholder', occurrences: 1 }),
      expect.objectContaining({
        id: '12',
        tag: 'title',
        alias: 'Title',
        group: null,
        type: 'text',
        location: 'body',
        kind: 'control',
        control: 'text',
      }),
      expect.objectContaining({ id: 'a', location: 'header', kind: 'placeholder', occurrences: 2 }),
      expect.objectContaining({ id: '13', group: 'g1', type: 'signature', location: 'footer', kind: 'control' }),
    ]);
    const bad = await post('/v1/annotate/fields', { document: { base64: b64(docx) }, fields: [] });
    expect(bad.status).toBe(400);
  });

  it('is in the OpenAPI document with its error statuses', async () => {
    const spec = (await (await fetch(`${api.url}/openapi.json`)).json()) as {
      paths: Record<string, { post: { responses: Record<string, unknown> } }>;
    };
    for (const s of ['200', '400', '401', '413', '422', '429', '500']) expect(spec.paths['/v1/annotate']!.post.responses[s], s).toBeDefined();
    expect(spec.paths['/v1/annotate/fields']).toBeDefined();
  });
});

// Keep the 1×1 PNG import used by other files tree-shaken here (a valid image for a quick sanity check).
it('a valid 1×1 PNG over HTTP is embedded', async () => {
  const r = await post('/v1/annotate', {
    document: { base64: b64(template) },
    fields: [{ id: 'city', type: 'image', value: `data:image/png;base64,${PNG_1x1}` }],
  });
  expect(r.status).toBe(200);
  expect(docOf(r).document).toContain('<wp:inline');
});
