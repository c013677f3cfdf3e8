/**
 * Verify on Folio's own signed output: POST /v1/sign on the real API, then POST /v1/verify. The untouched
 * output is valid, trusted (the service's own root), issuedByThisService, and carries the audit trail with
 * hashMatches; the attack files built from it (append a page, change a content stream, re-point an
 * object, empty the Contents, widen the gap, add an annotation) all end valid:false; a later signature by
 * poppler keeps it valid.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PDFDocument } from '@cantoo/pdf-lib';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { signViaApi, verifyViaApi } from './api.js';
import { appendUpdate, makePdf, makePki, pdfsigSign, signPdf, type TestPki } from './fixtures.js';
import { openPdf } from '../../src/verify/index.js';
import type { PdfRef, PdfValue } from '../../src/pdf/index.js';
import { addAnnotation, appendPage, changeContentStream, repointObject, widenGap, zeroContents, emptyContents } from './attacks.js';

let api: TestApi;
let pki: TestPki;
let folioSigned: Uint8Array;
let original: Uint8Array;

const sign = (t: TestApi, pdf: Uint8Array, extra: Record<string, unknown> = {}) =>
  signViaApi(t, pdf, {
    signer: { name: 'Grace Hopper', email: 'grace@example.com', ip: '198.51.100.4', userAgent: 'Mozilla/5.0' },
    auditTrail: [{ type: 'document.signed', timestamp: '2026-11-20T10:00:00Z' }],
    eventId: 'verify-evt-1',
    ...extra,
  });
const verify = verifyViaApi;

beforeAll(async () => {
  pki = makePki();
  api = await startTestApi();
  original = await makePdf(2, 'Folio contract');
  folioSigned = await sign(api, original);
}, 180_000);

afterAll(async () => {
  await api?.close();
  pki?.cleanup();
});

describe("Folio's own signed output", () => {
  it('is valid, trusted through the service root, issuedByThisService, with the audit trail and hashMatches', async () => {
    const r = await verify(api, folioSigned);
    expect(r).toMatchObject({ valid: true, indication: 'TOTAL_PASSED', signatureCount: 1 });
    const s = r.signatures[0];
    expect(s.subFilter).toBe('ETSI.CAdES.detached');
    expect(s.coverage).toBe('ENTIRE_FILE');
    expect(s.integrity).toEqual({ digestMatches: true, signatureValid: true });
    expect(s.certificate).toEqual({ chainValid: true, trusted: true, validAtSigningTime: true });
    expect(s.issuedByThisService).toBe(true);
    expect(r.auditTrail).toMatchObject({ format: 'folio-audit-trail/1', eventId: 'verify-evt-1', hashMatches: true, coveredBySignature: true });
    expect(r.auditTrail.signer).toMatchObject({ name: 'Grace Hopper', email: 'grace@example.com' });
  });

  it('names the person from the audit trail as `signer`, keeping the certificate under signatures[].signer', async () => {
    const r = await verify(api, folioSigned);
    expect(r.signer).toMatchObject({ name: 'Grace Hopper', email: 'grace@example.com' });
    expect(r.signer.signedAt).toBe(r.signatures[0].signedAt);
    expect(r.signatures[0].signer.subject).toMatch(/Folio/);
    expect(r.signatures[0].signer.name).not.toBe('Grace Hopper');
    expect(r.signatures[0].signer.fingerprint).toBe(r.auditTrail.certificate.fingerprint);
    // A later signature by someone else: the answer's signer is theirs (the certificate's), not the audit trail's.
    const later = await verify(api, pdfsigSign(pki, folioSigned));
    expect(later.signer.name).not.toBe('Grace Hopper');
  });

  it('a second signature added later (pdfsig -add-signature) keeps the first valid', async () => {
    const r = await verify(api, pdfsigSign(pki, folioSigned));
    expect(r.signatureCount).toBe(2);
    expect(r.signatures[0].valid).toBe(true);
    expect(r.signatures[0].modificationsAfter.level).toBe('SIGNATURES_ONLY');
    expect(r.valid).toBe(true);
    // The audit data still describes the bytes the service signed.
    expect(r.auditTrail.hashMatches).toBe(true);
  });

  it('an input with object streams and an xref stream: signed output valid, a page appended after it caught', async () => {
    const doc = await PDFDocument.create();
    for (let i = 0; i < 3; i++) doc.addPage([300, 300]).drawText(`object-stream page ${i + 1}`, { x: 20, y: 150 });
    const input = new Uint8Array(await doc.save({ useObjectStreams: true }));
    expect(Buffer.from(input).toString('latin1')).toContain('/ObjStm');
    const out = await sign(api, input);
    const r = await verify(api, out);
    expect(r).toMatchObject({ valid: true, indication: 'TOTAL_PASSED' });
    expect(r.auditTrail.hashMatches).toBe(true);
    const attacked = await verify(api, appendPage(out));
    expect(attacked.valid).toBe(false);
    expect(attacked.signatures[0].modificationsAfter.level).toBe('OTHER');
  });

  it('an audit trail replaced after signing: its own hash can match, but it is not covered by the signature', async () => {
    const doc = openPdf(folioSigned);
    const names = doc.dictAt(doc.catalogAt(doc.last)!.map.get('Names'), doc.last)!;
    const tree = doc.dictAt(names.map.get('EmbeddedFiles'), doc.last)!;
    const pairs = doc.deref(tree.map.get('Names'), doc.last) as PdfValue[];
    const ef = doc.dictAt(doc.dictAt(pairs[1], doc.last)!.map.get('EF'), doc.last)!;
    const fileRef = ef.map.get('F') as PdfRef;
    const genuine = JSON.parse(Buffer.from(doc.decode(doc.deref(fileRef, doc.last) as never)).toString('utf8'));
    const forged = JSON.stringify({ ...genuine, signer: { ...genuine.signer, name: 'Mallory' } });
    const attacked = appendUpdate(folioSigned, [
      { num: fileRef.num, body: `<</Type /EmbeddedFile /Subtype /application#2Fjson /Length ${forged.length}>>\nstream\n${forged}\nendstream` },
    ]);
    const r = await verify(api, attacked);
    expect(r.valid).toBe(false);
    expect(r.auditTrail.signer.name).toBe('Mallory');
    expect(r.auditTrail.hashMatches).toBe(true);
    expect(r.auditTrail.coveredBySignature).toBe(false);
  });

  it('a PDF signed elsewhere (not by this service) is not issuedByThisService', async () => {
    const r = await verify(api, signPdf(original, { signer: pki.rsa }));
    expect(r.signatures[0].issuedByThisService).toBe(false);
    expect(r.signatures[0].certificate.trusted).toBe(false);
    expect(r.auditTrail).toBeUndefined();
  });

  const attacks: Array<[string, (b: Uint8Array) => Uint8Array, (r: any) => void]> = [
    ['a page appended', (b) => appendPage(b), (r) => expect(r.signatures[0].modificationsAfter.level).toBe('OTHER')],
    ['a content stream changed', (b) => changeContentStream(b), (r) => expect(r.signatures[0].modificationsAfter.level).toBe('OTHER')],
    [
      'a content stream changed behind an empty xref with no /Prev',
      (b) => changeContentStream(b, { xref: 'empty', prev: false }),
      (r) => expect(r.signatures[0].modificationsAfter.level).toBe('OTHER'),
    ],
    ['an object re-pointed by an xref-only update', (b) => repointObject(b), (r) => expect(r.valid).toBe(false)],
    ['the Contents zeroed', (b) => zeroContents(b), (r) => expect(r.signatures[0].problems.join()).toMatch(/CONTENTS_EMPTY/)],
    ['the Contents emptied', (b) => emptyContents(b), (r) => expect(r.signatures[0].subIndication).toBe('FORMAT_FAILURE')],
    ['the gap widened', (b) => widenGap(b), (r) => expect(r.signatures[0].problems.join()).toMatch(/SIGNATURE_WRAPPING/)],
    [
      'an annotation added after the approval signature',
      (b) => addAnnotation(b, 'FreeText'),
      (r) => expect(r.signatures[0].modificationsAfter.level).toBe('ANNOTATIONS'),
    ],
  ];
  for (const [name, attack, check] of attacks) {
    it(`attack: ${name} → valid:false`, async () => {
      const r = await verify(api, attack(folioSigned));
      expect(r.valid).toBe(false);
      expect(r.indication).toBe('TOTAL_FAILED');
      check(r);
    });
  }

  it('attack: an annotation after a certifying signature (DocMDP P=3, own CMS) on the Folio document → valid:false', async () => {
    const certified = signPdf(original, { signer: pki.rsa, certify: 3 });
    expect((await verify(api, certified)).valid).toBe(true);
    const r = await verify(api, addAnnotation(certified, 'Stamp'));
    expect(r.valid).toBe(false);
    expect(r.signatures[0].docMdp).toEqual({ permission: 3, respected: false });
  });
});
