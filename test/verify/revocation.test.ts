/**
 * Revocation of the signer certificate at its signing time, from CRLs and OCSP responses carried in the DSS
 * (document-level and VRI) and in the CMS (adbe-revocationInfoArchival). CRLs and OCSP responses are made
 * here (ltv-fixtures.ts), signed by the test root, a delegated responder, or a wrong key. The CA certificates
 * of the path are checked too: a chain root → intermediate → signer made here with openssl.
 */
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyPdf } from '../../src/verify/index.js';
import { makePdf, makePki, signPdf, type Signer, type TestPki } from './fixtures.js';
import { appendDss, certDer, issueLeaf, issueUnder, makeCrl, makeOcsp, rootOf, signatureContents } from './ltv-fixtures.js';

let pki: TestPki;
let trust: { anchors: X509Certificate[]; service: X509Certificate[] };
let base: Uint8Array;
let responder: Signer;
const HOUR = 3600_000;

beforeAll(async () => {
  pki = makePki();
  trust = { anchors: [new X509Certificate(pki.caPem)], service: [] };
  base = await makePdf(1);
  responder = issueLeaf(pki, 'ocsp-responder', 'EC', '/CN=Verify Test OCSP Responder', 'extendedKeyUsage=OCSPSigning\n');
}, 60_000);
afterAll(() => pki?.cleanup());

/** Signs now (optionally timestamped), then appends a DSS with the given CRLs / OCSP responses in the VRI. */
function signedWithDss(data: { crls?: Uint8Array[]; ocsps?: Uint8Array[] }, opts: { timestamp?: boolean; at?: Date } = {}) {
  const at = opts.at ?? new Date();
  const d = signPdf(base, { signer: pki.rsa, signingTime: at, ...(opts.timestamp ? { timestampBy: pki.tsa, timestampAt: at } : {}) });
  const cms = signatureContents(d)[0]!;
  return appendDss(d, { certs: [certDer(pki.caPem)], vri: [{ signatureCms: cms, ...data }] });
}

describe('CRL', () => {
  it('a signer revoked before the signing time is not valid (TOTAL_FAILED/REVOKED with a timestamp)', () => {
    const crl = makeCrl(rootOf(pki), { revoked: [{ certPem: pki.rsa.certPem, at: new Date(Date.now() - HOUR) }] });
    const r = verifyPdf(signedWithDss({ crls: [crl] }, { timestamp: true }), { trust });
    const s = r.signatures[0]!;
    expect(s.revocation.status).toBe('REVOKED');
    expect(s.revocation.sources[0]).toMatchObject({ type: 'CRL', origin: 'VRI', valid: true, status: 'REVOKED' });
    expect(s.problems.some((p) => p.startsWith('REVOKED'))).toBe(true);
    expect(s.valid).toBe(false);
    expect(r.valid).toBe(false);
    expect(s.indication).toBe('TOTAL_FAILED');
    expect(s.subIndication).toBe('REVOKED');
  });

  it('without a timestamp the same signer is INDETERMINATE/REVOKED_NO_POE and not valid', () => {
    const crl = makeCrl(rootOf(pki), { revoked: [{ certPem: pki.rsa.certPem, at: new Date(Date.now() - HOUR) }] });
    const s = verifyPdf(signedWithDss({ crls: [crl] }), { trust }).signatures[0]!;
    expect(s.valid).toBe(false);
    expect(s.indication).toBe('INDETERMINATE');
    expect(s.subIndication).toBe('REVOKED_NO_POE');
  });

  it('a signer revoked after the (timestamped) signing time is still valid at signing time', () => {
    // Not before the certificate's notBefore (issued moments ago in beforeAll).
    const at = new Date();
    // Revoked 30 s after signing, listed in a CRL issued a minute after signing (within the clock-skew allowance).
    const crl = makeCrl(rootOf(pki), {
      revoked: [{ certPem: pki.rsa.certPem, at: new Date(at.getTime() + 30_000) }],
      thisUpdate: new Date(at.getTime() + 60_000),
    });
    const r = verifyPdf(signedWithDss({ crls: [crl] }, { timestamp: true, at }), { trust });
    const s = r.signatures[0]!;
    expect(s.revocation.status).toBe('GOOD');
    expect(s.revocation.revokedAt).toBe(new Date(Math.floor(at.getTime() / 1000) * 1000 + 30_000).toISOString());
    expect(s.warnings.some((w) => w.startsWith('REVOKED_AFTER_SIGNING'))).toBe(true);
    expect(s.valid).toBe(true);
    expect(s.indication).toBe('TOTAL_PASSED');
  });

  it('an expired CRL (nextUpdate before the signing time) is listed but not used', () => {
    const crl = makeCrl(rootOf(pki), { thisUpdate: new Date(Date.now() - 10 * 24 * HOUR), nextUpdate: new Date(Date.now() - 3 * 24 * HOUR) });
    const s = verifyPdf(signedWithDss({ crls: [crl] }, { timestamp: true }), { trust }).signatures[0]!;
    expect(s.revocation.sources).toHaveLength(1);
    expect(s.revocation.sources[0]!.valid).toBe(false);
    expect(s.revocation.sources[0]!.problem).toMatch(/expired/);
    expect(s.revocation.status).toBe('UNKNOWN');
    expect(s.level).toBe('B-T');
  });

  it('a CRL signed by another key is not used, even when it says revoked', () => {
    const crl = makeCrl(rootOf(pki), {
      revoked: [{ certPem: pki.rsa.certPem, at: new Date(Date.now() - HOUR) }],
      signingKeyPem: pki.stranger.keyPem,
    });
    const r = verifyPdf(signedWithDss({ crls: [crl] }, { timestamp: true }), { trust });
    const s = r.signatures[0]!;
    expect(s.revocation.sources[0]).toMatchObject({ valid: false, issuer: null });
    expect(s.revocation.status).toBe('UNKNOWN');
    expect(r.valid).toBe(true);
  });
});

