/**
 * Long-term validation data is not tampering: a DSS (certificates, CRLs, OCSP responses, VRI) and a document
 * timestamp appended after a signature — also after a P=1 certification — are permitted; a DSS update that
 * changes anything else is still caught. Document timestamps are verified and reported as `type: 'timestamp'`;
 * each signature gets its PAdES level. Files are built here: the fixture signer, a DSS appended by
 * ltv-fixtures.ts, CRLs and OCSP responses signed by the test root.
 */
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyPdf } from '../../src/verify/index.js';
import { makePdf, makePki, pdfsigReport, signPdf, type TestPki } from './fixtures.js';
import { appendDss, certDer, makeCrl, rootOf, signatureContents } from './ltv-fixtures.js';

let pki: TestPki;
let trust: { anchors: X509Certificate[]; service: X509Certificate[] };
let base: Uint8Array;

beforeAll(async () => {
  pki = makePki();
  trust = { anchors: [new X509Certificate(pki.caPem)], service: [] };
  base = await makePdf(2);
}, 60_000);
afterAll(() => pki?.cleanup());

/** Signature (B-T), then a DSS with the chain and a CRL of the root, then a document timestamp. */
function ltaDocument(opts: { certify?: 1 | 2 | 3; crl?: boolean; docTs?: boolean } = {}): Uint8Array {
  let d = signPdf(base, { signer: pki.rsa, certify: opts.certify, timestampBy: pki.tsa });
  const cms = signatureContents(d)[0]!;
  const crl = makeCrl(rootOf(pki));
  d = appendDss(d, {
    certs: [certDer(pki.caPem), certDer(pki.tsa.certPem)],
    ...(opts.crl === false ? {} : { crls: [crl] }),
    vri: [{ signatureCms: cms, certs: [certDer(pki.rsa.certPem)], ...(opts.crl === false ? {} : { crls: [crl] }) }],
  });
  if (opts.docTs !== false) d = signPdf(d, { signer: pki.tsa, subFilter: 'ETSI.RFC3161', fieldName: 'ArchiveTimestamp' });
  return d;
}

