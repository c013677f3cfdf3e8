/**
 * PAdES B-LT and B-LTA (`level` in POST /v1/sign) on the real API, with a TSA running in the test process,
 * checked by tools nobody here wrote: pdfsig (NSS trusting Folio's root, online OCSP allowed against the
 * API's own responder), qpdf --check, OpenSSL (`crl -verify`, `ocsp` as a client over HTTP and on the
 * responses in the DSS), and Folio's own POST /v1/verify. Also: Folio's CA endpoints, re-signing a B-LTA
 * file, the level errors (no TSA; a SIGNING_P12 whose revocation hosts are not allow-listed), and a
 * SIGNING_P12 from another CA whose CRL is fetched from an allow-listed host.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authed, startTestApi, type TestApi } from '../helpers/api.js';
import { buildCrl } from '../../src/sign/index.js';
import { lastSignature, makePdf, nssDbTrusting, pdfsigBlocks, postSign, qpdfCheck, signBody, tmpDir, writeTemp } from './helpers.js';
import { freePort, pdfsigAsync, readDss, run, signatureContents, startApiAtPublicUrl } from './ltv-helpers.js';
import { startTestTsa, type TestTsa } from './tsa-server.js';

let work: string;
let tsa: TestTsa;
let api: TestApi;
let nss: string;
let rootPem: string;
let signerPem: string;

const sha1Upper = (b: Uint8Array) => crypto.createHash('sha1').update(b).digest('hex').toUpperCase();

beforeAll(async () => {
  work = tmpDir('folio-ltv-test-');
  tsa = await startTestTsa(work);
  const anchors = writeTemp(work, 'anchors.pem', tsa.rootPem);
  api = await startApiAtPublicUrl({ TSA_URL: tsa.url, TRUST_ANCHORS: anchors });
  rootPem = api.services.signing!.rootCertificatePem!;
  signerPem = api.services.signing!.certificatePem;
  nss = nssDbTrusting(rootPem);
}, 60_000);
afterAll(async () => {
  await api?.close();
  await tsa?.close();
  fs.rmSync(work, { recursive: true, force: true });
  if (nss) fs.rmSync(nss, { recursive: true, force: true });
});

async function verify(t: TestApi, pdf: Uint8Array): Promise<any> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(pdf)], { type: 'application/pdf' }), 'signed.pdf');
  const res = await fetch(`${t.url}/v1/verify`, authed(t, { method: 'POST', body: form }));
  expect(res.status).toBe(200);
  return res.json();
}

/** pdfsig: every CAdES signature valid and its certificate trusted (through NSS, with Folio's OCSP online). */
async function expectPdfsigValid(file: string, signatures: number): Promise<string[]> {
  const blocks = pdfsigBlocks(await pdfsigAsync(file, nss));
  const cades = blocks.filter((b) => b.includes('ETSI.CAdES.detached'));
  expect(cades).toHaveLength(signatures);
  for (const b of cades) expect(b).toContain('Signature Validation: Signature is Valid.');
  // poppler 22.12 reports "Unknown issue with Certificate" for the second signature with the same certificate
  // in one run (an NSS cache quirk, also with B-B only: see sign.test.ts); the chain of the first is checked,
  // and Folio verify checks every one.
  expect(cades[0]).toContain('Certificate Validation: Certificate is Trusted.');
  return blocks;
}

async function signAt(pdf: Uint8Array, level?: string, t: TestApi = api) {
  return postSign(t, { ...signBody(pdf), ...(level ? { level } : {}) });
}

/** Verify's revocation sources for a signature, as `type/origin/status`, valid ones only. */
const sourcesOf = (sig: any): string[] =>
  (sig.revocation?.sources ?? []).filter((s: any) => s.valid).map((s: any) => `${s.type}/${s.origin}/${s.status}`);

