/**
 * PAdES B-T from Folio's own signer (TSA_URL set to the in-process RFC 3161 TSA of the sign tests): the
 * signature timestamp token is verified, trusted when the TSA root is in TRUST_ANCHORS, and its time is used
 * for the certificate validity check.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, authed, type TestApi } from '../helpers/api.js';
import { startTestTsa, type TestTsa } from '../sign/tsa-server.js';
import { makePdf } from './fixtures.js';

let api: TestApi;
let tsa: TestTsa;
let dir: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-verify-tsa-'));
  tsa = await startTestTsa(dir);
  const anchors = path.join(dir, 'anchors.pem');
  fs.writeFileSync(anchors, tsa.rootPem);
  api = await startTestApi({ env: { TSA_URL: tsa.url, TRUST_ANCHORS: anchors } });
}, 120_000);

afterAll(async () => {
  await api?.close();
  await tsa?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('PAdES B-T output of /v1/sign', () => {
  it('carries a valid, trusted signature timestamp', async () => {
    const signRes = await fetch(
      `${api.url}/v1/sign`,
      authed(api, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          document: { base64: Buffer.from(await makePdf(1)).toString('base64') },
          signer: { name: 'Tim Stamp', email: 'tim@example.com' },
          auditTrail: [{ type: 'document.signed', timestamp: '2026-11-20T10:00:00Z' }],
        }),
      }),
    );
    expect(signRes.status).toBe(200);
    const pdf = Buffer.from((await signRes.json()).document.base64, 'base64');
    const form = new FormData();
    form.append('file', new Blob([pdf]), 'signed.pdf');
    const r = await (await fetch(`${api.url}/v1/verify`, authed(api, { method: 'POST', body: form }))).json();
    expect(r).toMatchObject({ valid: true, indication: 'TOTAL_PASSED' });
    const s = r.signatures[0];
    expect(s.timestamp).toMatchObject({ valid: true, trusted: true });
    expect(Math.abs(Date.parse(s.timestamp.time) - Date.now())).toBeLessThan(10 * 60_000);
    expect(s.certificate.validAtSigningTime).toBe(true);
  });
});
