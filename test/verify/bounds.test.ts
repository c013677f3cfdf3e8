/**
 * Documents that multiply the verifier's per-signature work: thousands of signatures (each its own revision,
 * or many fields sharing one huge signature), and audit-trail JSON built to be expensive to hand back. Each
 * case asserts the answer of verifyPdf and of signDocument: a correct result, or a FolioError naming the
 * limit. Inputs are generated here; vitest's per-test timeout is the time bound.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/modules/config.js';
import { FolioError } from '../../src/errors.js';
import type { SigningIdentity } from '../../src/services.js';
import { loadSigningIdentity } from '../../src/sign/index.js';
import { signMinimal } from '../sign/helpers.js';
import { loadTrustStore, openPdf, verifyPdf, type TrustStore } from '../../src/verify/index.js';
import { isRef, type PdfValue } from '../../src/pdf/index.js';
import { appendUpdate, makePdf, nextObjectNumber, serialize } from './fixtures.js';

let tmp: string;
let identity: SigningIdentity;
let trust: TrustStore;
/** A plain PDF signed once by signDocument: a real Folio signature to build on. */
let signed: Uint8Array;
/** The DER CMS of that signature. */
let cms: Uint8Array;

const sign = (document: Uint8Array) => signMinimal(identity, document);
const verify = (bytes: Uint8Array) => verifyPdf(bytes, { trust });

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-verify-bounds-'));
  identity = await loadSigningIdentity(loadConfig({ DATA_DIR: tmp }), pino({ level: 'silent' }));
  trust = loadTrustStore({ rootCertificatePem: identity.rootCertificatePem, certificatePem: identity.certificatePem });
  signed = (await sign(await makePdf(1))).pdf;
  const text = Buffer.from(signed).toString('latin1');
  const at = text.lastIndexOf('/Contents <') + '/Contents <'.length;
  const hex = text.slice(at, text.indexOf('>', at));
  // The DER length in the header says where the signature ends inside the zero-padded placeholder.
  const der = Buffer.from(hex, 'hex');
  const len = der[1]! & 0x80 ? der.subarray(2, 2 + (der[1]! & 0x7f)).reduce((n, b) => n * 256 + b, 0) + 2 + (der[1]! & 0x7f) : der[1]! + 2;
  cms = new Uint8Array(der.subarray(0, len));
}, 60_000);
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function refusal(f: () => unknown): FolioError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(FolioError);
    return e as FolioError;
  }
  throw new Error('expected a FolioError');
}

async function signRefusal(bytes: Uint8Array): Promise<FolioError> {
  const e = await sign(bytes).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(FolioError);
  return e as FolioError;
}

/**
 * Appends `count` revisions to `pdf`, each holding one signature dictionary (carrying `contents`, with a
 * /ByteRange over its own revision) and its widget, then one revision whose catalog lists every new field.
 */
function withSignatures(pdf: Uint8Array, count: number, contents: Uint8Array, listFields = true): Uint8Array {
  const doc = openPdf(pdf);
  const trailer = doc.trailerAt(doc.last)!;
  const root = trailer.map.get('Root') as { num: number };
  const catalog = doc.catalogAt(doc.last)!;
  const acro = doc.dictAt(catalog.map.get('AcroForm'), doc.last);
  const oldFields = (doc.deref(acro?.map.get('Fields'), doc.last) as PdfValue[] | undefined) ?? [];
  const page = (doc.deref(doc.dictAt(catalog.map.get('Pages'), doc.last)!.map.get('Kids'), doc.last) as PdfValue[])[0];
  if (!isRef(page)) throw new Error('no page ref');
  const parts: Buffer[] = [Buffer.from(pdf)];
  let pos = pdf.length;
  let prev = doc.revisions[doc.last]!.startxref!;
  let size = nextObjectNumber(pdf);
  const hex = Buffer.from(contents).toString('hex');
  const fields: PdfValue[] = [];
  for (let k = 0; k < count; k++) {
    const sig = size++;
    const field = size++;
    fields.push({ kind: 'ref', num: field, gen: 0 });
    const pre = `${sig} 0 obj\n<< /Type /Sig /Filter /Adobe.PPKLite /SubFilter /ETSI.CAdES.detached /ByteRange [0 0000000000 0000000000 0000000000] /Contents <`;
    const post = `> >>\nendobj\n${field} 0 obj\n<< /Type /Annot /Subtype /Widget /FT /Sig /T (Many${k}) /V ${sig} 0 R /F 4 /Rect [0 0 0 0] /P ${page.num} 0 R >>\nendobj\n`;
    const fieldAt = pos + pre.length + hex.length + post.indexOf(`${field} 0 obj`);
    const xrefAt = pos + pre.length + hex.length + post.length;
    const xref = `xref\n${sig} 2\n${String(pos).padStart(10, '0')} 00000 n \n${String(fieldAt).padStart(10, '0')} 00000 n \ntrailer\n<< /Size ${size} /Root ${root.num} 0 R /Prev ${prev} >>\nstartxref\n${xrefAt}\n%%EOF\n`;
    const end = xrefAt + xref.length;
    const cStart = pos + pre.length - 1;
    const cEnd = pos + pre.length + hex.length + 1;
    const br = `[0 ${String(cStart).padStart(10, '0')} ${String(cEnd).padStart(10, '0')} ${String(end - cEnd).padStart(10, '0')}]`;
    const chunk = Buffer.from(pre.replace('[0 0000000000 0000000000 0000000000]', br) + hex + post + xref, 'latin1');
    parts.push(chunk);
    pos += chunk.length;
    prev = xrefAt;
  }
  const out = new Uint8Array(Buffer.concat(parts));
  if (!listFields) return out;
  const newCatalog = new Map(catalog.map);
  newCatalog.set('AcroForm', {
    kind: 'dict',
    map: new Map<string, PdfValue>([
      ['Fields', [...oldFields, ...fields]],
      ['SigFlags', 3],
    ]),
    start: 0,
    end: 0,
  });
  return appendUpdate(out, [{ num: root.num, body: serialize({ kind: 'dict', map: newCatalog, start: 0, end: 0 }) }]);
}