describe("Folio's CA endpoints (no API key)", () => {
  it('serves the root certificate and a CRL that OpenSSL verifies against it', async () => {
    const cert = await fetch(`${api.url}/v1/sign/ca/certificate`);
    expect(cert.status).toBe(200);
    expect(cert.headers.get('content-type')).toBe('application/pkix-cert');
    expect(new crypto.X509Certificate(Buffer.from(await cert.arrayBuffer())).toString()).toBe(new crypto.X509Certificate(rootPem).toString());

    const res = await fetch(`${api.url}/v1/sign/ca/crl`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pkix-crl');
    const crl = writeTemp(work, 'ca.crl', Buffer.from(await res.arrayBuffer()));
    const root = writeTemp(work, 'root.pem', rootPem);
    const checked = await run('openssl', ['crl', '-inform', 'DER', '-in', crl, '-CAfile', root, '-noout', '-text']);
    expect(checked.output).toContain('verify OK');
    expect(checked.output).toContain('No Revoked Certificates');
  });

  it('names the CRL and the OCSP responder in the generated signing certificate (PUBLIC_URL)', () => {
    const text = new crypto.X509Certificate(signerPem).toLegacyObject();
    expect(text.infoAccess?.['OCSP - URI']).toEqual([`${api.url}/v1/sign/ca/ocsp`]);
    expect(text.infoAccess?.['CA Issuers - URI']).toEqual([`${api.url}/v1/sign/ca/certificate`]);
    const printed = execFileSync('openssl', ['x509', '-noout', '-ext', 'crlDistributionPoints'], { input: signerPem, encoding: 'utf8' });
    expect(printed).toContain(`URI:${api.url}/v1/sign/ca/crl`);
  });

  it('answers `openssl ocsp` over HTTP: good for the signing certificate, response signature verified', async () => {
    const root = writeTemp(work, 'root.pem', rootPem);
    const signer = writeTemp(work, 'signer.pem', signerPem);
    const r = await run('openssl', ['ocsp', '-issuer', root, '-cert', signer, '-url', `${api.url}/v1/sign/ca/ocsp`, '-CAfile', root]);
    expect(r.output).toContain('Response verify OK');
    expect(r.output).toMatch(/signer\.pem: good/);
  });

  it('answers the GET form, `unknown` for a serial it did not issue and `unauthorized` for another issuer', async () => {
    const root = writeTemp(work, 'root.pem', rootPem);
    // A certificate of another CA (the TSA's) asked of Folio's responder with the wrong issuer: unauthorized.
    const tsaCert = writeTemp(work, 'tsa.pem', tsa.tsaCertPem);
    const tsaRoot = writeTemp(work, 'tsa-root.pem', tsa.rootPem);
    const foreign = await run('openssl', ['ocsp', '-issuer', tsaRoot, '-cert', tsaCert, '-url', `${api.url}/v1/sign/ca/ocsp`, '-CAfile', root]);
    expect(foreign.output).toMatch(/unauthorized/i);

    // An unknown serial under Folio's root, sent as GET (RFC 6960 A.1).
    const req = path.join(work, 'unknown.req');
    await run('openssl', ['ocsp', '-issuer', root, '-serial', '0x0123456789', '-no_nonce', '-reqout', req]);
    const b64 = encodeURIComponent(fs.readFileSync(req).toString('base64'));
    const res = await fetch(`${api.url}/v1/sign/ca/ocsp/${b64}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/ocsp-response');
    const resp = writeTemp(work, 'unknown.resp', Buffer.from(await res.arrayBuffer()));
    const shown = await run('openssl', ['ocsp', '-respin', resp, '-reqin', req, '-issuer', root, '-serial', '0x0123456789', '-CAfile', root]);
    expect(shown.output).toContain('Response verify OK');
    expect(shown.output).toMatch(/0x0123456789: unknown/);
  });

  it('answers a malformed request with an OCSP malformedRequest status', async () => {
    const res = await fetch(`${api.url}/v1/sign/ca/ocsp`, {
      method: 'POST',
      headers: { 'content-type': 'application/ocsp-request' },
      body: 'nonsense',
    });
    expect(res.status).toBe(200);
    const resp = writeTemp(work, 'bad.resp', Buffer.from(await res.arrayBuffer()));
    expect((await run('openssl', ['ocsp', '-respin', resp, '-resp_text', '-noverify'])).output).toMatch(/malformedrequest/i);
  });

  it('refuses oversized, mistyped and non-base64 OCSP requests in the error envelope', async () => {
    const big = await fetch(`${api.url}/v1/sign/ca/ocsp`, {
      method: 'POST',
      headers: { 'content-type': 'application/ocsp-request' },
      body: new Uint8Array(17 * 1024),
    });
    expect(big.status).toBe(413);
    expect((await big.json()).code).toBe('FILE_TOO_LARGE');
    const typed = await fetch(`${api.url}/v1/sign/ca/ocsp`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
    expect(typed.status).toBe(415);
    expect((await typed.json()).code).toBe('UNSUPPORTED_MEDIA_TYPE');
    const notBase64 = await fetch(`${api.url}/v1/sign/ca/ocsp/${encodeURIComponent('<not base64>')}`);
    expect(notBase64.status).toBe(400);
    expect((await notBase64.json()).details).toEqual([{ field: 'request', issue: 'not base64' }]);
  });
});

describe('B-LT', () => {
  let input: Uint8Array;
  let out: Uint8Array;
  beforeAll(async () => {
    input = await makePdf(2);
    const res = await signAt(input, 'B-LT');
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    out = res.pdf!;
  }, 60_000);

  it('passes pdfsig, qpdf --check and Folio verify (TOTAL_PASSED)', async () => {
    const file = writeTemp(work, 'b-lt.pdf', out);
    expect(qpdfCheck(file).status).toBe(0);
    await expectPdfsigValid(file, 1);
    const report = await verify(api, out);
    expect(report.indication, report.reason).toBe('TOTAL_PASSED');
    expect(report.valid).toBe(true);
    expect(report.signatures).toHaveLength(1);
    expect(report.signatures[0]).toMatchObject({ type: 'signature', level: 'B-LT', revocation: { status: 'GOOD' } });
    // The OCSP response and the CRL of Folio's CA, found through the signature's VRI entry.
    expect(sourcesOf(report.signatures[0])).toEqual(expect.arrayContaining(['OCSP/VRI/GOOD', 'CRL/VRI/GOOD']));
  });

  it('appends the DSS after the signature: chain, TSA certificate, OCSP and CRL, and a VRI for the signature', () => {
    const text = Buffer.from(out).toString('latin1');
    expect((text.match(/%%EOF/g) ?? []).length).toBe(3); // the input, the signature, the DSS
    const dss = readDss(out)!;
    expect(dss).toBeDefined();
    const subjects = dss.certs.map((c) => new crypto.X509Certificate(c).subject);
    expect(subjects.some((s) => s.includes('Folio Document Signing'))).toBe(true);
    expect(subjects.some((s) => s.includes('Folio Local Root CA'))).toBe(true);
    expect(subjects.some((s) => s.includes('Test TSA'))).toBe(true);
    expect(dss.ocsps).toHaveLength(1);
    expect(dss.crls).toHaveLength(1);
    const [contents] = signatureContents(out);
    expect([...dss.vri.keys()]).toEqual([sha1Upper(contents!)]);
    expect(dss.vri.get(sha1Upper(contents!))).toEqual({ certs: dss.certs.length, ocsps: 1, crls: 1 });
  });

  it('embeds an OCSP response and a CRL that OpenSSL verifies with Folio’s root', async () => {
    const dss = readDss(out)!;
    const root = writeTemp(work, 'root.pem', rootPem);
    const signer = writeTemp(work, 'signer.pem', signerPem);
    const resp = writeTemp(work, 'dss.ocsp', dss.ocsps[0]!);
    const ocsp = await run('openssl', ['ocsp', '-respin', resp, '-issuer', root, '-cert', signer, '-CAfile', root]);
    expect(ocsp.output).toContain('Response verify OK');
    expect(ocsp.output).toMatch(/signer\.pem: good/);
    const crl = writeTemp(work, 'dss.crl', dss.crls[0]!);
    expect((await run('openssl', ['crl', '-inform', 'DER', '-in', crl, '-CAfile', root, '-noout'])).output).toContain('verify OK');
  });
});

describe('B-LTA', () => {
  let out: Uint8Array;
  beforeAll(async () => {
    const res = await signAt(await makePdf(3, { objectStreams: true }), 'B-LTA');
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    out = res.pdf!;
  }, 60_000);

  it('adds a document timestamp over the DSS revision; pdfsig, qpdf and Folio verify agree', async () => {
    const file = writeTemp(work, 'b-lta.pdf', out);
    expect(qpdfCheck(file).status).toBe(0);
    const blocks = await expectPdfsigValid(file, 1);
    expect(blocks).toHaveLength(2);
    const ts = blocks.find((b) => b.includes('Folio-Timestamp-1'))!;
    expect(ts).toContain('Total document signed');
    expect(ts).toContain('Signer Certificate Common Name: Test TSA');
    const tail = Buffer.from(out).toString('latin1');
    expect(tail).toMatch(/\/Type \/DocTimeStamp \/Filter \/Adobe\.PPKLite \/SubFilter \/ETSI\.RFC3161/);

    const report = await verify(api, out);
    expect(report.indication, report.reason).toBe('TOTAL_PASSED');
    expect(report.valid).toBe(true);
    expect(report.signatures.map((s: any) => s.subFilter)).toEqual(['ETSI.CAdES.detached', 'ETSI.RFC3161']);
    for (const s of report.signatures) expect(s.integrity).toMatchObject({ digestMatches: true, signatureValid: true });
    expect(report.signatures[0]).toMatchObject({ type: 'signature', level: 'B-LTA', revocation: { status: 'GOOD' } });
    expect(report.signatures[1]).toMatchObject({ type: 'timestamp', fieldName: 'Folio-Timestamp-1' });
  });

  it('stamps with OpenSSL-verifiable RFC 3161 token over the byte range', async () => {
    const text = Buffer.from(out).toString('latin1');
    const m = [...text.matchAll(/\/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]/g)].pop()!;
    const [a, b, c, d] = m.slice(1, 5).map(Number) as [number, number, number, number];
    const covered = Buffer.concat([Buffer.from(out.subarray(a, a + b)), Buffer.from(out.subarray(c, c + d))]);
    const token = writeTemp(work, 'doc.tst', lastSignature(out).cms); // cut at its DER length, not at trailing zeros
    const data = writeTemp(work, 'covered.bin', covered);
    const ca = writeTemp(work, 'tsa-root.pem', tsa.rootPem);
    const untrusted = writeTemp(work, 'tsa-cert.pem', tsa.tsaCertPem);
    const r = await run('openssl', ['ts', '-verify', '-token_in', '-in', token, '-data', data, '-CAfile', ca, '-untrusted', untrusted]);
    expect(r.output).toContain('Verification: OK');
  });

  /** Re-signs the B-LTA output at `level`: qpdf, pdfsig and Folio verify on the result; the verify report. */
  async function resign(level: string, cades: number, total: number): Promise<{ pdf: Uint8Array; report: any }> {
    const res = await signAt(out, level);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const file = writeTemp(work, `resigned-${level}.pdf`, res.pdf!);
    expect(qpdfCheck(file).status).toBe(0);
    expect(await expectPdfsigValid(file, cades)).toHaveLength(total);
    const report = await verify(api, res.pdf!);
    expect(report.signatures).toHaveLength(total);
    for (const s of report.signatures) expect(s.integrity, s.fieldName).toMatchObject({ digestMatches: true, signatureValid: true });
    return { pdf: res.pdf!, report };
  }

  it('re-signing a B-LTA file at B-B or B-LT keeps every earlier signature valid (TOTAL_PASSED)', async () => {
    const bb = await resign('B-B', 2, 3);
    expect(bb.report.indication, bb.report.reason).toBe('TOTAL_PASSED');
    expect(bb.report.signatures.map((s: any) => s.level)).toEqual(['B-LTA', null, 'B-B']);
    const lt = await resign('B-LT', 2, 3);
    expect(lt.report.indication, lt.report.reason).toBe('TOTAL_PASSED');
    expect(lt.report.signatures.map((s: any) => s.level)).toEqual(['B-LTA', null, 'B-LT']);
    // The second DSS is the first one's object, rewritten: its entries kept, a VRI added for the new signature.
    const dss = readDss(lt.pdf)!;
    const contents = signatureContents(lt.pdf);
    expect([...dss.vri.keys()].sort()).toEqual([sha1Upper(contents[0]!), sha1Upper(contents[2]!)].sort());
    expect(dss.ocsps).toHaveLength(2);
    expect(dss.certs.length).toBe(readDss(out)!.certs.length);
  }, 60_000);

  it('re-signing a B-LTA file at B-LTA keeps every earlier signature and timestamp valid (TOTAL_PASSED)', async () => {
    const lta = await resign('B-LTA', 2, 4);
    expect(lta.report.signatures.map((s: any) => s.fieldName)).toEqual([
      'Folio-Signature-1',
      'Folio-Timestamp-1',
      'Folio-Signature-2',
      'Folio-Timestamp-2',
    ]);
    // Each revision's catalog change is judged by the revision that made it: the second signature's audit
    // revision (/Names, /AF, /AcroForm) is exempt for the first signature, the DSS and timestamp revisions
    // around it are long-term-validation updates.
    expect(lta.report.indication, JSON.stringify(lta.report.signatures.map((s: any) => s.modificationsAfter))).toBe('TOTAL_PASSED');
    expect(lta.report.valid).toBe(true);
    for (const s of lta.report.signatures) expect(s.indication, `${s.fieldName}: ${s.problems}`).toBe('TOTAL_PASSED');
    expect(lta.report.signatures.map((s: any) => s.level)).toEqual(['B-LTA', null, 'B-LTA', null]);
  }, 60_000);

  it('fails with 503 when the TSA fails on an explicit level (never downgraded)', async () => {
    tsa.mode = 'http-500';
    try {
      const res = await signAt(await makePdf(1), 'B-LTA');
      expect(res.status).toBe(503);
      expect(res.json.code).toBe('SERVICE_UNAVAILABLE');
    } finally {
      tsa.mode = 'ok';
    }
  });
});

describe('levels and their defaults', () => {
  it('keeps B-T as the default with TSA_URL, and B-B asked for explicitly takes no timestamp', async () => {
    const before = tsa.requests;
    const implicit = await signAt(await makePdf(1));
    expect(implicit.status).toBe(200);
    expect(tsa.requests).toBe(before + 1);
    expect(readDss(implicit.pdf!)).toBeUndefined();
    expect((await verify(api, implicit.pdf!)).signatures[0].level).toBe('B-T');
    const bb = await signAt(await makePdf(1), 'B-B');
    expect(bb.status).toBe(200);
    expect(tsa.requests).toBe(before + 1);
    expect((await verify(api, bb.pdf!)).signatures[0].level).toBe('B-B');
  });

  it('gives B-LT with an identity generated without PUBLIC_URL (no CRL/OCSP URLs in its certificate)', async () => {
    const t = await startTestApi({ env: { TSA_URL: tsa.url } });
    try {
      expect(new crypto.X509Certificate(t.services.signing!.certificatePem).infoAccess).toBeUndefined();
      const res = await signAt(await makePdf(1), 'B-LT', t);
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      const dss = readDss(res.pdf!)!;
      expect([dss.ocsps.length, dss.crls.length]).toEqual([1, 1]);
      const file = writeTemp(work, 'no-public-url.pdf', res.pdf!);
      expect(qpdfCheck(file).status).toBe(0);
      const own = nssDbTrusting(t.services.signing!.rootCertificatePem!);
      try {
        const [block] = pdfsigBlocks(await pdfsigAsync(file, own));
        expect(block).toContain('Signature Validation: Signature is Valid.');
        expect(block).toContain('Certificate Validation: Certificate is Trusted.');
      } finally {
        fs.rmSync(own, { recursive: true, force: true });
      }
    } finally {
      await t.close();
    }
  }, 60_000);

  it('refuses a level that needs a TSA on a server without TSA_URL: 400 VALIDATION_ERROR naming `level`', async () => {
    const plain = await startTestApi();
    try {
      for (const level of ['B-T', 'B-LT', 'B-LTA']) {
        const res = await signAt(await makePdf(1), level, plain);
        expect(res.status).toBe(400);
        expect(res.json.code).toBe('VALIDATION_ERROR');
        expect(res.json.details).toEqual([{ field: 'level', issue: `${level} needs TSA_URL on the server` }]);
      }
      expect((await signAt(await makePdf(1), 'B-B', plain)).status).toBe(200);
      const unknown = await signAt(await makePdf(1), 'B-X', plain);
      expect(unknown.status).toBe(400);
      expect(unknown.json.details.map((d: any) => d.field)).toContain('level');
    } finally {
      await plain.close();
    }
  });
});

describe('SIGNING_P12 from another CA', () => {
  let dir: string;
  let crlServer: http.Server;
  let crlPort: number;
  let crlRequests = 0;

  /** An OpenSSL CA and a P-256 signing certificate naming `crlUrl` / `ocspUrl`, exported as PKCS#12. */
  function issueP12(name: string, ext: string): string {
    const o = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    o([
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
      '-subj',
      `/CN=External ${name}`,
    ]);
    fs.writeFileSync(path.join(dir, `${name}.ext`), `keyUsage=critical,digitalSignature,nonRepudiation\n${ext}\n`);
    o([
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ext-root.pem',
      '-CAkey',
      'ext-root.key',
      '-CAcreateserial',
      '-out',
      `${name}.pem`,
      '-days',
      '30',
      '-extfile',
      `${name}.ext`,
    ]);
    o([
      'pkcs12',
      '-export',
      '-inkey',
      `${name}.key`,
      '-in',
      `${name}.pem`,
      '-certfile',
      'ext-root.pem',
      '-out',
      `${name}.p12`,
      '-passout',
      'pass:secret',
    ]);
    return path.join(dir, `${name}.p12`);
  }

  beforeAll(async () => {
    dir = tmpDir('folio-ext-ca-');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        'ext-root.key',
        '-out',
        'ext-root.pem',
        '-subj',
        '/CN=External Root',
        '-days',
        '30',
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign,cRLSign',
      ],
      { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    // The external CA's CRL, signed with its key, served over HTTP from the test process.
    const ca = {
      privateKey: crypto.createPrivateKey(fs.readFileSync(path.join(dir, 'ext-root.key'))),
      certificateDer: new Uint8Array(new crypto.X509Certificate(fs.readFileSync(path.join(dir, 'ext-root.pem'))).raw),
    };
    const crl = Buffer.from(buildCrl(ca));
    crlServer = http.createServer((_req, res) => {
      crlRequests++;
      res.writeHead(200, { 'content-type': 'application/pkix-crl' }).end(crl);
    });
    crlPort = await freePort();
    await new Promise<void>((resolve) => crlServer.listen(crlPort, '127.0.0.1', resolve));
  }, 60_000);
  afterAll(async () => {
    await new Promise((resolve) => crlServer?.close(resolve));
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses B-LT and B-LTA when the certificate’s OCSP/CRL hosts are not on URL_FETCH_ALLOWLIST', async () => {
    const p12 = issueP12('blocked', 'authorityInfoAccess=OCSP;URI:http://ocsp.example.org/\ncrlDistributionPoints=URI:http://crl.example.org/ca.crl');
    const t = await startTestApi({ env: { SIGNING_P12: p12, SIGNING_P12_PASSWORD: 'secret', TSA_URL: tsa.url } });
    try {
      for (const level of ['B-LT', 'B-LTA']) {
        const res = await signAt(await makePdf(1), level, t);
        expect(res.status).toBe(400);
        expect(res.json.code).toBe('VALIDATION_ERROR');
        expect(res.json.details[0].field).toBe('level');
        expect(res.json.message).toMatch(/ocsp\.example\.org.*not on URL_FETCH_ALLOWLIST/);
      }
      expect((await signAt(await makePdf(1), 'B-T', t)).status).toBe(200);
      // The CA endpoints belong to the generated identity only.
      expect((await fetch(`${t.url}/v1/sign/ca/crl`)).status).toBe(404);
    } finally {
      await t.close();
    }
  }, 60_000);

  it('fetches the CRL from an allow-listed host into the DSS; pdfsig and Folio verify accept the B-LT output', async () => {
    const p12 = issueP12('allowed', `crlDistributionPoints=URI:http://127.0.0.1:${crlPort}/ext.crl`);
    const t = await startTestApi({
      env: {
        SIGNING_P12: p12,
        SIGNING_P12_PASSWORD: 'secret',
        TSA_URL: tsa.url,
        URL_FETCH_ALLOWLIST: `127.0.0.1:${crlPort}`,
        TRUST_ANCHORS: writeTemp(work, 'tsa-anchor.pem', tsa.rootPem),
      },
    });
    try {
      const before = crlRequests;
      const res = await signAt(await makePdf(1), 'B-LT', t);
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expect(crlRequests).toBe(before + 1);
      const dss = readDss(res.pdf!)!;
      expect(dss.crls).toHaveLength(1);
      expect(dss.ocsps).toHaveLength(0);
      const file = writeTemp(work, 'ext-lt.pdf', res.pdf!);
      expect(qpdfCheck(file).status).toBe(0);
      const extNss = nssDbTrusting(fs.readFileSync(path.join(dir, 'ext-root.pem'), 'utf8'));
      try {
        const [block] = pdfsigBlocks(await pdfsigAsync(file, extNss));
        expect(block).toContain('Signature Validation: Signature is Valid.');
        expect(block).toContain('Certificate Validation: Certificate is Trusted.');
      } finally {
        fs.rmSync(extNss, { recursive: true, force: true });
      }
      const report = await verify(t, res.pdf!);
      expect(report.indication, report.reason).toBe('TOTAL_PASSED');
      expect(report.signatures[0]).toMatchObject({ level: 'B-LT', revocation: { status: 'GOOD' } });
      expect(sourcesOf(report.signatures[0])).toContain('CRL/VRI/GOOD');
    } finally {
      await t.close();
    }
  }, 60_000);
});
