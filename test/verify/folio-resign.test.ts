/**
 * A PDF that already carries signatures and is signed (again) by Folio: POST /v1/sign appends audit pages, an
 * audit-trail.json and a signature field in the same update as its signature. Earlier signatures stay valid
 * (docs/api.md § Sign) only when that update is exactly a Folio audit revision covered by this service's own intact
 * signature; an attacker's update before it, an audit-like update signed by another key, or an audit update
 * that also touches an existing page is still caught.
 */
import crypto from 'node:crypto';
import { PDFArray, PDFName, PDFString } from '@cantoo/pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { signViaApi, verifyViaApi } from './api.js';
import { appendUpdate, makePdf, makePki, pdfsigSign, serialize, signPdf, type TestPki } from './fixtures.js';
import { appendDss, certDer } from './ltv-fixtures.js';
import { openPdf } from '../../src/verify/index.js';
import type { PdfRef, PdfValue } from '../../src/pdf/index.js';
import { appendPage, changeContentStream } from './attacks.js';
import { preparePdf, sealPdf } from '../../src/sign/sign-pdf.js';
import type { AuditRecord } from '../../src/sign/audit-trail.js';

const AUDIT_DETAIL = 'audit-trail pages and attachment appended by a signature issued by this service';

let api: TestApi;
let other: TestApi;
let pki: TestPki;
let original: Uint8Array;
let folioSigned: Uint8Array;

const sign = (t: TestApi, pdf: Uint8Array, extra: Record<string, unknown> = {}) =>
  signViaApi(t, pdf, {
    signer: { name: 'Ada Lovelace', email: 'ada@example.com' },
    auditTrail: [{ type: 'document.signed', timestamp: '2026-11-20T10:00:00Z' }],
    ...extra,
  });
const verify = verifyViaApi;

/** Seals with the service's own key, as POST /v1/sign does, after `tamper` edited the loaded document. */
async function sealWithServiceKey(
  t: TestApi,
  pdf: Uint8Array,
  tamper: (doc: Awaited<ReturnType<typeof preparePdf>>['doc']) => void,
): Promise<Uint8Array> {
  const prepared = await preparePdf(pdf);
  tamper(prepared.doc);
  const sha = (b: Uint8Array) => crypto.createHash('sha256').update(b).digest('hex');
  const record: AuditRecord = {
    format: 'folio-audit-trail/1',
    documentSha256: sha(pdf),
    documentType: 'pdf',
    pdfSha256: sha(prepared.base),
    pdfLength: prepared.base.length,
    signer: { name: 'Ada Lovelace', email: 'ada@example.com' },
    signedAt: new Date().toISOString(),
    certificate: { subject: 'test', fingerprint: 'test' },
    auditTrail: [],
  };
  const sealed = await sealPdf(prepared, record, 'test', { identity: t.services.signing!, auditPages: false, tsaOptional: true });
  return sealed.pdf;
}

beforeAll(async () => {
  pki = makePki();
  api = await startTestApi();
  other = await startTestApi();
  original = await makePdf(1, 'Folio re-signing');
  folioSigned = await sign(api, original);
}, 180_000);

afterAll(async () => {
  await api?.close();
  await other?.close();
  pki?.cleanup();
});

