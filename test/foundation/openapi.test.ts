/**
 * The OpenAPI document (/openapi.json) as a client generator sees it: Redocly's recommended rules report no
 * error; every protected operation carries the bearer requirement and every operation an operationId; the
 * client's generated types (packages/client/src/api-types.ts) are exactly what the document gives today.
 * Also the convert options sent as form fields (the same schema as the query string).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { unzipSync, strFromU8 } from 'fflate';
import { authed, startTestApi, type TestApi } from '../helpers/api.js';
import { openApiToTypeScript } from '../../src/http/openapi-types.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLIENT_TYPES = path.join(root, 'packages/client/src/api-types.ts');
const PUBLIC = new Set([
  'GET /v1/health',
  'HEAD /v1/health',
  'GET /v1/auth/register',
  'GET /v1/auth/verify',
  // Folio's own signing CA: relying parties fetch these from the URLs in the signing certificate.
  'GET /v1/sign/ca/certificate',
  'GET /v1/sign/ca/crl',
  'POST /v1/sign/ca/ocsp',
  'GET /v1/sign/ca/ocsp/{request}',
]);
const DOCX_MIME = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

interface Op {
  operationId?: string;
  security?: Array<Record<string, string[]>>;
  requestBody?: { content?: Record<string, { schema?: { properties?: Record<string, unknown>; required?: string[] } }> };
}
type Doc = { paths: Record<string, Record<string, Op>>; info: Record<string, unknown>; servers?: unknown[] };

let api: TestApi;
let doc: Doc;
let text: string;
beforeAll(async () => {
  api = await startTestApi();
  const res = await fetch(`${api.url}/openapi.json`);
  expect(res.status).toBe(200);
  text = await res.text();
  doc = JSON.parse(text) as Doc;
}, 60_000);
afterAll(async () => {
  await api?.close();
});

const operations = () =>
  Object.entries(doc.paths).flatMap(([p, methods]) => Object.entries(methods).map(([m, op]) => ({ name: `${m.toUpperCase()} ${p}`, op })));

describe('GET /openapi.json', () => {
  it('passes the Redocly linter (recommended rules) with no error', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: text, absoluteRef: 'openapi.json', config });
    const errors = problems.filter((p) => p.severity === 'error');
    expect(errors.map((e) => `${e.ruleId}: ${e.message} at ${e.location[0]?.pointer ?? ''}`)).toEqual([]);
  }, 60_000);

  it('gives every operation an operationId, and the bearer requirement to every protected one', () => {
    const ops = operations();
    expect(ops.length).toBeGreaterThanOrEqual(11);
    const ids = new Set<string>();
    for (const { name, op } of ops) {
      expect(op.operationId, name).toMatch(/^[a-z][A-Za-z]+$/);
      expect(ids.has(op.operationId!), `${name}: duplicate operationId`).toBe(false);
      ids.add(op.operationId!);
      expect(op.security, name).toEqual(PUBLIC.has(name) ? [] : [{ bearerAuth: [] }]);
    }
  });

  it('has the contract version, the licence of the client, servers, and the upload bodies', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'packages/client/package.json'), 'utf8')) as { license: string };
    expect(doc.info.version).toBe('0.9.0');
    expect((doc.info.license as { identifier: string }).identifier).toBe(pkg.license);
    expect(doc.servers?.length).toBeGreaterThan(0);
    const convert = doc.paths['/v1/convert']!.post!.requestBody!.content!['multipart/form-data']!.schema!;
    expect(convert.required).toEqual(['file']);
    expect(Object.keys(convert.properties!)).toEqual([
      'file',
      'from',
      'to',
      'width',
      'pages',
      'trackedChanges',
      'pdfa',
      'tagged',
      'comments',
      'images',
      'pageSize',
    ]);
    expect(Object.keys(doc.paths['/v1/verify']!.post!.requestBody!.content!).sort()).toEqual(['application/json', 'multipart/form-data']);
  });

  // Compared after the repository's Prettier (tools/lint, installed by scripts/setup.sh), as `npm run format` leaves it.
  const prettierEntry = path.join(root, 'tools/lint/node_modules/prettier/index.mjs');
  it.skipIf(!fs.existsSync(prettierEntry))('generates the client types committed in packages/client/src/api-types.ts', async () => {
    const prettier = (await import(prettierEntry)) as {
      resolveConfig(file: string): Promise<Record<string, unknown> | null>;
      format(source: string, options: Record<string, unknown>): Promise<string>;
    };
    const options = { ...((await prettier.resolveConfig(CLIENT_TYPES)) ?? {}), filepath: CLIENT_TYPES };
    const generated = await prettier.format(openApiToTypeScript(doc as never), options);
    if (process.env.UPDATE_API_TYPES === '1') fs.writeFileSync(CLIENT_TYPES, generated);
    expect(fs.readFileSync(CLIENT_TYPES, 'utf8')).toBe(generated);
  });
});

describe('POST /v1/convert options as form fields', () => {
  const upload = (fields: Record<string, string>) => {
    const fd = new FormData();
    for (const [k, v] of Object.entries(fields)) fd.append(k, v);
    fd.append('file', new Blob(['# Title\n\ntext\n']), 'a.md');
    return fd;
  };
  const post = (query: string, body: FormData) => fetch(`${api.url}/v1/convert${query}`, authed(api, { method: 'POST', body }));

  it('honours from/to/pageSize sent as form fields (before or after the file)', async () => {
    const res = await post('', upload({ from: 'md', to: 'docx', pageSize: 'Letter' }));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(DOCX_MIME);
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="a.docx"');
    const files = unzipSync(new Uint8Array(await res.arrayBuffer()));
    expect(strFromU8(files['word/document.xml']!)).toContain('<w:pgSz w:w="12240" w:h="15840"/>');

    const after = new FormData();
    after.append('file', new Blob(['# Title\n']), 'a.md');
    after.append('to', 'docx');
    const res2 = await post('', after);
    expect(res2.status).toBe(200);
    expect(res2.headers.get('content-type')).toBe(DOCX_MIME);
  });

  it('accepts the same value in the query string and the form', async () => {
    const res = await post('?to=docx', upload({ to: 'docx' }));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(DOCX_MIME);
  });

  it('answers 400 naming the field when the query string and the form disagree', async () => {
    const res = await post('?to=pdf&from=md', upload({ to: 'docx', from: 'md' }));
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; details: Array<{ field: string; issue: string }> };
    expect(body.code).toBe('VALIDATION_ERROR');
    expect(body.details.map((d) => d.field)).toEqual(['to']);
  });

  it('validates form values with the query schema', async () => {
    const res = await post('', upload({ to: 'xlsx', pageSize: 'A3' }));
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; details: Array<{ field: string; issue: string }> };
    expect(body.code).toBe('VALIDATION_ERROR');
    expect(body.details.map((d) => d.field)).toEqual(['to', 'pageSize']);
  });
});