describe('OCSP', () => {
  it('a good response signed by the issuing CA makes the signer GOOD (B-LT)', () => {
    const ocsp = makeOcsp(pki.rsa.certPem, rootOf(pki), { status: 'good' });
    const s = verifyPdf(signedWithDss({ ocsps: [ocsp] }, { timestamp: true }), { trust }).signatures[0]!;
    expect(s.revocation.status).toBe('GOOD');
    expect(s.revocation.sources[0]).toMatchObject({ type: 'OCSP', origin: 'VRI', valid: true, status: 'GOOD' });
    expect(s.revocation.sources[0]!.issuer).toMatch(/Verify Test Root CA/);
    expect(s.level).toBe('B-LT');
  });

  it('a delegated responder (id-kp-OCSPSigning, issued by the CA) is accepted', () => {
    const ocsp = makeOcsp(pki.rsa.certPem, rootOf(pki), { status: 'revoked', revokedAt: new Date(Date.now() - HOUR), responder });
    const r = verifyPdf(signedWithDss({ ocsps: [ocsp] }, { timestamp: true }), { trust });
    const s = r.signatures[0]!;
    expect(s.revocation.sources[0]!.issuer).toMatch(/OCSP Responder/);
    expect(s.revocation.status).toBe('REVOKED');
    expect(r.valid).toBe(false);
  });

  it('a response signed by the wrong key is not used', () => {
    const ocsp = makeOcsp(pki.rsa.certPem, rootOf(pki), { status: 'revoked', revokedAt: new Date(Date.now() - HOUR), responder: pki.stranger });
    const r = verifyPdf(signedWithDss({ ocsps: [ocsp] }, { timestamp: true }), { trust });
    const s = r.signatures[0]!;
    expect(s.revocation.sources[0]).toMatchObject({ type: 'OCSP', valid: false });
    expect(s.revocation.sources[0]!.problem).toMatch(/not signed by the issuer/);
    expect(s.revocation.status).toBe('UNKNOWN');
    expect(r.valid).toBe(true);
  });

  it('a responder certificate without id-kp-OCSPSigning is not a delegated responder', () => {
    const ocsp = makeOcsp(pki.rsa.certPem, rootOf(pki), { status: 'good', responder: pki.ec });
    const s = verifyPdf(signedWithDss({ ocsps: [ocsp] }, { timestamp: true }), { trust }).signatures[0]!;
    expect(s.revocation.sources[0]!.valid).toBe(false);
    expect(s.revocation.status).toBe('UNKNOWN');
  });

  it('a response about another certificate says nothing about the signer', () => {
    const ocsp = makeOcsp(pki.ec.certPem, rootOf(pki), { status: 'revoked', revokedAt: new Date(Date.now() - HOUR) });
    const s = verifyPdf(signedWithDss({ ocsps: [ocsp] }, { timestamp: true }), { trust }).signatures[0]!;
    expect(s.revocation.sources).toEqual([]);
    expect(s.revocation.status).toBe('NOT_CHECKED');
  });
});

