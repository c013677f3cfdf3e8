/**
 * The multipart form reader (src/http/multipart-form.ts) on the real app builder: a form schema declares
 * its files (BinaryField, BinaryFiles) and text fields, the stream is read into them, and one validator
 * compiled once per route checks the whole form with the same messages and details as a JSON body. What
 * only the stream can tell (a file in a text field or the other way round, one file too many, a total past
 * its limit) is refused while reading.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { buildApiApp, type FastifyInstance } from '../../src/http/app.js';
import { LocalInFlightLimiter } from '../../src/http/in-flight.js';
import { readForm } from '../../src/http/multipart-form.js';
import { movableBuffers } from '../../src/http/body-buffer.js';
import { BinaryField, BinaryFiles, BooleanString, StringEnum, Type } from '../../src/http/schema.js';
import { FolioError } from '../../src/errors.js';

const One = Type.Object(
  {
    file: BinaryField({ description: 'the document' }),
    note: Type.Optional(Type.String({ maxLength: 5 })),
    to: Type.Optional(StringEnum(['a', 'b'] as const, { default: 'a' })),
  },
  { additionalProperties: false },
);
const Many = Type.Object(
  {
    files: BinaryFiles({ minItems: 2, maxItems: 3, maxTotalBytes: 1000, fileNameMaxLength: 10 }),
    flag: Type.Optional(BooleanString('a flag')),
  },
  { additionalProperties: false },
);

const BOUNDARY = 'folio-form-test';
type Part = { name: string; value: string } | { name: string; file: string; bytes: Uint8Array | string };
function multipart(parts: Part[]): Buffer {
  const out: Buffer[] = [];
  for (const p of parts) {
    const disposition = 'file' in p ? `form-data; name="${p.name}"; filename="${p.file}"` : `form-data; name="${p.name}"`;
    out.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n${'file' in p ? 'Content-Type: application/pdf\r\n' : ''}\r\n`));
    out.push(Buffer.from('file' in p ? p.bytes : p.value), Buffer.from('\r\n'));
  }
  out.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(out);
}

let app: FastifyInstance;
let compiled = 0;

beforeAll(async () => {
  app = await buildApiApp({
    logger: pino({ level: 'silent' }),
    authenticator: { authenticate: async () => null },
    limiter: new LocalInFlightLimiter(10),
    routes: [
      async (a) => {
        a.post('/t/one', async (request) => {
          const { form, sent } = await readForm(request, One);
          return { fileName: form.file.fileName, size: form.file.bytes.length, note: form.note, to: form.to, sent: [...sent].sort() };
        });
        a.post('/t/many', async (request) => {
          const { form } = await readForm(request, Many, {
            tooLarge: () => new FolioError('FILE_TOO_LARGE', 'the files add up to too much', { details: [{ field: 'files', issue: 'sum' }] }),
          });
          return {
            names: form.files.map((f) => f.fileName),
            flag: form.flag,
            // Each file is its own buffer: an engine thread can take it without a copy.
            movable: form.files.map((f) => movableBuffers(f.bytes).length),
          };
        });
        // The same form with a counting compiler (its validator accepts anything): built once for the route.
        a.post(
          '/t/counted',
          {
            validatorCompiler: () => {
              compiled++;
              return () => true;
            },
          },
          async (request) => ({ size: (await readForm(request, One)).form.file.bytes.length }),
        );
      },
    ],
  });
});
afterAll(async () => {
  await app?.close();
});

const post = async (url: string, parts: Part[]) => {
  const res = await app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    payload: multipart(parts),
  });
  return { status: res.statusCode, body: res.json() as Record<string, unknown> & { details?: Array<{ field: string; issue: string }> } };
};
const pdf = (n: number) => '%PDF-1.7\n'.padEnd(n, 'x');

describe('readForm: one file and text fields', () => {
  it('reads the file and the fields; defaults apply, `sent` names only what was sent', async () => {
    const r = await post('/t/one', [
      { name: 'note', value: 'hi' },
      { name: 'file', file: 'a.pdf', bytes: pdf(300) },
    ]);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ fileName: 'a.pdf', size: 300, note: 'hi', to: 'a', sent: ['file', 'note'] });
  });

  it('answers every field problem at once, as a JSON body would (unknown field, bad value, too long)', async () => {
    const r = await post('/t/one', [
      { name: 'file', file: 'a.pdf', bytes: pdf(10) },
      { name: 'to', value: 'c' },
      { name: 'note', value: 'too long' },
      { name: 'extra', value: 'x' },
    ]);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('VALIDATION_ERROR');
    expect(r.body.details).toEqual(
      expect.arrayContaining([
        { field: 'extra', issue: 'unknown property' },
        { field: 'to', issue: 'must be equal to one of the allowed values' },
        { field: 'note', issue: 'must NOT have more than 5 characters' },
      ]),
    );
    expect(r.body.details).toHaveLength(3);
  });

  it('names a missing file as the schema does', async () => {
    const r = await post('/t/one', [{ name: 'note', value: 'x' }]);
    expect(r.status).toBe(400);
    expect(r.body.details).toEqual([{ field: 'file', issue: "must have required property 'file'" }]);
  });

  it('refuses a second file, a file in another field and text in the file field while reading', async () => {
    const two = await post('/t/one', [
      { name: 'file', file: 'a.pdf', bytes: pdf(10) },
      { name: 'file', file: 'b.pdf', bytes: pdf(10) },
    ]);
    expect(two.status).toBe(400);
    expect(two.body.details).toEqual([{ field: 'file', issue: 'more than one file' }]);
    const elsewhere = await post('/t/one', [{ name: 'other', file: 'a.pdf', bytes: pdf(10) }]);
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body.details).toEqual([{ field: 'other', issue: 'only "file" is accepted' }]);
    const textual = await post('/t/one', [{ name: 'file', value: 'not a file' }]);
    expect(textual.status).toBe(400);
    expect(textual.body.details).toEqual([{ field: 'file', issue: 'must be a file' }]);
  });

  it('answers 415 for a body that is not multipart', async () => {
    const res = await app.inject({ method: 'POST', url: '/t/one', headers: { 'content-type': 'application/json' }, payload: '{}' });
    expect(res.statusCode).toBe(415);
  });

  it('compiles the form’s validator once per route', async () => {
    for (let i = 0; i < 3; i++) expect((await post('/t/counted', [{ name: 'file', file: 'a.pdf', bytes: pdf(20) }])).status).toBe(200);
    expect(compiled).toBe(1);
  });
});

describe('readForm: a repeated file field', () => {
  it('keeps the files in order, each in a buffer of its own', async () => {
    const r = await post('/t/many', [
      { name: 'files', file: 'a.pdf', bytes: pdf(100) },
      { name: 'flag', value: 'true' },
      { name: 'files', file: 'b.pdf', bytes: pdf(200) },
    ]);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ names: ['a.pdf', 'b.pdf'], flag: 'true', movable: [1, 1] });
  });

  it('holds the count, the file names and the total to the schema', async () => {
    const one = await post('/t/many', [{ name: 'files', file: 'a.pdf', bytes: pdf(10) }]);
    expect(one.body.details).toEqual([{ field: 'files', issue: 'must NOT have fewer than 2 items' }]);
    const four = await post(
      '/t/many',
      ['a', 'b', 'c', 'd'].map((n) => ({ name: 'files', file: `${n}.pdf`, bytes: pdf(10) })),
    );
    expect(four.status).toBe(400);
    expect(four.body.details).toEqual([{ field: 'files', issue: 'must NOT have more than 3 items' }]);
    const named = await post('/t/many', [
      { name: 'files', file: 'a.pdf', bytes: pdf(10) },
      { name: 'files', file: 'much-too-long.pdf', bytes: pdf(10) },
    ]);
    expect(named.status).toBe(400);
    expect(named.body.details).toEqual([{ field: 'files.1.fileName', issue: 'must NOT have more than 10 characters' }]);
    const big = await post('/t/many', [
      { name: 'files', file: 'a.pdf', bytes: pdf(600) },
      { name: 'files', file: 'b.pdf', bytes: pdf(600) },
    ]);
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ code: 'FILE_TOO_LARGE', message: 'the files add up to too much' });
  });
});