describe('many signatures', () => {
  it('200 signatures are each reported, the real one intact and the copies not', async () => {
    const bytes = withSignatures(signed, 199, cms);
    const r = verify(bytes);
    expect(r.signatureCount).toBe(200);
    expect(r.signatures).toHaveLength(200);
    expect(r.signatures[0]!.integrity).toEqual({ digestMatches: true, signatureValid: true });
    expect(r.signatures.slice(1).every((s) => !s.integrity.digestMatches)).toBe(true);
    expect(r.indication).toBe('TOTAL_FAILED');
    // Signing such a document appends one more revision and keeps the bytes.
    const out = await sign(bytes);
    expect(Buffer.from(out.pdf.subarray(0, bytes.length)).equals(Buffer.from(bytes))).toBe(true);
  }, 30_000);

  it('600 signatures is a 422 naming the signature limit', async () => {
    const bytes = withSignatures(signed, 599, cms.subarray(0, 64));
    const e = refusal(() => verify(bytes));
    expect(e).toMatchObject({ code: 'UNPROCESSABLE_DOCUMENT', status: 422 });
    expect(e.message).toMatch(/600 signatures, more than the 500/);
  }, 30_000);

  it('5,000 signatures in 5,000 revisions is a 422 naming the revision limit, for both engines', async () => {
    const bytes = withSignatures(signed, 5_000, cms.subarray(0, 64), false);
    const e = refusal(() => verify(bytes));
    expect(e).toMatchObject({ code: 'UNPROCESSABLE_DOCUMENT', status: 422 });
    expect(e.message).toMatch(/more than 1000 revisions/);
    const s = await signRefusal(bytes);
    expect(s).toMatchObject({ code: 'UNPROCESSABLE_DOCUMENT', status: 422 });
    expect(s.message).toMatch(/more than 1000 revisions/);
  }, 30_000);

  it('many fields sharing one 3.9 MB signature are a 422 naming the CMS budget', async () => {
    // One signature dictionary with a large /Contents, and twelve fields whose /V all point at it.
    const big = new Uint8Array(3_900_000).fill(0x41);
    big[0] = 0x30;
    const once = withSignatures(signed, 1, big, false);
    const doc = openPdf(once);
    const sigNum = nextObjectNumber(signed);
    const catalog = doc.catalogAt(doc.last)!;
    const root = doc.trailerAt(doc.last)!.map.get('Root') as { num: number };
    let n = nextObjectNumber(once);
    const objects = [];
    const fields: PdfValue[] = [];
    for (let k = 0; k < 12; k++) {
      objects.push({ num: n, body: `<< /FT /Sig /T (Shared${k}) /V ${sigNum} 0 R /Rect [0 0 0 0] >>` });
      fields.push({ kind: 'ref', num: n++, gen: 0 });
    }
    const newCatalog = new Map(catalog.map);
    newCatalog.set('AcroForm', {
      kind: 'dict',
      map: new Map<string, PdfValue>([
        ['Fields', fields],
        ['SigFlags', 3],
      ]),
      start: 0,
      end: 0,
    });
    objects.push({ num: root.num, body: serialize({ kind: 'dict', map: newCatalog, start: 0, end: 0 }) });
    const bytes = appendUpdate(once, objects);
    const e = refusal(() => verify(bytes));
    expect(e).toMatchObject({ code: 'UNPROCESSABLE_DOCUMENT', status: 422 });
    expect(e.message).toMatch(/more than 32 MB of CMS data/);
  }, 30_000);
});