describe('revocation data inside the CMS', () => {
  it("Adobe's adbe-revocationInfoArchival attribute is read (origin CMS)", () => {
    const crl = makeCrl(rootOf(pki), { revoked: [{ certPem: pki.rsa.certPem, at: new Date(Date.now() - HOUR) }] });
    const ocsp = makeOcsp(pki.rsa.certPem, rootOf(pki), { status: 'good' });
    const good = verifyPdf(signPdf(base, { signer: pki.rsa, revocationArchival: { ocsps: [ocsp] } }), { trust }).signatures[0]!;
    expect(good.revocation.status).toBe('GOOD');
    expect(good.revocation.sources[0]).toMatchObject({ type: 'OCSP', origin: 'CMS', valid: true });
    // Not B-LT: the data is in the signature, not in the DSS.
    expect(good.level).toBe('B-B');
    const r = verifyPdf(signPdf(base, { signer: pki.rsa, revocationArchival: { crls: [crl] } }), { trust });
    expect(r.signatures[0]!.revocation.status).toBe('REVOKED');
    expect(r.valid).toBe(false);
  });
});

describe('document-level DSS and bounds', () => {
  it('document-level /CRLs count (origin DSS)', () => {
    const d = signPdf(base, { signer: pki.rsa, timestampBy: pki.tsa });
    const crl = makeCrl(rootOf(pki));
    const s = verifyPdf(appendDss(d, { certs: [certDer(pki.caPem)], crls: [crl] }), { trust }).signatures[0]!;
    expect(s.revocation.sources[0]).toMatchObject({ origin: 'DSS', valid: true, status: 'GOOD', revision: 3 });
    expect(s.level).toBe('B-LT');
  });

  it('garbage in the DSS streams is reported unusable, not fatal', () => {
    const d = signPdf(base, { signer: pki.rsa });
    const junk = new Uint8Array(Buffer.from('30 82 ff ff not a crl'.repeat(100)));
    const r = verifyPdf(appendDss(d, { crls: [junk, junk], ocsps: [junk] }), { trust });
    expect(r.valid).toBe(true);
    const rev = r.signatures[0]!.revocation;
    expect(rev.status).toBe('UNKNOWN');
    expect(rev.sources.length).toBe(3);
    expect(rev.sources.every((s) => !s.valid && !!s.problem)).toBe(true);
  });

  it('at most 64 revocation entries of a DSS are parsed', () => {
    const d = signPdf(base, { signer: pki.rsa });
    const junk = new Uint8Array([0x30, 0x03, 0x02, 0x01, 0x00]);
    const r = verifyPdf(appendDss(d, { crls: Array.from({ length: 200 }, () => junk) }), { trust });
    expect(r.signatures[0]!.revocation.sources.length).toBe(64);
  });
});