describe('DSS and document timestamps after a signature', () => {
  it('are SIGNATURES_ONLY long-term-validation updates; the timestamp is an entry of type timestamp', () => {
    const r = verifyPdf(ltaDocument(), { trust });
    expect(r.valid).toBe(true);
    expect(r.indication).toBe('TOTAL_PASSED');
    expect(r.signatureCount).toBe(2);
    expect(r.documentTimestampCount).toBe(1);
    const [sig, ts] = r.signatures;
    expect(sig!.type).toBe('signature');
    expect(sig!.modificationsAfter.level).toBe('SIGNATURES_ONLY');
    expect(sig!.modificationsAfter.details.length).toBeGreaterThan(0);
    expect(sig!.modificationsAfter.details.every((d) => d.ltaUpdate)).toBe(true);
    expect(ts!.type).toBe('timestamp');
    expect(ts!.subFilter).toBe('ETSI.RFC3161');
    expect(ts!.level).toBeNull();
    expect(ts!.integrity).toEqual({ digestMatches: true, signatureValid: true });
    expect(ts!.certificate.trusted).toBe(true);
    // The top-level signer is the last *signature*, not the TSA.
    expect(r.signer?.name).toBe('Alice Signer');
  });

  it('are permitted after a P=1 certification (ISO 32000-2, PAdES)', () => {
    const r = verifyPdf(ltaDocument({ certify: 1 }), { trust });
    const sig = r.signatures[0]!;
    expect(sig.certifying).toBe(true);
    expect(sig.docMdp).toEqual({ permission: 1, respected: true });
    expect(sig.problems).toEqual([]);
    expect(r.valid).toBe(true);
    expect(sig.level).toBe('B-LTA');
  });

  it('a further ordinary signature after P=1 is still a violation', () => {
    const d = signPdf(ltaDocument({ certify: 1 }), { signer: pki.ec, fieldName: 'Late' });
    const r = verifyPdf(d, { trust });
    expect(r.valid).toBe(false);
    expect(r.signatures[0]!.docMdp?.respected).toBe(false);
  });

  it('a DSS revision that also changes a page is caught, after P=1 and after an approval signature', () => {
    for (const certify of [1, undefined] as const) {
      const signed = signPdf(base, { signer: pki.rsa, certify });
      // The same update as a DSS, plus page 1's /MediaBox changed.
      const pageNum = findFirstPage(signed);
      const page = Buffer.from(signed).toString('latin1');
      const at = page.lastIndexOf(`\n${pageNum} 0 obj`);
      const body = page.slice(page.indexOf('<<', at), page.indexOf('endobj', at)).trim();
      const changed = body.replace(/\/MediaBox\s*\[[^\]]*\]/, '/MediaBox [0 0 300 300]');
      expect(changed).not.toBe(body);
      const d = appendDss(signed, { certs: [certDer(pki.caPem)], extra: [{ num: pageNum, body: changed }] });
      const r = verifyPdf(d, { trust });
      expect(r.valid).toBe(false);
      const m = r.signatures[0]!.modificationsAfter;
      expect(m.level).toBe('OTHER');
      expect(m.details.some((x) => x.object === pageNum && x.level === 'OTHER' && !x.ltaUpdate)).toBe(true);
    }
  });

  it('a "DSS" carrying a non-validation entry is OTHER, also after P=1', () => {
    const d = appendDss(signPdf(base, { signer: pki.rsa, certify: 1 }), { certs: [certDer(pki.caPem)], dssExtra: ' /JavaScript (app.alert(1))' });
    const r = verifyPdf(d, { trust });
    expect(r.valid).toBe(false);
    expect(r.signatures[0]!.modificationsAfter.level).toBe('OTHER');
  });

  it('a document timestamp over altered bytes is a hash failure and makes the document invalid', () => {
    const d = Buffer.from(ltaDocument());
    // A byte of the first revision (the header's version digit) changes under both.
    d.write(d[7] === 0x37 ? '6' : '7', 7, 'latin1');
    const r = verifyPdf(new Uint8Array(d), { trust });
    const ts = r.signatures.find((s) => s.type === 'timestamp')!;
    expect(ts.integrity.digestMatches).toBe(false);
    expect(ts.subIndication).toBe('HASH_FAILURE');
    expect(r.valid).toBe(false);
  });

  it('a document timestamp by an untrusted TSA keeps valid but is INDETERMINATE', () => {
    let d = signPdf(base, { signer: pki.rsa });
    d = signPdf(d, { signer: pki.strangerTsa, subFilter: 'ETSI.RFC3161', fieldName: 'TS' });
    const r = verifyPdf(d, { trust });
    expect(r.valid).toBe(true);
    expect(r.indication).toBe('INDETERMINATE');
    expect(r.signatures[1]!.subIndication).toBe('NO_CERTIFICATE_CHAIN_FOUND');
  });

  it('pdfsig reads the same B-LTA file (interop oracle)', () => {
    const out = pdfsigReport(pki, ltaDocument({ certify: 1 }));
    expect(out).toMatch(/Signature #1/);
    expect(out).toMatch(/Signature #2/);
  });
});

describe('PAdES level', () => {
  it('B-B for a CAdES signature, null for adbe.pkcs7.detached', () => {
    expect(verifyPdf(signPdf(base, { signer: pki.rsa }), { trust }).signatures[0]!.level).toBe('B-B');
    expect(verifyPdf(signPdf(base, { signer: pki.rsa, subFilter: 'adbe.pkcs7.detached' }), { trust }).signatures[0]!.level).toBeNull();
  });

  it('B-T with a signature timestamp, or a later document timestamp', () => {
    expect(verifyPdf(signPdf(base, { signer: pki.rsa, timestampBy: pki.tsa }), { trust }).signatures[0]!.level).toBe('B-T');
    const d = signPdf(signPdf(base, { signer: pki.rsa }), { signer: pki.tsa, subFilter: 'ETSI.RFC3161', fieldName: 'TS' });
    expect(verifyPdf(d, { trust }).signatures[0]!.level).toBe('B-T');
  });

  it('B-LT with the chain and a CRL in the DSS, B-LTA once a document timestamp covers it', () => {
    const lt = verifyPdf(ltaDocument({ docTs: false }), { trust }).signatures[0]!;
    expect(lt.revocation.status).toBe('GOOD');
    expect(lt.revocation.sources.some((s) => s.origin === 'VRI' && s.type === 'CRL' && s.valid)).toBe(true);
    expect(lt.level).toBe('B-LT');
    expect(verifyPdf(ltaDocument(), { trust }).signatures[0]!.level).toBe('B-LTA');
  });

  it('a DSS without revocation data stays B-T', () => {
    const s = verifyPdf(ltaDocument({ crl: false }), { trust }).signatures[0]!;
    expect(s.revocation.status).toBe('NOT_CHECKED');
    expect(s.level).toBe('B-T');
  });

  it('a document timestamp that precedes the DSS does not make it B-LTA', () => {
    let d = signPdf(base, { signer: pki.rsa, timestampBy: pki.tsa });
    d = signPdf(d, { signer: pki.tsa, subFilter: 'ETSI.RFC3161', fieldName: 'TS' });
    const cms = signatureContents(d)[0]!;
    d = appendDss(d, { certs: [certDer(pki.caPem)], vri: [{ signatureCms: cms, crls: [makeCrl(rootOf(pki))] }] });
    const r = verifyPdf(d, { trust });
    expect(r.valid).toBe(true);
    expect(r.signatures[0]!.level).toBe('B-LT');
  });
});

function findFirstPage(pdf: Uint8Array): number {
  const text = Buffer.from(pdf).toString('latin1');
  const m = /(\d+) 0 obj\s*<<[^]*?\/Type\s*\/Page(?![s\w])/.exec(text);
  if (!m) throw new Error('no page');
  // The object header closest before the first /Type /Page.
  const upto = text.slice(0, m.index + m[0].length);
  const heads = [...upto.matchAll(/(\d+) 0 obj/g)];
  return Number(heads[heads.length - 1]![1]);
}
