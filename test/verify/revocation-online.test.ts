/**
 * Online revocation fetching: only hosts on URL_FETCH_ALLOWLIST, never by default. A local HTTP server in
 * the test process plays the CA's CRL distribution point and OCSP responder; the signer certificate names
 * them (crlDistributionPoints, authorityInfoAccess). The server counts what it is asked. A chain root →
 * intermediate → signer whose CRLs are only online checks that the intermediate CA is fetched for too.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RevocationFetcher, verifyPdfWithRevocation } from '../../src/verify/index.js';
import { makePdf, makePki, signPdf, type Signer, type TestPki } from './fixtures.js';
import { issueLeaf, issueUnder, makeCrl, makeOcsp, rootOf } from './ltv-fixtures.js';

let pki: TestPki;
let trust: { anchors: X509Certificate[]; service: X509Certificate[] };
let server: http.Server;
let port: number;
let signer: Signer;
let signed: Uint8Array;
let crl: Uint8Array;
let ocsp: Uint8Array | undefined;
/** The root's CRL (about the intermediate CA) and the intermediate's CRL (about its signer), by path. */
const chainCrls = new Map<string, Uint8Array>();
const hits: string[] = [];

beforeAll(async () => {
  pki = makePki();
  trust = { anchors: [new X509Certificate(pki.caPem)], service: [] };
  server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    if (req.url === '/ca.crl') {
      res.writeHead(200, { 'content-type': 'application/pkix-crl' }).end(Buffer.from(crl));
    } else if (req.url?.startsWith('/ocsp/') && ocsp) {
      res.writeHead(200, { 'content-type': 'application/ocsp-response' }).end(Buffer.from(ocsp));
    } else if (chainCrls.has(req.url ?? '')) {
      res.writeHead(200, { 'content-type': 'application/pkix-crl' }).end(Buffer.from(chainCrls.get(req.url ?? '')!));
    } else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  signer = issueLeaf(
    pki,
    'online',
    'RSA',
    '/CN=Olga Online',
    `crlDistributionPoints=URI:http://127.0.0.1:${port}/ca.crl\nauthorityInfoAccess=OCSP;URI:http://127.0.0.1:${port}/ocsp\n`,
  );
  signed = signPdf(await makePdf(1), { signer, timestampBy: pki.tsa });
}, 60_000);
afterAll(async () => {
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  pki?.cleanup();
});

const verify = async (allowlist: string[]) => {
  const fetcher = new RevocationFetcher({ allowlist });
  try {
    return await verifyPdfWithRevocation(signed, { trust }, fetcher);
  } finally {
    await fetcher.close();
  }
};

describe('online revocation', () => {
  it('is never fetched by default (empty allow-list)', async () => {
    hits.length = 0;
    crl = makeCrl(rootOf(pki), { revoked: [{ certPem: signer.certPem, at: new Date(Date.now() - 3600_000) }] });
    const r = await verify([]);
    expect(hits).toEqual([]);
    expect(r.signatures[0]!.revocation.status).toBe('NOT_CHECKED');
    expect(r.valid).toBe(true);
  });

  it('is not fetched from a host:port outside the allow-list', async () => {
    hits.length = 0;
    const r = await verify([`127.0.0.1:${port + 1}`, `localhost:${port}`]);
    expect(hits).toEqual([]);
    expect(r.signatures[0]!.revocation.status).toBe('NOT_CHECKED');
  });

  it('an allow-listed CRL distribution point is fetched and used (origin ONLINE)', async () => {
    hits.length = 0;
    ocsp = undefined;
    crl = makeCrl(rootOf(pki), { revoked: [{ certPem: signer.certPem, at: new Date(Date.now() - 3600_000) }] });
    const r = await verify([`127.0.0.1:${port}`]);
    expect(hits).toContain('/ca.crl');
    const rev = r.signatures[0]!.revocation;
    expect(rev.status).toBe('REVOKED');
    expect(rev.sources.find((s) => s.type === 'CRL')).toMatchObject({ origin: 'ONLINE', valid: true, status: 'REVOKED' });
    expect(r.valid).toBe(false);
  });

  it('an allow-listed OCSP responder is asked by GET (RFC 6960 A.1) and used', async () => {
    hits.length = 0;
    crl = makeCrl(rootOf(pki));
    ocsp = makeOcsp(signer.certPem, rootOf(pki), { status: 'good' });
    const r = await verify([`127.0.0.1:${port}`]);
    expect(hits.some((h) => h.startsWith('/ocsp/'))).toBe(true);
    const rev = r.signatures[0]!.revocation;
    expect(rev.status).toBe('GOOD');
    expect(rev.sources.find((s) => s.type === 'OCSP')).toMatchObject({ origin: 'ONLINE', valid: true, status: 'GOOD' });
    expect(r.valid).toBe(true);
  });
});

describe('online revocation of an intermediate CA', () => {
  it('fetches the CRL that speaks about the intermediate and reports the signature REVOKED', async () => {
    const issue = (name: string, subject: string, ca: string, ext: string) => issueUnder(pki, name, subject, ca, ext);
    const inter = issue(
      'online-inter',
      '/CN=Online Intermediate CA',
      'ca',
      `basicConstraints=critical,CA:TRUE,pathlen:0\nkeyUsage=critical,keyCertSign,cRLSign\ncrlDistributionPoints=URI:http://127.0.0.1:${port}/root.crl\n`,
    );
    const leaf = issue(
      'online-leaf',
      '/CN=Otto Online',
      'online-inter',
      `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,nonRepudiation\ncrlDistributionPoints=URI:http://127.0.0.1:${port}/inter.crl\n`,
    );
    const doc = signPdf(await makePdf(1), { signer: { ...leaf, chainPem: [inter.certPem, pki.caPem] }, timestampBy: pki.tsa });
    chainCrls.set('/root.crl', makeCrl(rootOf(pki), { revoked: [{ certPem: inter.certPem, at: new Date(Date.now() - 3600_000) }] }));
    chainCrls.set('/inter.crl', makeCrl(inter));
    const fetcher = new RevocationFetcher({ allowlist: [`127.0.0.1:${port}`] });
    try {
      hits.length = 0;
      const r = await verifyPdfWithRevocation(doc, { trust }, fetcher);
      expect(hits).toEqual(expect.arrayContaining(['/inter.crl', '/root.crl']));
      const s = r.signatures[0]!;
      expect(s.revocation.sources.find((x) => x.type === 'CRL')).toMatchObject({ origin: 'ONLINE', valid: true, status: 'GOOD' });
      expect(s.revocation.status).toBe('REVOKED');
      expect(s.problems.some((p) => p.includes('Online Intermediate CA'))).toBe(true);
      expect(r.valid).toBe(false);
    } finally {
      await fetcher.close();
    }
    // Never fetched without an allow-list: nothing is known, nothing is claimed.
    hits.length = 0;
    const closed = new RevocationFetcher({ allowlist: [] });
    const none = await verifyPdfWithRevocation(doc, { trust }, closed).finally(() => closed.close());
    expect(hits).toEqual([]);
    expect(none.signatures[0]!.revocation.status).toBe('NOT_CHECKED');
    expect(none.valid).toBe(true);
  }, 60_000);
});