describe('revocation of the CA certificates of the path (root → intermediate → signer)', () => {
  let inter: { certPem: string; keyPem: string };
  let leaf: Signer;

  beforeAll(() => {
    const issue = (name: string, subject: string, ca: string, ext: string) => issueUnder(pki, name, subject, ca, ext);
    inter = issue(
      'inter',
      '/CN=Verify Test Intermediate CA',
      'ca',
      'basicConstraints=critical,CA:TRUE,pathlen:0\nkeyUsage=critical,keyCertSign,cRLSign\n',
    );
    const l = issue(
      'leaf2',
      '/CN=Carol Signer/emailAddress=carol@example.com',
      'inter',
      'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,nonRepudiation\n',
    );
    leaf = { ...l, chainPem: [inter.certPem, pki.caPem] };
  }, 60_000);

  /** Signed (timestamped) by the leaf, then a DSS with the chain and the given CRLs. */
  const signedWith = (crls: Uint8Array[]) => {
    const d = signPdf(base, { signer: leaf, timestampBy: pki.tsa });
    return appendDss(d, { certs: [certDer(pki.caPem), certDer(inter.certPem)], crls });
  };

  it('an intermediate CA revoked before the signing time makes the signature REVOKED and not valid', () => {
    const rootCrl = makeCrl(rootOf(pki), { revoked: [{ certPem: inter.certPem, at: new Date(Date.now() - HOUR) }] });
    const interCrl = makeCrl(inter);
    const r = verifyPdf(signedWith([rootCrl, interCrl]), { trust });
    const s = r.signatures[0]!;
    expect(s.certificate.chainValid).toBe(true);
    // The signer's own CRL (from the intermediate) says GOOD; the root's CRL revokes the intermediate.
    expect(s.revocation.sources.some((x) => x.valid && x.status === 'GOOD' && x.issuer?.includes('Intermediate'))).toBe(true);
    expect(s.revocation.status).toBe('REVOKED');
    expect(s.problems.some((p) => p.startsWith('REVOKED: the CA certificate') && p.includes('Intermediate'))).toBe(true);
    expect(s.valid).toBe(false);
    expect(r.valid).toBe(false);
    expect(s.indication).toBe('TOTAL_FAILED');
    expect(s.subIndication).toBe('REVOKED');
  });

  it('the same chain with the intermediate not revoked is GOOD and valid', () => {
    const s = verifyPdf(signedWith([makeCrl(rootOf(pki)), makeCrl(inter)]), { trust }).signatures[0]!;
    expect(s.revocation.status).toBe('GOOD');
    expect(s.warnings.filter((w) => w.startsWith('REVOCATION_INCOMPLETE') || w.startsWith('REVOKED'))).toEqual([]);
    expect(s.valid).toBe(true);
    expect(s.level).toBe('B-LT');
  });

  it('an intermediate revoked after the signing time is a warning; no data about it is a warning', () => {
    const at = Date.now();
    const later = makeCrl(rootOf(pki), {
      revoked: [{ certPem: inter.certPem, at: new Date(at + 30 * 24 * HOUR) }],
      thisUpdate: new Date(at - 60_000),
      nextUpdate: new Date(at + 60 * 24 * HOUR),
    });
    const s1 = verifyPdf(signedWith([later, makeCrl(inter)]), { trust }).signatures[0]!;
    expect(s1.revocation.status).toBe('GOOD');
    expect(s1.warnings.some((w) => w.startsWith('REVOKED_AFTER_SIGNING: the CA certificate'))).toBe(true);
    expect(s1.warnings.some((w) => w.startsWith('REVOKED_AFTER_SIGNING: the signer'))).toBe(false);
    expect(s1.revocation.revokedAt).toBe(new Date(Math.floor((at + 30 * 24 * HOUR) / 1000) * 1000).toISOString());
    expect(s1.valid).toBe(true);
    expect(s1.indication).toBe('TOTAL_PASSED');
    // Without a timestamp the signing time is not proven: the CA's revocation may have come first.
    const untimed = appendDss(signPdf(base, { signer: leaf }), {
      certs: [certDer(pki.caPem), certDer(inter.certPem)],
      crls: [later, makeCrl(inter)],
    });
    const s3 = verifyPdf(untimed, { trust }).signatures[0]!;
    expect(s3.indication).toBe('INDETERMINATE');
    expect(s3.subIndication).toBe('REVOKED_NO_POE');

    const s2 = verifyPdf(signedWith([makeCrl(inter)]), { trust }).signatures[0]!;
    expect(s2.revocation.status).toBe('GOOD');
    expect(s2.warnings.some((w) => w.startsWith('REVOCATION_INCOMPLETE') && w.includes('Intermediate'))).toBe(true);
    expect(s2.valid).toBe(true);
  });
});