describe('audit-trail JSON inside the PDF', () => {
  /** `signed` with its audit-trail.json replaced (in a new revision) by `json`. */
  function withAuditJson(json: string): Uint8Array {
    const doc = openPdf(signed);
    const last = doc.last;
    const catalog = doc.catalogAt(last)!;
    const root = doc.trailerAt(last)!.map.get('Root') as { num: number };
    let n = nextObjectNumber(signed);
    const file = n++;
    const spec = n++;
    const names = n++;
    const body = Buffer.from(json, 'utf8');
    const newCatalog = new Map(catalog.map);
    newCatalog.set('Names', {
      kind: 'dict',
      map: new Map<string, PdfValue>([['EmbeddedFiles', { kind: 'ref', num: names, gen: 0 }]]),
      start: 0,
      end: 0,
    });
    return appendUpdate(signed, [
      {
        num: file,
        body: Buffer.concat([Buffer.from(`<< /Type /EmbeddedFile /Length ${body.length} >>\nstream\n`), body, Buffer.from('\nendstream')]),
      },
      { num: spec, body: `<< /Type /Filespec /F (audit-trail.json) /UF (audit-trail.json) /EF << /F ${file} 0 R >> >>` },
      { num: names, body: `<< /Names [(audit-trail.json) ${spec} 0 R] >>` },
      { num: root.num, body: serialize({ kind: 'dict', map: newCatalog, start: 0, end: 0 }) },
    ]);
  }

  it('the genuine audit trail is returned', () => {
    expect(verify(signed).auditTrail).toMatchObject({ format: 'folio-audit-trail/1', hashMatches: true });
  });

  it('JSON nested 200,000 deep is not handed back (the answer must stay serialisable)', () => {
    const deep = `{"format":"folio-audit-trail/1","x":${'['.repeat(200_000)}${']'.repeat(200_000)}}`;
    const r = verify(withAuditJson(deep));
    expect(r.auditTrail).toBeUndefined();
    expect(() => JSON.stringify(r)).not.toThrow();
  });

  it('more than 100,000 audit events are not handed back', () => {
    const many = JSON.stringify({ format: 'folio-audit-trail/1', auditTrail: Array.from({ length: 100_001 }, () => ({})) });
    expect(verify(withAuditJson(many)).auditTrail).toBeUndefined();
  });

  it('an audit file beyond 5 MB is not read', () => {
    const big = JSON.stringify({ format: 'folio-audit-trail/1', pad: 'x'.repeat(6 * 1024 * 1024) });
    expect(verify(withAuditJson(big)).auditTrail).toBeUndefined();
  });
});

describe('many objects whose xref offsets are wrong', () => {
  it('10,000 objects found by the fallback lookup, once each', async () => {
    const count = 10_000;
    const objs = [
      '<< /Type /Catalog /Pages 2 0 R /All 4 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>',
    ];
    objs.push(`[${Array.from({ length: count }, (_, i) => `${i + 5} 0 R`).join(' ')}]`);
    for (let i = 0; i < count; i++) objs.push(`<< /I ${i} >>`);
    let text = '%PDF-1.7\n';
    const offsets: number[] = [];
    objs.forEach((o, i) => {
      offsets.push(text.length);
      text += `${i + 1} 0 obj\n${o}\nendobj\n`;
    });
    // Every entry points 3 bytes early: no object there, so each is found by the bodies' index instead.
    let xref = `xref\n0 ${objs.length + 1}\n0000000000 65535 f \n`;
    for (const at of offsets) xref += `${String(Math.max(1, at - 3)).padStart(10, '0')} 00000 n \n`;
    const bytes = new Uint8Array(
      Buffer.from(`${text}${xref}trailer\n<< /Size ${objs.length + 1} /Root 1 0 R >>\nstartxref\n${text.length}\n%%EOF\n`, 'latin1'),
    );
    expect(verify(bytes).indication).toBe('NO_SIGNATURE_FOUND');
    const out = await sign(bytes);
    expect(out.repaired).toBe(true);
    expect(verify(out.pdf).signatures[0]!.integrity).toEqual({ digestMatches: true, signatureValid: true });
  }, 30_000);
});
