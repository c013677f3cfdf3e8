/**
 * POST /v1/sign over HTTP with the key in a SoftHSM2 token (SIGNING_PKCS11_MODULE, SIGNING_PKCS11_URI,
 * SIGNING_CERT_CHAIN), each describe with its own token directory: pdfsig (poppler + NSS trusting the token
 * certificate's CA) finds the signature valid and names the token's certificate; every PAdES level with the
 * test TSA (B-LT/B-LTA with the CA's CRL from an allow-listed host); 20 concurrent requests; GET /v1/verify/key
 * and /v1/health; nothing private in DATA_DIR. Then a rotation: the identity signed with before is published
 * as `previous` and verify still trusts it as this service's own.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authed, startTestApi, type TestApi } from '../helpers/api.js';
import { buildCrl } from '../../src/sign/index.js';
import { loadTrustStore, verifyPdf } from '../../src/verify/index.js';
import { makePdf, nssDbTrusting, pdfsigBlocks, postSign, qpdfCheck, signBody, writeTemp } from './helpers.js';
import { freePort, pdfsigAsync, readDss } from './ltv-helpers.js';
import { startTestTsa, type TestTsa } from './tsa-server.js';
import { TestToken, filesUnder, hasPemPrivateKey, hsmMissing, type IssuedKey } from './hsm-helpers.js';
import { FolioProcess } from '../adversarial/server.js';

const missing = hsmMissing();
if (missing) console.warn(`hsm-api: skipped — ${missing}`);

const fingerprint = (pem: string) => new crypto.X509Certificate(pem).fingerprint256;

async function verifyOver(t: TestApi, pdf: Uint8Array): Promise<any> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(pdf)], { type: 'application/pdf' }), 'signed.pdf');
  const res = await fetch(`${t.url}/v1/verify`, authed(t, { method: 'POST', body: form }));
  expect(res.status).toBe(200);
  return res.json();
}

/** A CA's CRL served over HTTP from the test process (the B-LT revocation data of a certificate from another CA). */
async function crlServer(token: TestToken, port: number): Promise<{ port: number; close(): Promise<void> }> {
  const ca = {
    privateKey: crypto.createPrivateKey(fs.readFileSync(path.join(token.work, 'ca.key'))),
    certificateDer: new Uint8Array(new crypto.X509Certificate(fs.readFileSync(path.join(token.work, 'ca.pem'))).raw),
  };
  const crl = Buffer.from(buildCrl(ca));
  const server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/pkix-crl' }).end(crl));
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe.skipIf(missing)('POST /v1/sign with an ECDSA key in a SoftHSM2 token', () => {
  let token: TestToken;
  let key: IssuedKey;
  let tsa: TestTsa;
  let crl: { port: number; close(): Promise<void> };
  let api: TestApi;
  let nss: string;

  beforeAll(async () => {
    token = new TestToken();
    tsa = await startTestTsa(token.work);
    // The certificate names its CA's CRL on a host B-LT may fetch from (URL_FETCH_ALLOWLIST), like a CA's real one.
    const crlPort = await freePort();
    key = token.issueKey('signer', { type: 'ec', curve: 'P-256' }, { extensions: `crlDistributionPoints=URI:http://127.0.0.1:${crlPort}/ca.crl` });
    crl = await crlServer(token, crlPort);
    process.env.SOFTHSM2_CONF = token.conf;
    api = await startTestApi({
      env: {
        ...token.settings(key),
        TSA_URL: tsa.url,
        URL_FETCH_ALLOWLIST: `127.0.0.1:${crl.port}`,
        TRUST_ANCHORS: writeTemp(token.work, 'tsa-root.pem', tsa.rootPem),
      },
    });
    nss = nssDbTrusting(key.rootPem);
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    await tsa?.close();
    await crl?.close();
    token?.remove();
    if (nss) fs.rmSync(nss, { recursive: true, force: true });
  });

  it('signs through the token: pdfsig finds the signature valid, made with the token certificate', async () => {
    const res = await postSign(api, signBody(await makePdf(2)));
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const file = writeTemp(token.work, 'signed.pdf', res.pdf!);
    const [block] = pdfsigBlocks(await pdfsigAsync(file, nss));
    expect(block).toContain('Signature Validation: Signature is Valid.');
    expect(block).toContain('Certificate Validation: Certificate is Trusted.');
    expect(block).toContain('Signer Certificate Common Name: Folio HSM signer');
    expect(block).toContain('Total document signed');
    const report = await verifyOver(api, res.pdf!);
    expect(report.valid).toBe(true);
    expect(report.signatures[0].signer.fingerprint).toBe(fingerprint(key.certPem));
    expect(report.signatures[0].issuedByThisService).toBe(true);
  }, 60_000);

  it.each(['B-B', 'B-T', 'B-LT', 'B-LTA'])(
    'PAdES %s with the test TSA: valid for pdfsig and Folio verify',
    async (level) => {
      const res = await postSign(api, { ...signBody(await makePdf(1)), level });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      const file = writeTemp(token.work, `${level}.pdf`, res.pdf!);
      expect(qpdfCheck(file).status).toBe(0);
      const blocks = pdfsigBlocks(await pdfsigAsync(file, nss));
      const cades = blocks.find((b) => b.includes('ETSI.CAdES.detached'))!;
      expect(cades).toContain('Signature Validation: Signature is Valid.');
      expect(cades).toContain('Signer Certificate Common Name: Folio HSM signer');
      const report = await verifyOver(api, res.pdf!);
      if (level === 'B-LTA') expect(report.signatures.map((s: any) => s.subFilter)).toEqual(['ETSI.CAdES.detached', 'ETSI.RFC3161']);
      expect(report.indication, report.reason).toBe('TOTAL_PASSED');
      expect(report.signatures[0]).toMatchObject({ level, valid: true });
      if (level === 'B-LT' || level === 'B-LTA') {
        const dss = readDss(res.pdf!)!;
        expect(dss.crls).toHaveLength(1);
        expect(dss.certs.map((c) => new crypto.X509Certificate(c).fingerprint256)).toContain(fingerprint(key.certPem));
      }
    },
    60_000,
  );

  it('answers 20 concurrent requests, every signature valid', async () => {
    const pdf = await makePdf(1);
    // Two API keys: one key may have 10 requests in flight (the 11th is a 429 by design).
    const second = { ...api, apiKey: (await api.services.auth.issueKey('second@example.com')).apiKey };
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => postSign(i % 2 ? second : api, { ...signBody(pdf), level: 'B-B' })));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    const trust = loadTrustStore({ rootCertificatePem: key.rootPem });
    for (const r of results) {
      const report = verifyPdf(r.pdf!, { trust });
      expect(report.valid).toBe(true);
      expect(report.signatures[0]!.signer?.fingerprint).toBe(fingerprint(key.certPem));
    }
    const [block] = pdfsigBlocks(await pdfsigAsync(writeTemp(token.work, 'concurrent.pdf', results[19]!.pdf!), nss));
    expect(block).toContain('Signature Validation: Signature is Valid.');
  }, 120_000);

  it('publishes the token certificate at GET /v1/verify/key, and its health at /v1/health', async () => {
    const res = await fetch(`${api.url}/v1/verify/key`, authed(api));
    const body = (await res.json()) as Record<string, unknown>;
    expect(res.status).toBe(200);
    expect(fingerprint(body.certificate as string)).toBe(fingerprint(key.certPem));
    expect(body.algorithm).toBe('ECDSA P-256 SHA-256');
    expect(body.previous).toBeUndefined();
    const health = (await (await fetch(`${api.url}/v1/health`)).json()) as { engines: Record<string, { status: string }> };
    expect(health.engines.signingKey?.status).toBe('healthy');
  });

  it('wrote nothing private into DATA_DIR and generated no key', () => {
    const files = filesUnder(api.dataDir);
    expect(fs.existsSync(path.join(api.dataDir, 'signing'))).toBe(false);
    expect(files.filter((f) => hasPemPrivateKey(f.bytes)).map((f) => f.file)).toEqual([]);
    // The key's own secret bytes appear nowhere (SQLite files and their WAL included).
    for (const f of files) expect(f.bytes.includes(key.secret), f.file).toBe(false);
    // The token still holds the key, as a sensitive object.
    expect(token.objects()).toMatch(/Private Key Object; EC[\s\S]*label:\s+signer[\s\S]*Access:\s+sensitive/);
  });
});

