/**
 * POST /v1/sign end to end on the real API, with every output checked by independent tools: pdfsig
 * (poppler, NSS trusting the generated root), qpdf --check, openssl cms -verify and pdftotext.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PDFDict, PDFDocument, PDFName, PDFNumber } from '@cantoo/pdf-lib';
import { startTestApi, type TestApi } from '../helpers/api.js';
import {
  auditAttachment,
  lastSignature,
  makePdf,
  nssDbTrusting,
  opensslCmsPrint,
  opensslCmsVerify,
  pageCount,
  pdfsig,
  pdfsigBlocks,
  pdftotext,
  postSign,
  qpdfCheck,
  sha256,
  signBody,
  tmpDir,
  writeTemp,
} from './helpers.js';

let t: TestApi;
let work: string;
let nss: string;
let rootPem: string;

beforeAll(async () => {
  t = await startTestApi();
  work = tmpDir('folio-sign-test-');
  rootPem = t.services.signing!.rootCertificatePem!;
  nss = nssDbTrusting(rootPem);
});
afterAll(async () => {
  await t?.close();
  fs.rmSync(work, { recursive: true, force: true });
  fs.rmSync(nss, { recursive: true, force: true });
});

/** Every check a signed Folio output must pass; returns the pdfsig blocks. */
function expectValidFolioOutput(file: string, pdf: Uint8Array, expectedSignatures = 1): string[] {
  const check = qpdfCheck(file);
  expect(check.output).toContain('No syntax or stream encoding errors');
  expect(check.status).toBe(0);
  const blocks = pdfsigBlocks(pdfsig(file, nss));
  expect(blocks).toHaveLength(expectedSignatures);
  const last = blocks[blocks.length - 1]!;
  expect(last).toContain('Signature Validation: Signature is Valid.');
  expect(last).toContain('Total document signed');
  // poppler 22.12 trusts the chain of the first signature it validates in a run, but reports "Unknown issue
  // with Certificate" for a second signature with the same certificate (an NSS object-cache quirk); the
  // OpenSSL check below validates every output's chain against the generated root instead.
  expect(blocks[0]).toMatch(/Certificate Validation: Certificate is Trusted\.|Certificate Validation: Certificate issuer isn't Trusted\./);
  if (expectedSignatures === 1) expect(last).toContain('Certificate Validation: Certificate is Trusted.');
  expect(last).toContain('Signature Type: ETSI.CAdES.detached');
  expect(last).toContain('Signing Hash Algorithm: SHA-256');
  const verified = opensslCmsVerify(work, lastSignature(pdf), rootPem);
  expect(verified.output).toContain('Verification successful');
  expect(verified.status).toBe(0);
  return blocks;
}

describe('POST /v1/sign on a PDF', () => {
  let input: Uint8Array;
  let output: Uint8Array;
  let file: string;

  beforeAll(async () => {
    input = await makePdf(2, { size: [612, 792] });
    const res = await postSign(t, signBody(input, { metadata: { ip: '198.51.100.4', userAgent: 'ignored-when-signer-has-one', orderId: 'PO-7' } }));
    expect(res.status).toBe(200);
    expect(res.json.document.contentType).toBe('application/pdf');
    output = res.pdf!;
    file = writeTemp(work, 'basic.pdf', output);
  });

  it('keeps the input byte for byte and appends one incremental update', () => {
    expect(Buffer.from(output.subarray(0, input.length)).equals(Buffer.from(input))).toBe(true);
    const tail = Buffer.from(output.subarray(input.length)).toString('latin1');
    expect(tail).toMatch(/\/Prev \d+/);
    expect((tail.match(/%%EOF/g) ?? []).length).toBe(1);
  });

  it('carries one PAdES signature that pdfsig, qpdf and OpenSSL accept', () => {
    const [block] = expectValidFolioOutput(file, output);
    expect(block).toContain('Signature Field Name: Folio-Signature-1');
    expect(block).toMatch(/Signer Certificate Common Name: Folio Document Signing/);
  });

  it('signs content-type, message-digest and signing-certificate-v2, and no signing-time', () => {
    const printed = opensslCmsPrint(work, lastSignature(output).cms);
    expect(printed).toContain('contentType');
    expect(printed).toContain('messageDigest');
    expect(printed).toMatch(/signingCertificateV2/i);
    expect(printed).not.toMatch(/signingTime/i);
    const digest = crypto.createHash('sha256').update(lastSignature(output).signedBytes).digest('hex').toUpperCase();
    // The message digest attribute is the SHA-256 of the signed byte ranges.
    expect(printed.replace(/[\s:-]/g, '').toUpperCase()).toContain(digest.slice(0, 16));
  });

  it('has a signature dictionary with /M, the signer name and the reason, and SigFlags 3', () => {
    const tail = Buffer.from(output.subarray(input.length)).toString('latin1');
    expect(tail).toMatch(/\/Type \/Sig \/Filter \/Adobe\.PPKLite \/SubFilter \/ETSI\.CAdES\.detached/);
    expect(tail).toMatch(/\/M \(D:\d{14}Z\)/);
    const name = /\/Name <FEFF([0-9A-F]+)>/.exec(tail)![1]!;
    expect(Buffer.from(name, 'hex').swap16().toString('utf16le')).toBe('Ada Lovelace');
    const reason = /\/Reason <FEFF([0-9A-F]+)>/.exec(tail)![1]!;
    expect(Buffer.from(reason, 'hex').swap16().toString('utf16le')).toContain('ada@example.com');
    expect(tail).toMatch(/\/SigFlags 3/);
    expect(tail).toMatch(/\/Rect \[ 0 0 0 0 \]/);
  });

  it('appends an audit page the size of the last page, with the signer, events and hashes', async () => {
    expect(pageCount(file)).toBe(3);
    const doc = await PDFDocument.load(output);
    const audit = doc.getPage(2);
    expect(audit.getSize()).toEqual({ width: 612, height: 792 });
    const text = pdftotext(file, 3, 3);
    for (const s of [
      'Ada Lovelace',
      'ada@example.com',
      '203.0.113.7',
      'Firefox/140.0',
      'evt-42',
      sha256(input),
      'document.viewed',
      'document.signed',
      '2026-11-20 09:15:00 UTC',
      '2026-11-20 08:16:30.250 UTC',
      'Folio Document Signing',
    ]) {
      expect(text.replace(/\s+/g, ' ')).toContain(s);
    }
    // The fingerprint may be wrapped across lines, anywhere.
    const fingerprint = new crypto.X509Certificate(t.services.signing!.certificatePem).fingerprint256;
    expect(pdftotext(file, 3, 3).replace(/\s+/g, '')).toContain(fingerprint);
    // The input's own pages are untouched.
    expect(pdftotext(file, 1, 1)).toContain('Contract page 1');
  });

  it('embeds audit-trail.json with the agreed shape and hashes', () => {
    const json = auditAttachment(file);
    expect(json.format).toBe('folio-audit-trail/1');
    expect(json.documentType).toBe('pdf');
    expect(json.documentSha256).toBe(sha256(input));
    expect(json.pdfSha256).toBe(sha256(input));
    expect(json.pdfLength).toBe(input.length);
    expect(sha256(output.subarray(0, json.pdfLength))).toBe(json.pdfSha256);
    expect(json.signer).toEqual({
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      ip: '203.0.113.7',
      userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0',
    });
    expect(json.eventId).toBe('evt-42');
    expect(json.metadata).toEqual({ ip: '198.51.100.4', userAgent: 'ignored-when-signer-has-one', orderId: 'PO-7' });
    expect(new Date(json.signedAt).toISOString()).toBe(json.signedAt);
    expect(json.certificate.fingerprint).toBe(new crypto.X509Certificate(t.services.signing!.certificatePem).fingerprint256);
    expect(json.certificate.subject).toMatch(/CN=Folio Document Signing/);
    expect(json.auditTrail).toEqual([
      { type: 'document.viewed', timestamp: '2026-11-20T09:15:00.000Z', data: { page: 1 } },
      { type: 'document.signed', timestamp: '2026-11-20T08:16:30.250Z' },
    ]);
    const raw = Buffer.from(output).toString('latin1');
    expect(raw).toContain('/Subtype /application#2Fjson');
    expect(raw).toMatch(/\/AF \[ \d+ 0 R \]/);
  });
});

describe('document structures', () => {
  it('extends a document with cross-reference streams with an xref stream update', async () => {
    const input = await makePdf(3, { objectStreams: true });
    expect(Buffer.from(input).toString('latin1')).toContain('/Type /XRef');
    const res = await postSign(t, signBody(input));
    expect(res.status).toBe(200);
    const file = writeTemp(work, 'xrefstream.pdf', res.pdf!);
    expectValidFolioOutput(file, res.pdf!);
    const tail = Buffer.from(res.pdf!.subarray(input.length)).toString('latin1');
    expect(tail).toMatch(/\/Type \/XRef .*\/Prev \d+/);
    expect(tail).not.toMatch(/^xref$/m);
    expect(pageCount(file)).toBe(4);
  });

  for (const [label, args] of [
    ['linearized', ['--linearize']],
    ['object streams (qpdf)', ['--object-streams=generate']],
    ['linearized with object streams', ['--linearize', '--object-streams=generate']],
  ] as const) {
    it(`signs a file written by qpdf: ${label}`, async () => {
      const plain = writeTemp(work, `plain-${label}.pdf`, await makePdf(3));
      const variant = path.join(work, `variant-${label}.pdf`);
      execFileSync('qpdf', [...args, plain, variant]);
      const input = new Uint8Array(fs.readFileSync(variant));
      const res = await postSign(t, signBody(input));
      expect(res.status).toBe(200);
      expect(Buffer.from(res.pdf!.subarray(0, input.length)).equals(Buffer.from(input))).toBe(true);
      const file = writeTemp(work, `signed-${label}.pdf`, res.pdf!);
      expectValidFolioOutput(file, res.pdf!);
      expect(pageCount(file)).toBe(4);
      expect(pdftotext(file, 3, 3)).toContain('Contract page 3');
    });
  }

  it('certificate.enabled=false adds no page but still the attachment and signature', async () => {
    const input = await makePdf(1);
    const res = await postSign(t, signBody(input, { certificate: { enabled: false } }));
    expect(res.status).toBe(200);
    const file = writeTemp(work, 'nopage.pdf', res.pdf!);
    expectValidFolioOutput(file, res.pdf!);
    expect(pageCount(file)).toBe(1);
    expect(auditAttachment(file).documentSha256).toBe(sha256(input));
  });

  it('a second Folio signature keeps the first valid, with a new field name', async () => {
    const first = await postSign(t, signBody(await makePdf(1)));
    const second = await postSign(t, signBody(first.pdf!, { signer: { name: 'Grace Hopper', email: 'grace@example.com' } }));
    expect(second.status).toBe(200);
    const file = writeTemp(work, 'twice.pdf', second.pdf!);
    const blocks = expectValidFolioOutput(file, second.pdf!, 2);
    expect(blocks[0]).toContain('Folio-Signature-1');
    expect(blocks[0]).toContain('Signature is Valid.');
    expect(blocks[0]).toContain('Not total document signed');
    expect(blocks[1]).toContain('Folio-Signature-2');
    const json = auditAttachment(file);
    expect(json.signer.name).toBe('Grace Hopper');
    expect(json.pdfLength).toBe(first.pdf!.length);
    expect(pageCount(file)).toBe(3);
  });

  it('a PDF first signed by pdfsig -add-signature keeps that signature valid', async () => {
    // A signer that nobody here wrote: poppler signing with a key in an NSS database.
    const dir = tmpDir('folio-pdfsig-signer-');
    try {
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-keyout',
          'k.pem',
          '-out',
          'c.pem',
          '-subj',
          '/CN=Poppler Signer',
          '-days',
          '30',
          '-addext',
          'keyUsage=critical,digitalSignature,nonRepudiation',
        ],
        { cwd: dir, stdio: 'ignore' },
      );
      execFileSync('openssl', ['pkcs12', '-export', '-inkey', 'k.pem', '-in', 'c.pem', '-out', 'p.p12', '-passout', 'pass:pw', '-name', 'poppler'], {
        cwd: dir,
        stdio: 'ignore',
      });
      execFileSync('certutil', ['-N', '-d', `sql:${dir}`, '--empty-password']);
      execFileSync('pk12util', ['-i', path.join(dir, 'p.p12'), '-d', `sql:${dir}`, '-W', 'pw'], { stdio: 'ignore' });
      execFileSync('certutil', ['-A', '-n', 'folio-root', '-t', 'C,C,C', '-i', writeTemp(dir, 'folio-root.pem', rootPem), '-d', `sql:${dir}`]);
      const plain = writeTemp(dir, 'plain.pdf', await makePdf(2));
      const signed = path.join(dir, 'poppler-signed.pdf');
      execFileSync('pdfsig', ['-nssdir', `sql:${dir}`, '-add-signature', '-nick', 'poppler', '-new-signature-field-name', 'Poppler1', plain, signed]);
      expect(pdfsig(signed, dir)).toContain('Signature is Valid.');

      const input = new Uint8Array(fs.readFileSync(signed));
      const res = await postSign(t, signBody(input));
      expect(res.status).toBe(200);
      const out = writeTemp(dir, 'both.pdf', res.pdf!);
      const blocks = pdfsigBlocks(pdfsig(out, dir));
      expect(blocks).toHaveLength(2);
      expect(blocks[0]).toContain('Signature Field Name: Poppler1');
      expect(blocks[0]).toContain('Signature Validation: Signature is Valid.');
      expect(blocks[1]).toContain('Signature Field Name: Folio-Signature-1');
      expect(blocks[1]).toContain('Signature Validation: Signature is Valid.');
      expect(blocks[1]).toContain('Total document signed');
      expect(qpdfCheck(out).status).toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('signs real signed PDFs from the attack corpus without breaking their signatures', async () => {
    const corpus = path.join(import.meta.dirname, '../fixtures/pdf-attacks/pyhanko-coverage/minimal-two-fields-signed-twice.pdf');
    if (!fs.existsSync(corpus)) {
      console.warn(`skipped: ${corpus} is absent`);
      return;
    }
    const input = new Uint8Array(fs.readFileSync(corpus));
    const before = pdfsigBlocks(pdfsig(corpus));
    const res = await postSign(t, signBody(input));
    expect(res.status).toBe(200);
    const file = writeTemp(work, 'corpus.pdf', res.pdf!);
    const after = pdfsigBlocks(pdfsig(file));
    expect(after).toHaveLength(before.length + 1);
    after.forEach((b) => expect(b).toContain('Signature Validation: Signature is Valid.'));
    expect(after[after.length - 1]).toContain('Total document signed');
    expect(qpdfCheck(file).status).toBe(0);
  });
});

describe('page tree and certification', () => {
  it('audit pages do not inherit a rotation or crop box from the page tree', async () => {
    const doc = await PDFDocument.load(await makePdf(1));
    const pagesRoot = doc.catalog.lookup(PDFName.of('Pages')) as PDFDict;
    pagesRoot.set(PDFName.of('Rotate'), PDFNumber.of(90));
    pagesRoot.set(PDFName.of('CropBox'), doc.context.obj([0, 0, 100, 100]));
    const input = await doc.save({ useObjectStreams: false });
    const res = await postSign(t, signBody(input));
    expect(res.status).toBe(200);
    const out = await PDFDocument.load(res.pdf!);
    expect(out.getPage(0).getRotation().angle).toBe(90);
    const audit = out.getPage(1);
    expect(audit.getRotation().angle).toBe(0);
    expect(audit.getCropBox()).toEqual(audit.getMediaBox());
    // The visible size of the original last page (rotated 90°) is what the audit page takes.
    expect(audit.getSize()).toEqual({ width: 841.89, height: 595.28 });
    expectValidFolioOutput(writeTemp(work, 'rotated.pdf', res.pdf!), res.pdf!);
  });

  it('refuses a document certified with "no changes allowed" (DocMDP P=1)', async () => {
    const doc = await PDFDocument.load(await makePdf(1));
    const sig = doc.context.obj({
      Type: 'Sig',
      Reference: [{ Type: 'SigRef', TransformMethod: 'DocMDP', TransformParams: { Type: 'TransformParams', P: 1, V: '1.2' } }],
    });
    doc.catalog.set(PDFName.of('Perms'), doc.context.obj({ DocMDP: doc.context.register(sig) }));
    const res = await postSign(t, signBody(await doc.save({ useObjectStreams: false })));
    expect(res.status).toBe(422);
    expect(res.json.code).toBe('UNPROCESSABLE_DOCUMENT');
    expect(res.json.message).toMatch(/DocMDP P=1/);
  });
});

describe('concurrency and defaults', () => {
  it('eight concurrent requests each get their own valid signature and audit data', async () => {
    const inputs = await Promise.all(Array.from({ length: 8 }, (_, i) => makePdf(1 + (i % 3), { text: `Doc ${i}` })));
    const results = await Promise.all(
      inputs.map((pdf, i) => postSign(t, signBody(pdf, { eventId: `evt-${i}`, signer: { name: `Signer ${i}`, email: `s${i}@example.com` } }))),
    );
    results.forEach((res, i) => {
      expect(res.status).toBe(200);
      const file = writeTemp(work, `concurrent-${i}.pdf`, res.pdf!);
      expectValidFolioOutput(file, res.pdf!);
      const json = auditAttachment(file);
      expect(json.eventId).toBe(`evt-${i}`);
      expect(json.signer.name).toBe(`Signer ${i}`);
      expect(json.documentSha256).toBe(sha256(inputs[i]!));
      expect(pdftotext(file, pageCount(file), pageCount(file))).toContain(`s${i}@example.com`);
    });
  });

  it('takes the IP and user agent from metadata when the signer has none', async () => {
    const res = await postSign(
      t,
      signBody(await makePdf(1), {
        signer: { name: 'Ada Lovelace', email: 'ada@example.com' },
        metadata: { ip: '2001:db8::42', userAgent: 'FolioTest/1.0' },
      }),
    );
    const file = writeTemp(work, 'meta.pdf', res.pdf!);
    expect(auditAttachment(file).signer).toEqual({ name: 'Ada Lovelace', email: 'ada@example.com', ip: '2001:db8::42', userAgent: 'FolioTest/1.0' });
    const text = pdftotext(file, 2, 2);
    expect(text).toContain('2001:db8::42');
    expect(text).toContain('FolioTest/1.0');
  });
});

describe('the interface agreed with /v1/verify', () => {
  it('verify finds our signature intact, trusted, issued by this service, and the audit hash matching', async () => {
    const input = await makePdf(2, { objectStreams: true });
    const signed = await postSign(t, signBody(input));
    const res = await fetch(`${t.url}/v1/verify`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ document: { base64: Buffer.from(signed.pdf!).toString('base64') } }),
    });
    expect(res.status).toBe(200);
    const v = await res.json();
    expect(v.valid).toBe(true);
    expect(v.indication).toBe('TOTAL_PASSED');
    expect(v.signatureCount).toBe(1);
    const [sig] = v.signatures;
    expect(sig.fieldName).toBe('Folio-Signature-1');
    expect(sig.subFilter).toBe('ETSI.CAdES.detached');
    expect(sig.coverage).toBe('ENTIRE_FILE');
    expect(sig.issuedByThisService).toBe(true);
    expect(sig.certificate.trusted).toBe(true);
    expect(sig.signer.fingerprint).toBe(new crypto.X509Certificate(t.services.signing!.certificatePem).fingerprint256);
    expect(v.auditTrail.hashMatches).toBe(true);
    expect(v.auditTrail.documentSha256).toBe(sha256(input));
    expect(v.auditTrail.signer.email).toBe('ada@example.com');
  });
});

describe('GET /v1/verify/key matches the signatures', () => {
  it('publishes the certificate that signs the documents', async () => {
    const res = await fetch(`${t.url}/v1/verify/key`, { headers: { authorization: `Bearer ${t.apiKey}` } });
    const key = await res.json();
    const out = await postSign(t, signBody(await makePdf(1)));
    const printed = opensslCmsPrint(work, lastSignature(out.pdf!).cms);
    const serial = new crypto.X509Certificate(key.certificate).serialNumber.toLowerCase();
    expect(printed.replace(/[\s:]/g, '').toLowerCase()).toContain(serial.replace(/^0+/, ''));
    expect(key.fingerprint).toBe(auditAttachment(writeTemp(work, 'key.pdf', out.pdf!)).certificate.fingerprint);
  });
});
