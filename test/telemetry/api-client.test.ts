/**
 * FolioClient (from the built `@folio/client`, imported the way a user would) against the real API started by
 * startTestApi: every operation of docs/api.md whose route the running API publishes in /openapi.json.
 * An operation whose route is not there yet is skipped with a printed reason.
 */
import { PDFDocument, StandardFonts } from '@cantoo/pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Folio, FolioApiError, FolioClient, fromBase64 } from '@folio/client';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { codeFrom, startTestSmtp, type TestSmtp } from '../helpers/smtp.js';

let api: TestApi;
let smtp: TestSmtp;
let client: FolioClient;
let paths = new Set<string>();

beforeAll(async () => {
  smtp = await startTestSmtp();
  api = await startTestApi({ env: { SMTP_URL: smtp.url } });
  client = new FolioClient({ baseUrl: api.url + '/', apiKey: api.apiKey });
  const spec = (await (await fetch(`${api.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
  paths = new Set(Object.keys(spec.paths));
});
afterAll(async () => {
  await api?.close();
  await smtp?.close();
});

/** Runs `fn` only when the API publishes `path`; otherwise says why it did nothing. */
function whenRoute(path: string, fn: () => Promise<void>) {
  return async () => {
    if (!paths.has(path)) {
      console.log(`FolioClient: ${path} is not served by this API build yet; its client method was not exercised`);
      return;
    }
    await fn();
  };
}

async function samplePdf(): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const page = pdf.addPage([595, 842]);
  page.drawText('FolioClient test document', { x: 72, y: 760, size: 14, font: await pdf.embedFont(StandardFonts.Helvetica) });
  return pdf.save();
}

async function expectApiError(p: Promise<unknown>, status: number, code: string): Promise<FolioApiError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(FolioApiError);
  expect((e as FolioApiError).status).toBe(status);
  expect((e as FolioApiError).code).toBe(code);
  expect((e as FolioApiError).requestId).toBeTruthy();
  return e as FolioApiError;
}

describe('FolioClient against the running API', () => {
  it(
    'health',
    whenRoute('/v1/health', async () => {
      const h = await client.health();
      expect(['healthy', 'degraded']).toContain(h.status);
      expect(h.version).toBe('0.9.0');
    }),
  );

  it(
    'register and verifyEmail issue a key that then works; a wrong code is INVALID_CODE',
    whenRoute('/v1/auth/register', async () => {
      const anonymous = new FolioClient({ baseUrl: api.url });
      const email = 'client-lib@example.com';
      const reg = await anonymous.register(email);
      expect(reg).toMatchObject({ email, expiresInSeconds: 900 });
      const code = codeFrom(await smtp.waitFor(email));
      await expectApiError(anonymous.verifyEmail(email, code === '000000' ? '111111' : '000000'), 400, 'INVALID_CODE');
      const issued = await anonymous.verifyEmail(email, code);
      expect(issued.apiKey).toMatch(/^folio_sk_[A-Za-z0-9]{38}$/);
      const mine = new FolioClient({ baseUrl: api.url, apiKey: issued.apiKey });
      const keys = await mine.listKeys();
      expect(keys.find((k) => k.current)?.keyId).toBe(issued.keyId);
      await mine.revokeKey(issued.keyId);
      await expectApiError(mine.listKeys(), 401, 'AUTHENTICATION_ERROR');
    }),
  );

  it(
    'a missing or wrong key is a FolioApiError 401 with the envelope',
    whenRoute('/v1/auth/keys', async () => {
      const wrong = new FolioClient({ baseUrl: api.url, apiKey: 'folio_sk_notarealkey' });
      const e = await expectApiError(wrong.listKeys(), 401, 'AUTHENTICATION_ERROR');
      expect(e.message.length).toBeGreaterThan(0);
      await expect(new FolioClient({ baseUrl: api.url }).listKeys()).rejects.toThrow(/needs an apiKey/);
    }),
  );

  it(
    'convert md → docx, and the result opens in Folio',
    whenRoute('/v1/convert', async () => {
      const md = new TextEncoder().encode('# Contract\n\nDear {{name}},\n\n- one\n- two\n');
      const out = await client.convert(md, { from: 'md', to: 'docx', filename: 'letter.md' });
      expect(out.contentType).toBe('application/vnd.openxmlformats-officedocument.wordprocessingml.document');
      expect(out.filename).toBe('letter.docx');
      expect([...out.bytes.subarray(0, 2)]).toEqual([0x50, 0x4b]);
      const doc = await new Folio({ telemetry: { enabled: false } }).open(out.bytes);
      expect(doc.documentId).toMatch(/^[0-9a-f]{64}$/);
      await expectApiError(client.convert(md, { from: 'md', to: 'xlsx' as never }), 400, 'VALIDATION_ERROR');
    }),
  );

  it(
    'annotateFields and annotate fill a placeholder',
    whenRoute('/v1/annotate', async () => {
      const template = (await client.convert(new TextEncoder().encode('Dear {{name}},\n'), { from: 'md', to: 'docx' })).bytes;
      if (paths.has('/v1/annotate/fields')) {
        const fields = await client.annotateFields(template);
        expect(fields.map((f) => f.id ?? f.tag ?? f.alias)).toContain('name');
      }
      const filled = await client.annotate(template, [{ id: 'name', type: 'text', value: 'Ada' }]);
      expect(filled.report.filled.map((f) => f.id)).toContain('name');
      expect(filled.report.unmatched).toEqual([]);
      const again = await client.annotate({ base64: filled.document.base64 }, [{ id: 'name', type: 'text', value: 'x' }]);
      expect(again.report.unmatched).toEqual(['name']);
    }),
  );

  it(
    'sign, verifyKey and verify',
    whenRoute('/v1/sign', async () => {
      const signed = await client.sign({
        document: await samplePdf(),
        signer: { name: 'Ada Lovelace', email: 'ada@example.com' },
        auditTrail: [{ type: 'submit', timestamp: new Date().toISOString() }],
        eventId: 'client-test',
      });
      expect(signed.document.contentType).toBe('application/pdf');
      const pdf = fromBase64(signed.document.base64);
      expect(new TextDecoder().decode(pdf.subarray(0, 5))).toBe('%PDF-');
      if (paths.has('/v1/verify/key')) {
        const key = await client.verifyKey();
        expect(key.fingerprint).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
        expect(key.certificate).toContain('BEGIN CERTIFICATE');
      }
      if (paths.has('/v1/verify')) {
        const v = await client.verify(pdf);
        expect(v.signatureCount).toBe(1);
        expect(v.valid).toBe(true);
        expect(v.signatures[0]!.issuedByThisService).toBe(true);
        const unsigned = await client.verify({ base64: Buffer.from(await samplePdf()).toString('base64') });
        expect(unsigned.indication).toBe('NO_SIGNATURE_FOUND');
        await expectApiError(client.verify(new TextEncoder().encode('not a pdf at all')), 400, 'INVALID_FILE_FORMAT');
      }
    }),
  );
});