describe.skipIf(missing)('POST /v1/sign with an RSA key in a SoftHSM2 token', () => {
  let token: TestToken;
  let key: IssuedKey;
  let api: TestApi;

  beforeAll(async () => {
    token = new TestToken();
    key = token.issueKey('rsa-signer', { type: 'rsa', bits: 3072 });
    process.env.SOFTHSM2_CONF = token.conf;
    api = await startTestApi({
      env: token.settings(key, `pkcs11:token=${token.label};id=%${key.id.match(/../g)!.join('%')}?pin-source=file:${token.pinFile}`),
    });
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    token?.remove();
  });

  it('signs with RSA PKCS#1 v1.5 (key named by its id), valid for pdfsig', async () => {
    const res = await postSign(api, signBody(await makePdf(1)));
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const nss = nssDbTrusting(key.rootPem);
    try {
      const [block] = pdfsigBlocks(await pdfsigAsync(writeTemp(token.work, 'rsa.pdf', res.pdf!), nss));
      expect(block).toContain('Signature Validation: Signature is Valid.');
      expect(block).toContain('Signer Certificate Common Name: Folio HSM rsa-signer');
    } finally {
      fs.rmSync(nss, { recursive: true, force: true });
    }
    const report = await verifyOver(api, res.pdf!);
    expect(report.valid).toBe(true);
    expect(report.signatures[0].signatureAlgorithm).toBe('RSA');
    const key2 = (await (await fetch(`${api.url}/v1/verify/key`, authed(api))).json()) as { algorithm: string };
    expect(key2.algorithm).toBe('RSA-3072 PKCS#1 v1.5 SHA-256');
  }, 60_000);
});

