/**
 * The DSS and document-timestamp writers (src/pdf/dss.ts, doc-timestamp.ts) on document shapes Folio's own
 * signer does not make, through signDocument (no HTTP) with the generated identity and the test TSA:
 * - a document that already has a DSS written by someone else, as a direct dictionary in the catalog with
 *   direct arrays and a VRI entry: B-LT keeps every existing entry, adds each certificate once (Folio's root
 *   is already there), and adds its own VRI;
 * - a document whose AcroForm, /Fields and page /Annots are indirect objects: B-LTA's document timestamp
 *   rewrites exactly those arrays and leaves the catalog and the AcroForm dictionary alone.
 * Checked with qpdf --check, pdfsig and Folio's verify.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import pino from 'pino';
import { PDFDocument, PDFName, StandardFonts, type PDFRef } from '@cantoo/pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/modules/config.js';
import type { SigningIdentity } from '../../src/services.js';
import { loadSigningIdentity, signDocument } from '../../src/sign/index.js';
import { addDocumentTimestamp } from '../../src/sign/ltv.js';
import { isRef, openPdf, type PdfValue } from '../../src/pdf/index.js';
import { loadTrustStore, verifyPdf, type TrustStore } from '../../src/verify/index.js';
import { nssDbTrusting, pdfsigBlocks, qpdfCheck, tmpDir, writeTemp } from './helpers.js';
import { pdfsigAsync, readDss, signatureContents } from './ltv-helpers.js';
import { startTestTsa, type TestTsa } from './tsa-server.js';

let work: string;
let identity: SigningIdentity;
let trust: TrustStore;
let tsa: TestTsa;
let nss: string;

beforeAll(async () => {
  work = tmpDir('folio-dss-test-');
  identity = await loadSigningIdentity(loadConfig({ DATA_DIR: work }), pino({ level: 'silent' }));
  tsa = await startTestTsa(work);
  trust = loadTrustStore({
    rootCertificatePem: identity.rootCertificatePem,
    certificatePem: identity.certificatePem,
    trustAnchorsPath: writeTemp(work, 'tsa-root.pem', tsa.rootPem),
  });
  nss = nssDbTrusting(identity.rootCertificatePem!);
}, 60_000);
afterAll(async () => {
  await tsa?.close();
  fs.rmSync(work, { recursive: true, force: true });
  if (nss) fs.rmSync(nss, { recursive: true, force: true });
});

const sign = (document: Uint8Array, level: 'B-LT' | 'B-LTA') =>
  signDocument(
    {
      document,
      signer: { name: 'Ada Lovelace', email: 'ada@example.com' },
      auditTrail: [{ type: 'document.signed', timestamp: new Date('2026-11-20T09:15:00Z') }],
      level: { level, asked: true },
    },
    { identity, tsaUrl: tsa.url },
  );

async function base(): Promise<PDFDocument> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 0; i < 2; i++) doc.addPage([595, 842]).drawText(`Page ${i + 1}`, { x: 40, y: 780, size: 14, font });
  return doc;
}

async function expectAccepted(name: string, pdf: Uint8Array): Promise<void> {
  const file = writeTemp(work, name, pdf);
  expect(qpdfCheck(file).status).toBe(0);
  const cades = pdfsigBlocks(await pdfsigAsync(file, nss)).filter((b) => b.includes('ETSI.CAdES.detached'));
  expect(cades).toHaveLength(1);
  expect(cades[0]).toContain('Signature Validation: Signature is Valid.');
  expect(cades[0]).toContain('Certificate Validation: Certificate is Trusted.');
  const report = verifyPdf(pdf, { trust });
  expect(report.indication, report.reason).toBe('TOTAL_PASSED');
}

describe('appendDss', () => {
  it("keeps another producer's direct DSS and VRI, adding each certificate once", async () => {
    const doc = await base();
    const rootDer = identity.chainDer[1]!;
    const foreignCert = doc.context.register(doc.context.stream(rootDer));
    const foreignOcsp = doc.context.register(doc.context.stream(new Uint8Array([0x30, 0x03, 0x0a, 0x01, 0x06])));
    doc.catalog.set(
      PDFName.of('DSS'),
      doc.context.obj({ Certs: [foreignCert], OCSPs: [foreignOcsp], VRI: { ['0'.repeat(40)]: { Cert: [foreignCert] } } }),
    );
    const input = await doc.save({ useObjectStreams: false });
    const out = (await sign(input, 'B-LT')).pdf;
    await expectAccepted('foreign-dss.pdf', out);

    const dss = readDss(out)!;
    const fingerprints = dss.certs.map((c) => crypto.createHash('sha256').update(c).digest('hex'));
    expect(new Set(fingerprints).size).toBe(fingerprints.length); // Folio's root was already there: not twice
    expect(dss.certs.some((c) => Buffer.from(c).equals(Buffer.from(rootDer)))).toBe(true);
    expect(dss.ocsps).toHaveLength(2); // the foreign entry kept, ours added
    const [contents] = signatureContents(out);
    const ours = crypto.createHash('sha1').update(contents!).digest('hex').toUpperCase();
    expect([...dss.vri.keys()].sort()).toEqual(['0'.repeat(40), ours].sort());
  }, 60_000);
});

describe('appendDocTimestampPlaceholder', () => {
  it('adds the timestamp field through indirect /AcroForm, /Fields and /Annots without touching the catalog', async () => {
    const doc = await base();
    const fields = doc.context.register(doc.context.obj([]));
    const acroForm = doc.context.register(doc.context.obj({ Fields: fields }));
    doc.catalog.set(PDFName.of('AcroForm'), acroForm);
    for (const page of doc.getPages()) page.node.set(PDFName.of('Annots'), doc.context.register(doc.context.obj([])));
    const input = await doc.save({ useObjectStreams: false });
    const out = (await sign(input, 'B-LTA')).pdf;
    await expectAccepted('indirect-form.pdf', out);

    // The last revision (the document timestamp's) rewrote the /Fields and /Annots arrays, not the catalog.
    const pdf = openPdf(out);
    const last = pdf.revisions[pdf.last]!;
    const catalogRef = pdf.catalogRefAt(pdf.last)!;
    expect(last.entries.has(catalogRef.num)).toBe(false);
    expect(last.entries.has((acroForm as PDFRef).objectNumber)).toBe(false);
    expect(last.entries.has((fields as PDFRef).objectNumber)).toBe(true);
    const fieldList = pdf.deref(pdf.dictAt(pdf.catalogAt(pdf.last)!.map.get('AcroForm'), pdf.last)!.map.get('Fields'), pdf.last) as PdfValue[];
    const names = fieldList
      .filter(isRef)
      .map((r) => Buffer.from((pdf.dictAt(r, pdf.last)!.map.get('T') as { bytes: Uint8Array }).bytes).toString('latin1'));
    expect(names).toEqual(['Folio-Signature-1', 'Folio-Timestamp-1']);
    const report = verifyPdf(out, { trust });
    expect(report.signatures.map((s) => s.fieldName)).toEqual(['Folio-Signature-1', 'Folio-Timestamp-1']);
  }, 60_000);

  it('stamps again with room when the token does not fit the placeholder', async () => {
    const signed = (await sign(await (await base()).save(), 'B-LT')).pdf;
    const before = tsa.requests;
    const out = await addDocumentTimestamp(signed, tsa.url, 64); // far too small for any token
    expect(tsa.requests).toBe(before + 2);
    expect(qpdfCheck(writeTemp(work, 'restamped.pdf', out)).status).toBe(0);
    const report = verifyPdf(out, { trust });
    expect(report.indication, report.reason).toBe('TOTAL_PASSED');
    expect(report.signatures.map((s) => s.fieldName)).toEqual(['Folio-Signature-1', 'Folio-Timestamp-1']);
  }, 60_000);
});
