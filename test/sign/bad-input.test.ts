/**
 * POST /v1/sign with hostile or broken input: every case ends in a clear 4xx envelope or in a valid signed
 * PDF, never a crash or a hang.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PDFDocument, StandardFonts } from '@cantoo/pdf-lib';
import { authed, startTestApi, type TestApi } from '../helpers/api.js';
// The output checkers (pdfsig, qpdf, OpenSSL, pdftotext) and request builders shared by the sign tests.
import * as h from './helpers.js';

let t: TestApi;
let work: string;
let pdf: Uint8Array;

beforeAll(async () => {
  t = await startTestApi();
  work = h.tmpDir('folio-sign-bad-');
  pdf = await h.makePdf(1);
});
afterAll(async () => {
  await t?.close();
  fs.rmSync(work, { recursive: true, force: true });
});

function expectSignedAndValid(out: Uint8Array, name: string): string {
  const file = h.writeTemp(work, name, out);
  const check = h.qpdfCheck(file);
  expect(check.output).toContain('No syntax or stream encoding errors');
  expect(check.status).toBe(0);
  const sig = h.pdfsig(file);
  expect(sig).toContain('Signature Validation: Signature is Valid.');
  expect(sig).toContain('Total document signed');
  expect(h.opensslCmsVerify(work, h.lastSignature(out), t.services.signing!.rootCertificatePem!).status).toBe(0);
  return file;
}

describe('request validation', () => {
  it('rejects unknown top-level properties, one detail each', async () => {
    const res = await h.postSign(t, { ...h.signBody(pdf), colour: 'red', callbackUrl: 'x' });
    expect(res.status).toBe(400);
    expect(res.json.code).toBe('VALIDATION_ERROR');
    const fields = res.json.details.map((d: { field: string }) => d.field);
    expect(fields).toEqual(expect.arrayContaining(['colour', 'callbackUrl']));
    expect(res.json.details.find((d: { field: string }) => d.field === 'colour').issue).toBe('unknown property');
  });

  it('lists every offending field of the signer and the audit trail', async () => {
    const res = await h.postSign(
      t,
      h.signBody(pdf, {
        signer: { name: ' A ', email: 'not-an-email', ip: '300.1.2.3' },
        auditTrail: [
          { type: 'ok', timestamp: 'yesterday' },
          { type: 'ok', timestamp: '2026-02-30T10:00:00Z' },
          { type: 'ok', timestamp: '2026-11-20T10:00:00Z', data: { blob: 'x'.repeat(17 * 1024) } },
          { type: 'ok', timestamp: '2026-11-20T10:00:00+05:30' },
        ],
        metadata: { ip: 'fe80::1::2' },
      }),
    );
    expect(res.status).toBe(400);
    expect(res.json.code).toBe('VALIDATION_ERROR');
    const fields = res.json.details.map((d: { field: string }) => d.field).sort();
    expect(fields).toEqual([
      'auditTrail.0.timestamp',
      'auditTrail.1.timestamp',
      'auditTrail.2.data',
      'metadata.ip',
      'signer.email',
      'signer.ip',
      'signer.name',
    ]);
  });

  it('accepts IPv6 addresses and ISO 8601 timestamps with offsets, and requires at least one event', async () => {
    const ok = await h.postSign(
      t,
      h.signBody(pdf, {
        signer: { name: 'Li', email: 'li@example.org', ip: '2001:db8::7' },
        auditTrail: [{ type: 'signed', timestamp: '2026-11-20T10:00:00+05:30' }],
      }),
    );
    expect(ok.status).toBe(200);
    expect(h.auditAttachment(h.writeTemp(work, 'ipv6.pdf', ok.pdf!)).auditTrail[0].timestamp).toBe('2026-11-20T04:30:00.000Z');

    const empty = await h.postSign(t, h.signBody(pdf, { auditTrail: [] }));
    expect(empty.status).toBe(400);
    expect(empty.json.details[0].field).toBe('auditTrail');
    const missing = await h.postSign(t, { document: { base64: Buffer.from(pdf).toString('base64') } });
    expect(missing.status).toBe(400);
    expect(missing.json.details.map((d: { field: string }) => d.field).sort()).toEqual(['auditTrail', 'signer']);
    const longId = await h.postSign(t, h.signBody(pdf, { eventId: 'e'.repeat(129) }));
    expect(longId.status).toBe(400);
    expect(longId.json.details[0].field).toBe('eventId');
  });

  it('requires the API key', async () => {
    const res = await fetch(`${t.url}/v1/sign`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(h.signBody(pdf)),
    });
    expect(res.status).toBe(401);
  });
});

describe('bad documents', () => {
  it('invalid base64 → 400', async () => {
    const res = await h.postSign(t, { ...h.signBody(pdf), document: { base64: 'not base64 at all!!' } });
    expect(res.status).toBe(400);
    expect(res.json.code).toBe('VALIDATION_ERROR');
    expect(res.json.details[0].field).toBe('document.base64');
  });

  it('base64 of something that is neither PDF nor DOCX → 400 INVALID_FILE_FORMAT', async () => {
    const res = await h.postSign(t, { ...h.signBody(pdf), document: { base64: Buffer.from('hello, this is plain text').toString('base64') } });
    expect(res.status).toBe(400);
    expect(res.json.code).toBe('INVALID_FILE_FORMAT');
  });

  it('a PDF header followed by garbage → 422, not a crash', async () => {
    const res = await h.postSign(t, {
      ...h.signBody(pdf),
      document: { base64: Buffer.from('%PDF-1.7\n' + 'garbage '.repeat(100)).toString('base64') },
    });
    expect(res.status).toBe(422);
    expect(res.json.code).toBe('UNPROCESSABLE_DOCUMENT');
  });

  it('an encrypted PDF → 422 saying so (with and without a user password)', async () => {
    const plain = h.writeTemp(work, 'plain.pdf', pdf);
    for (const user of ['secret', '']) {
      const enc = path.join(work, `enc-${user || 'empty'}.pdf`);
      execFileSync('qpdf', ['--encrypt', user, 'owner-pw', '256', '--', plain, enc]);
      const res = await h.postSign(t, h.signBody(new Uint8Array(fs.readFileSync(enc))));
      expect(res.status).toBe(422);
      expect(res.json.code).toBe('UNPROCESSABLE_DOCUMENT');
      expect(res.json.message).toMatch(/encrypted/i);
    }
  });

  it('a PDF whose startxref points nowhere is repaired, then signed validly', async () => {
    const text = Buffer.from(pdf).toString('latin1');
    const broken = text.replace(/startxref\s+\d+/, 'startxref\n999999');
    expect(broken).not.toBe(text);
    const res = await h.postSign(t, h.signBody(Buffer.from(broken, 'latin1')));
    expect(res.status).toBe(200);
    const file = expectSignedAndValid(res.pdf!, 'repaired-startxref.pdf');
    const json = h.auditAttachment(file);
    expect(json.documentSha256).toBe(h.sha256(Buffer.from(broken, 'latin1')));
    expect(json.pdfSha256).toBe(h.sha256(res.pdf!.subarray(0, json.pdfLength)));
    expect(h.pdftotext(file, 1, 1)).toContain('Contract page 1');
  });

  it('a PDF whose xref entries are shifted is repaired, then signed validly', async () => {
    const text = Buffer.from(pdf).toString('latin1');
    // Insert bytes before the first object: every xref offset is now wrong.
    const shifted = text.replace(/\n1 0 obj/, '\n% padding that moves every object\n1 0 obj');
    expect(shifted).not.toBe(text);
    const res = await h.postSign(t, h.signBody(Buffer.from(shifted, 'latin1')));
    expect(res.status).toBe(200);
    expectSignedAndValid(res.pdf!, 'repaired-offsets.pdf');
  });

  it('a truncated PDF is repaired or refused with 422, never a 500', async () => {
    const truncated = pdf.subarray(0, Math.floor(pdf.length * 0.6));
    const res = await h.postSign(t, h.signBody(truncated));
    expect([200, 422]).toContain(res.status);
    if (res.status === 200) expectSignedAndValid(res.pdf!, 'truncated.pdf');
    else expect(res.json.code).toBe('UNPROCESSABLE_DOCUMENT');
  });

  it('document.url pointing at loopback or link-local metadata → 400 URL_NOT_ALLOWED', async () => {
    for (const url of ['http://127.0.0.1:9/doc.pdf', 'http://169.254.169.254/latest/meta-data/']) {
      const res = await h.postSign(t, { ...h.signBody(pdf), document: { url } });
      expect(res.status).toBe(400);
      expect(res.json.code).toBe('URL_NOT_ALLOWED');
    }
  });
});

describe('large and unusual content', () => {
  it('a PDF of almost 25 MB is signed; a larger one is 413', async () => {
    const doc = await PDFDocument.create();
    const font = await doc.embedFont(StandardFonts.Helvetica);
    doc.addPage().drawText('Large document', { x: 50, y: 700, font, size: 20 });
    // An incompressible attached stream makes the file big without many objects.
    doc.context.register(doc.context.stream(crypto.randomBytes(24 * 1024 * 1024)));
    const big = await doc.save({ useObjectStreams: false });
    expect(big.length).toBeGreaterThan(24 * 1024 * 1024);
    expect(big.length).toBeLessThan(25 * 1024 * 1024);
    const res = await h.postSign(t, h.signBody(big));
    expect(res.status).toBe(200);
    expect(Buffer.from(res.pdf!.subarray(0, big.length)).equals(Buffer.from(big))).toBe(true);
    expectSignedAndValid(res.pdf!, 'big.pdf');

    const tooBig = Buffer.concat([Buffer.from(big), crypto.randomBytes(2 * 1024 * 1024)]);
    const res2 = await fetch(
      `${t.url}/v1/sign`,
      authed(t, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(h.signBody(tooBig)),
      }),
    );
    expect(res2.status).toBe(413);
    expect((await res2.json()).code).toBe('FILE_TOO_LARGE');
  }, 120_000);

  it('10,000 audit events are paginated into many pages and the result is valid', async () => {
    const events = Array.from({ length: 10_000 }, (_, i) => ({
      type: i % 3 === 0 ? 'document.viewed' : 'field.filled',
      timestamp: new Date(Date.UTC(2026, 10, 20, 8, 0, i % 60, i % 1000)).toISOString(),
      data: { field: `f${i}`, value: `value ${i}` },
    }));
    const res = await h.postSign(t, h.signBody(pdf, { auditTrail: events }));
    expect(res.status).toBe(200);
    const file = expectSignedAndValid(res.pdf!, 'many-events.pdf');
    const pages = h.pageCount(file);
    expect(pages).toBeGreaterThan(100);
    const lastPage = h.pdftotext(file, pages, pages);
    expect(lastPage).toContain('10000');
    expect(lastPage).toContain(`page ${pages - 1} of ${pages - 1}`);
    expect(h.auditAttachment(file).auditTrail).toHaveLength(10_000);
  }, 180_000);

  it('RTL, emoji and control characters are rendered or escaped without breaking the PDF', async () => {
    const tricky = 'שלום עולם مرحبا 😀👩‍💻 \u202Eevil\u202C tab\there nul\u0000 bell\u0007 (paren) \\backslash endstream endobj %%EOF';
    const res = await h.postSign(
      t,
      h.signBody(pdf, {
        signer: { name: `Ada ${tricky}`.slice(0, 200), email: 'ada@example.com', userAgent: tricky },
        eventId: 'ид-😀',
        auditTrail: [{ type: tricky, timestamp: '2026-11-20T10:00:00Z', data: { note: tricky, nested: { deep: [tricky] } } }],
      }),
    );
    expect(res.status).toBe(200);
    const file = expectSignedAndValid(res.pdf!, 'unicode.pdf');
    const text = h.pdftotext(file, 2, 2);
    // The right-to-left override is shown as an escape rather than reordering the rest of the line.
    expect(text).toContain('[U+202E]');
    expect(text).toContain('(paren)');
    expect(text).toContain('ид-');
    const json = h.auditAttachment(file);
    expect(json.auditTrail[0].type).toBe(tricky);
    expect(json.auditTrail[0].data.note).toBe(tricky);
    expect(json.signer.userAgent).toBe(tricky);
  });
});