describe('signing an already signed PDF with Folio', () => {
  it('Folio-signed twice: valid, both signatures valid, the first sees SIGNATURES_ONLY', async () => {
    const twice = await sign(api, folioSigned);
    const r = await verify(api, twice);
    expect(r.signatureCount).toBe(2);
    expect(r.valid).toBe(true);
    expect(r.indication).toBe('TOTAL_PASSED');
    for (const s of r.signatures) {
      expect(s.valid).toBe(true);
      expect(s.issuedByThisService).toBe(true);
    }
    expect(r.signatures[0].modificationsAfter.level).toBe('SIGNATURES_ONLY');
    expect(r.signatures[0].modificationsAfter.details).toEqual([
      expect.objectContaining({ level: 'SIGNATURES_ONLY', issue: AUDIT_DETAIL, revision: 3 }),
    ]);
    expect(r.signatures[1].modificationsAfter.level).toBe('NONE');
    expect(r.auditTrail).toMatchObject({ hashMatches: true, coveredBySignature: true });

    // Three times: both audit revisions are exempted for the first signature.
    const thrice = await verify(api, await sign(api, twice));
    expect(thrice.valid).toBe(true);
    expect(thrice.signatures.map((s: { modificationsAfter: { level: string } }) => s.modificationsAfter.level)).toEqual([
      'SIGNATURES_ONLY',
      'SIGNATURES_ONLY',
      'NONE',
    ]);
  });

  it('B-LTA-shaped, signed again by Folio and made B-LTA again: the first signature sees only exempt or LTV changes', async () => {
    // Folio signature, DSS, document timestamp; Folio signature (audit revision), DSS, document timestamp. The
    // catalog is rewritten by every revision; the /Names, /AF and /AcroForm of the second Folio revision are
    // exempt for the first signature and must not be charged to the DSS/timestamp revisions after it.
    const ltv = (pdf: Uint8Array, n: number, sneak = false) => {
      let d = appendDss(pdf, { certs: [certDer(pki.caPem)] });
      if (sneak) {
        const doc = openPdf(d);
        const root = doc.trailerAt(doc.last)!.map.get('Root') as PdfRef;
        const cat = new Map(doc.catalogAt(doc.last)!.map);
        cat.set('OpenAction', { kind: 'ref', num: 1, gen: 0 });
        d = appendUpdate(d, [{ num: root.num, body: serialize({ kind: 'dict', map: cat, start: 0, end: 0 }) }]);
      }
      return signPdf(d, { signer: pki.tsa, subFilter: 'ETSI.RFC3161', fieldName: `Archive-${n}` });
    };
    const resigned = await sign(api, ltv(folioSigned, 1));
    const r = await verify(api, ltv(resigned, 2));
    expect(r.signatureCount).toBe(4);
    expect(r.valid).toBe(true);
    const first = r.signatures[0].modificationsAfter;
    expect(first.level).toBe('SIGNATURES_ONLY');
    expect(first.details).toContainEqual(expect.objectContaining({ issue: AUDIT_DETAIL }));
    for (const d of first.details) expect(d.issue === AUDIT_DETAIL || d.ltaUpdate || d.level === 'NONE', d.issue).toBe(true);
    expect(r.signatures[2].modificationsAfter.level).toBe('SIGNATURES_ONLY');

    // The same with a catalog change (/OpenAction) sneaked in between the second DSS and its timestamp.
    const sneaked = await verify(api, ltv(resigned, 2, true));
    expect(sneaked.valid).toBe(false);
    for (const i of [0, 2]) {
      expect(sneaked.signatures[i].modificationsAfter.level).toBe('OTHER');
      expect(sneaked.signatures[i].modificationsAfter.details).toContainEqual(
        expect.objectContaining({ level: 'OTHER', issue: expect.stringContaining('OpenAction') }),
      );
    }
  });

  it('signed by pdfsig, then by Folio: valid, the pdfsig signature sees SIGNATURES_ONLY', async () => {
    const r = await verify(api, await sign(api, pdfsigSign(pki, original)));
    expect(r.signatureCount).toBe(2);
    expect(r.signatures[0].issuedByThisService).toBe(false);
    expect(r.signatures[0].valid).toBe(true);
    expect(r.signatures[0].modificationsAfter.level).toBe('SIGNATURES_ONLY');
    expect(r.signatures[1].valid).toBe(true);
    expect(r.valid).toBe(true);
  });

  it('Folio, pdfsig, Folio and Folio, Folio, pdfsig: every signature valid', async () => {
    const mixed = await verify(api, await sign(api, pdfsigSign(pki, folioSigned)));
    expect(mixed.signatureCount).toBe(3);
    expect(mixed.signatures.map((s: { valid: boolean }) => s.valid)).toEqual([true, true, true]);
    expect(mixed.signatures[0].modificationsAfter.level).toBe('SIGNATURES_ONLY');
    expect(mixed.valid).toBe(true);

    const pdfsigLast = await verify(api, pdfsigSign(pki, await sign(api, folioSigned), { field: 'Poppler-Last' }));
    expect(pdfsigLast.signatureCount).toBe(3);
    expect(pdfsigLast.signatures.map((s: { valid: boolean }) => s.valid)).toEqual([true, true, true]);
    expect(pdfsigLast.signatures[0].modificationsAfter.level).toBe('SIGNATURES_ONLY');
    expect(pdfsigLast.valid).toBe(true);
  });

  it('without audit pages (certificate.enabled:false, the widget joins the existing last page): still valid', async () => {
    const r = await verify(api, await sign(api, folioSigned, { certificate: { enabled: false } }));
    expect(r.signatureCount).toBe(2);
    expect(r.valid).toBe(true);
    expect(r.signatures[0].modificationsAfter.level).toBe('SIGNATURES_ONLY');
  });

  for (const [name, attack] of [
    ['a content stream changed', (b: Uint8Array) => changeContentStream(b)],
    ['a page appended', (b: Uint8Array) => appendPage(b)],
  ] as const) {
    it(`an attacker's update (${name}) submitted to /v1/sign before Folio signs → valid:false`, async () => {
      const r = await verify(api, await sign(api, attack(folioSigned)));
      expect(r.signatureCount).toBe(2);
      expect(r.valid).toBe(false);
      expect(r.signatures[0].valid).toBe(false);
      expect(r.signatures[0].modificationsAfter.level).toBe('OTHER');
      // Revisions: 1 the original, 2 the first Folio signature, 3 the attacker's, 4 Folio's audit revision.
      const details: Array<{ level: string; revision: number; issue: string }> = r.signatures[0].modificationsAfter.details;
      expect(details.some((d) => d.level === 'OTHER' && d.revision === 3)).toBe(true);
      expect(details.some((d) => d.level === 'OTHER' && d.revision === 4)).toBe(false);
      expect(details.some((d) => d.issue === AUDIT_DETAIL && d.revision === 4)).toBe(true);
      expect(r.signatures[1].valid).toBe(true);
    });
  }

  it('an audit revision signed by another Folio instance (not this service) does not exempt the earlier signature', async () => {
    const byOther = await sign(other, folioSigned);
    const r = await verify(api, byOther);
    expect(r.signatures[1].issuedByThisService).toBe(false);
    expect(r.signatures[1].integrity).toEqual({ digestMatches: true, signatureValid: true });
    expect(r.signatures[0].modificationsAfter.level).toBe('OTHER');
    expect(r.signatures[0].modificationsAfter.details.some((d: { issue: string }) => d.issue === AUDIT_DETAIL)).toBe(false);
    expect(r.valid).toBe(false);
    // The other instance recognises its own audit revision.
    expect((await verify(other, byOther)).valid).toBe(true);
  });

  it('an audit revision signed by this service that also changes an existing page → valid:false', async () => {
    // Control: sealed by the service key without tampering, the update is an audit revision.
    const clean = await sealWithServiceKey(api, folioSigned, () => {});
    const control = await verify(api, clean);
    expect(control.valid).toBe(true);
    expect(control.signatures[0].modificationsAfter.level).toBe('SIGNATURES_ONLY');

    // The same update with text drawn on the existing (last) page, which the signer rewrites for its widget.
    const tampered = await sealWithServiceKey(api, folioSigned, (doc) => {
      doc.getPage(doc.getPageCount() - 1).drawText('Pay 1,000,000 EUR', { x: 50, y: 50, size: 20 });
    });
    const r = await verify(api, tampered);
    expect(r.signatures[1].issuedByThisService).toBe(true);
    expect(r.signatures[1].valid).toBe(true);
    expect(r.signatures[0].modificationsAfter.level).toBe('OTHER');
    expect(r.signatures[0].modificationsAfter.details.some((d: { issue: string }) => d.issue === AUDIT_DETAIL)).toBe(false);
    expect(r.valid).toBe(false);
  });

  it('an audit revision signed by this service that also adds a visible annotation to the existing last page → valid:false', async () => {
    const tampered = await sealWithServiceKey(api, folioSigned, (doc) => {
      const annot = doc.context.register(
        doc.context.obj({
          Type: 'Annot',
          Subtype: 'FreeText',
          Rect: [50, 50, 300, 100],
          Contents: PDFString.of('Paid in full'),
          DA: PDFString.of('/Helv 12 Tf 0 g'),
        }),
      );
      // Set directly: pdf-lib's addAnnot would also normalise the page's /Contents into an array.
      const page = doc.getPage(doc.getPageCount() - 1).node;
      const annots = page.lookup(PDFName.of('Annots'));
      if (annots instanceof PDFArray) annots.push(annot);
      else page.set(PDFName.of('Annots'), doc.context.obj([annot]));
    });
    const r = await verify(api, tampered);
    expect(r.signatures[1].issuedByThisService).toBe(true);
    expect(r.signatures[1].valid).toBe(true);
    expect(r.signatures[0].modificationsAfter.details.some((d: { issue: string }) => d.issue === AUDIT_DETAIL)).toBe(false);
    expect(r.signatures[0].modificationsAfter.level).not.toBe('SIGNATURES_ONLY');
    expect(r.valid).toBe(false);
  });

  it('a dangling reference in signed content that an object of the audit revision brings to life → valid:false', async () => {
    // Page 1 of the signed document lists a content stream number nothing defines (yet).
    const base = await makePdf(1, 'Dangling');
    const withDangling = (k: number) => {
      const doc = openPdf(base);
      const pagesDict = doc.dictAt(doc.catalogAt(doc.last)!.map.get('Pages'), doc.last)!;
      const first = (doc.deref(pagesDict.map.get('Kids'), doc.last) as PdfValue[])[0] as PdfRef;
      const page = doc.dictAt(first, doc.last)!;
      const map = new Map(page.map);
      map.set('Contents', [page.map.get('Contents')!, { kind: 'ref', num: k, gen: 0 }]);
      return pdfsigSign(pki, appendUpdate(base, [{ num: first.num, body: serialize({ kind: 'dict', map, start: 0, end: 0 }) }]));
    };
    // Which number does the signer give the audit page's content stream? (Numbering does not depend on k.)
    const auditContentNum = (pdf: Uint8Array) => {
      const doc = openPdf(pdf);
      const pagesDict = doc.dictAt(doc.catalogAt(doc.last)!.map.get('Pages'), doc.last)!;
      const kids = doc.deref(pagesDict.map.get('Kids'), doc.last) as PdfValue[];
      const contents = doc.dictAt(kids[kids.length - 1], doc.last)!.map.get('Contents');
      return (Array.isArray(contents) ? contents[0] : contents) as PdfRef;
    };
    const k = auditContentNum(await sign(api, withDangling(99999))).num;
    const signed = withDangling(k);
    expect((await verify(api, signed)).valid).toBe(true);
    const out = await sign(api, signed);
    expect(auditContentNum(out).num).toBe(k);
    const r = await verify(api, out);
    expect(r.signatures[1].valid).toBe(true);
    expect(r.signatures[0].modificationsAfter.details.some((d: { issue: string }) => d.issue === AUDIT_DETAIL)).toBe(false);
    expect(r.valid).toBe(false);
  });

  it('a certified PDF (DocMDP P=2/3) signed by Folio: audit pages are not permitted (P=1 the signer refuses)', async () => {
    const { signPdf } = await import('./fixtures.js');
    for (const p of [2, 3] as const) {
      const certified = signPdf(original, { signer: pki.rsa, certify: p });
      const r = await verify(api, await sign(api, certified));
      expect(r.valid).toBe(false);
      expect(r.signatures[0].docMdp).toMatchObject({ permission: p, respected: false });
      expect(r.signatures[0].modificationsAfter.level).toBe('OTHER');
    }
  });
});
