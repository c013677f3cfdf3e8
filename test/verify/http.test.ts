/**
 * POST /v1/verify over HTTP on the real API: JSON {document} and multipart `file`, the docs/api.md § Verify answer
 * shape, TRUST_ANCHORS from a PEM file, error envelopes for bad input, and a healthy server afterwards.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, authed, type TestApi } from '../helpers/api.js';
import { makePdf, makePki, signPdf, corpusFile, type TestPki } from './fixtures.js';
import { appendPage } from './attacks.js';

let api: TestApi;
let pki: TestPki;
let anchorsDir: string;
let signed: Uint8Array;

beforeAll(async () => {
  pki = makePki();
  anchorsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-verify-anchors-'));
  const anchors = path.join(anchorsDir, 'anchors.pem');
  // A bundle: an unrelated certificate first, then the test root, to check that every block is read.
  fs.writeFileSync(anchors, `# operator bundle\n${pki.stranger.certPem}\n${pki.caPem}`);
  api = await startTestApi({ env: { TRUST_ANCHORS: anchors } });
  signed = signPdf(await makePdf(1), { signer: pki.rsa });
}, 120_000);

afterAll(async () => {
  await api?.close();
  pki?.cleanup();
  if (anchorsDir) fs.rmSync(anchorsDir, { recursive: true, force: true });
});

const postJson = (body: unknown, init: RequestInit = {}) =>
  fetch(
    `${api.url}/v1/verify`,
    authed(api, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), ...init }),
  );
const postFile = (bytes: Uint8Array, name = 'doc.pdf') => {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(bytes)], { type: 'application/pdf' }), name);
  return fetch(`${api.url}/v1/verify`, authed(api, { method: 'POST', body: form }));
};

describe('POST /v1/verify', () => {
  it('JSON base64: a trusted, intact signature → 200 TOTAL_PASSED with the contract shape', async () => {
    const res = await postJson({ document: { base64: Buffer.from(signed).toString('base64') } });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({
      valid: true,
      indication: 'TOTAL_PASSED',
      signatureCount: 1,
      signer: { name: 'Alice Signer', email: 'alice@example.com' },
    });
    expect(typeof body.reason).toBe('string');
    expect(body.document.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(body.document.revisions).toBe(2);
    const s = body.signatures[0];
    for (const k of [
      'fieldName',
      'subFilter',
      'digestAlgorithm',
      'signedAt',
      'signer',
      'byteRange',
      'coverage',
      'integrity',
      'certificate',
      'modificationsAfter',
      'indication',
      'issuedByThisService',
    ]) {
      expect(s, k).toHaveProperty(k);
    }
    expect(Object.keys(s.signer).sort()).toEqual(['email', 'fingerprint', 'issuer', 'name', 'notAfter', 'notBefore', 'serialNumber', 'subject']);
    expect(s.certificate).toEqual({ chainValid: true, trusted: true, validAtSigningTime: true });
    expect(s.byteRange).toHaveLength(4);
    expect(s.coverage).toBe('ENTIRE_FILE');
    expect(s.modificationsAfter).toEqual({ level: 'NONE', details: [] });
  });

  it('data: URI and multipart file give the same verdict', async () => {
    const a = await (await postJson({ document: { base64: `data:application/pdf;base64,${Buffer.from(signed).toString('base64')}` } })).json();
    const res = await postFile(signed);
    expect(res.status).toBe(200);
    const b = await res.json();
    expect(b.valid).toBe(true);
    expect(b.document.sha256).toBe(a.document.sha256);
  });

  it('a manipulated file still answers 200, with valid:false and the finding', async () => {
    const res = await postFile(appendPage(signed));
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ valid: false, indication: 'TOTAL_FAILED' });
    expect(body.signatures[0].modificationsAfter.level).toBe('OTHER');
    expect(body.signatures[0].modificationsAfter.details.length).toBeGreaterThan(0);
    expect(body.reason).toMatch(/MODIFIED_AFTER_SIGNING/);
  });

  it('a corpus file signed by an untrusted certificate → INDETERMINATE, valid stays true', async () => {
    const body = await (await postFile(corpusFile('shadow-2021/hide-v1-image_3-signed.pdf'))).json();
    expect(body).toMatchObject({ valid: true, indication: 'INDETERMINATE' });
    expect(body.signatures[0]).toMatchObject({ subIndication: 'NO_CERTIFICATE_CHAIN_FOUND', certificate: { trusted: false } });
  });

  it('an unsigned PDF → 200 NO_SIGNATURE_FOUND', async () => {
    const body = await (await postFile(await makePdf(1))).json();
    expect(body).toMatchObject({ valid: false, indication: 'NO_SIGNATURE_FOUND', signatureCount: 0, signatures: [] });
  });

  it('bad input: not a PDF 400, encrypted-looking 422, validation 400, no key 401 — then still healthy', async () => {
    let res = await postFile(new Uint8Array(Buffer.from('hello, not a pdf')), 'x.pdf');
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'INVALID_FILE_FORMAT', error: 'Bad Request' });

    const enc = Buffer.from(
      Buffer.from(await makePdf(1))
        .toString('latin1')
        .replace('trailer\n<<', 'trailer\n<</Encrypt <</Filter /Standard>> '),
      'latin1',
    );
    res = await postFile(new Uint8Array(enc));
    expect(res.status).toBe(422);
    expect((await res.json()).code).toBe('UNPROCESSABLE_DOCUMENT');

    res = await postJson({ document: { base64: 'AAAA' }, extra: 1 });
    expect(res.status).toBe(400);
    expect((await res.json()).code).toBe('VALIDATION_ERROR');

    res = await postJson({});
    expect(res.status).toBe(400);

    res = await fetch(`${api.url}/v1/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(401);
    expect((await res.json()).code).toBe('AUTHENTICATION_ERROR');

    res = await postFile(signed.subarray(0, 200));
    expect([200, 422]).toContain(res.status);

    const health = await fetch(`${api.url}/v1/health`);
    expect(health.status).toBeLessThan(500);
  });

  it('a document over 25 MB → 413 FILE_TOO_LARGE, as multipart and as base64', async () => {
    const big = new Uint8Array(26 * 1024 * 1024);
    big.set(Buffer.from('%PDF-1.7\n'));
    let res = await postFile(big);
    expect(res.status).toBe(413);
    expect((await res.json()).code).toBe('FILE_TOO_LARGE');
    res = await postJson({ document: { base64: Buffer.from(big).toString('base64') } });
    expect(res.status).toBe(413);
    expect((await res.json()).code).toBe('FILE_TOO_LARGE');
  });

  it('is described in the OpenAPI document with its error statuses', async () => {
    const doc = await (await fetch(`${api.url}/openapi.json`)).json();
    const op = doc.paths['/v1/verify'].post;
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '413', '415', '422', '429', '500']));
  });
});