describe.skipIf(missing)('rotation: from the generated identity to a token key', () => {
  let token: TestToken;
  let key: IssuedKey;
  let before: TestApi;
  let after: TestApi | undefined;
  let signedBefore: Uint8Array;

  beforeAll(async () => {
    token = new TestToken();
    key = token.issueKey('new-signer', { type: 'ec', curve: 'P-384' });
    // The replica as it was: the generated identity in its DATA_DIR.
    before = await startTestApi();
    const res = await postSign(before, signBody(await makePdf(1)));
    expect(res.status).toBe(200);
    signedBefore = res.pdf!;
  }, 120_000);
  afterAll(async () => {
    await after?.close();
    await before?.close();
    token?.remove();
  });

  it('publishes the earlier certificate under `previous` and keeps trusting what it signed', async () => {
    const dir = path.join(before.dataDir, 'signing');
    const previousChain = writeTemp(
      token.work,
      'previous.pem',
      fs.readFileSync(path.join(dir, 'signer.pem'), 'utf8') + fs.readFileSync(path.join(dir, 'root-ca.pem'), 'utf8'),
    );
    process.env.SOFTHSM2_CONF = token.conf;
    after = await startTestApi({ env: { ...token.settings(key), SIGNING_PREVIOUS_CERT_CHAIN: previousChain } });

    const published = (await (await fetch(`${after.url}/v1/verify/key`, authed(after))).json()) as {
      certificate: string;
      previous: Array<{ certificate: string; algorithm: string }>;
    };
    expect(fingerprint(published.certificate)).toBe(fingerprint(key.certPem));
    expect(published.previous).toHaveLength(1);
    expect(fingerprint(published.previous[0]!.certificate)).toBe(fingerprint(before.services.signing!.certificatePem));
    expect(published.previous[0]!.algorithm).toBe('ECDSA P-256 SHA-256');

    // A document signed before the rotation: trusted and recognised as this service's own.
    const old = await verifyOver(after, signedBefore);
    expect(old.indication, old.reason).toBe('TOTAL_PASSED');
    expect(old.signatures[0]).toMatchObject({ issuedByThisService: true, certificate: { trusted: true } });
    // Without the setting the same verifier would not (the test can fail).
    const without = verifyPdf(signedBefore, {
      trust: loadTrustStore({
        rootCertificatePem: after.services.signing!.rootCertificatePem,
        certificatePem: after.services.signing!.certificatePem,
      }),
    });
    expect(without.signatures[0]!.certificate?.trusted).toBe(false);

    // Signed again after the rotation: both signatures valid, the new one with the token key (P-384, SHA-384).
    const again = await postSign(after, signBody(signedBefore));
    expect(again.status, JSON.stringify(again.json)).toBe(200);
    const both = await verifyOver(after, again.pdf!);
    expect(both.valid, both.reason).toBe(true);
    expect(both.signatures.map((s: any) => s.signer.fingerprint)).toEqual([
      fingerprint(before.services.signing!.certificatePem),
      fingerprint(key.certPem),
    ]);
    expect(both.signatures[1].digestAlgorithm).toBe('SHA-384');
  }, 120_000);
});

describe.skipIf(missing)('the compiled server, started as an operator starts it', () => {
  let token: TestToken;
  let key: IssuedKey;
  let server: FolioProcess | undefined;

  beforeAll(() => {
    token = new TestToken();
    key = token.issueKey('outside', { type: 'ec', curve: 'P-256' });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    token?.remove();
  });

  it('signs with the token key given the three settings, and generates none', async () => {
    server = await FolioProcess.start({ ...token.settings(key), OFFICE_WORKERS: '1', ENGINE_WORKERS: '2' });
    const apiKey = await server.newKey();
    const res = await fetch(`${server.url}/v1/sign`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(signBody(await makePdf(1))),
    });
    const json = (await res.json()) as { document: { base64: string } };
    expect(res.status, JSON.stringify(json)).toBe(200);
    const nss = nssDbTrusting(key.rootPem);
    try {
      const [block] = pdfsigBlocks(await pdfsigAsync(writeTemp(token.work, 'outside.pdf', Buffer.from(json.document.base64, 'base64')), nss));
      expect(block).toContain('Signature Validation: Signature is Valid.');
      expect(block).toContain('Signer Certificate Common Name: Folio HSM outside');
    } finally {
      fs.rmSync(nss, { recursive: true, force: true });
    }
    const published = (await (await fetch(`${server.url}/v1/verify/key`, { headers: { authorization: `Bearer ${apiKey}` } })).json()) as {
      certificate: string;
    };
    expect(fingerprint(published.certificate)).toBe(fingerprint(key.certPem));
    expect(fs.existsSync(path.join(server.dataDir, 'signing'))).toBe(false);
    for (const f of filesUnder(server.dataDir)) expect(f.bytes.includes(key.secret), f.file).toBe(false);
  }, 180_000);
});
