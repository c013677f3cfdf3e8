/**
 * The real API's POST /v1/sign and POST /v1/verify, as the tests on Folio's own output call them.
 */
import { expect } from 'vitest';
import { authed, type TestApi } from '../helpers/api.js';

/** POST /v1/sign with `body` (signer, auditTrail, …) around the document; the signed PDF. */
export async function signViaApi(t: TestApi, pdf: Uint8Array, body: Record<string, unknown>): Promise<Uint8Array> {
  const res = await fetch(
    `${t.url}/v1/sign`,
    authed(t, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ document: { base64: Buffer.from(pdf).toString('base64') }, ...body }),
    }),
  );
  const json = await res.json();
  if (res.status !== 200) throw new Error(`sign answered ${res.status}: ${JSON.stringify(json)}`);
  return new Uint8Array(Buffer.from(json.document.base64, 'base64'));
}

/** POST /v1/verify of `pdf` as a multipart upload; the report (status 200 asserted). */
export async function verifyViaApi(t: TestApi, pdf: Uint8Array) {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(pdf)], { type: 'application/pdf' }), 'signed.pdf');
  const res = await fetch(`${t.url}/v1/verify`, authed(t, { method: 'POST', body: form }));
  expect(res.status).toBe(200);
  return res.json();
}
