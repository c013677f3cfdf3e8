/**
 * Hostile and broken input for the verifier engine: every case ends in a clear answer (a 200-style result
 * or a FolioError with the contract's code), never a crash or a hang. Timing is measured in bench/verify.ts,
 * not asserted here.
 */
import { execFileSync } from 'node:child_process';
import zlib from 'node:zlib';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyPdf } from '../../src/verify/index.js';
import { FolioError } from '../../src/errors.js';
import { appendUpdate, makePdf, makePki, signPdf, type TestPki } from './fixtures.js';

let pki: TestPki;
let signed: Uint8Array;
let trust: { anchors: X509Certificate[]; service: X509Certificate[] };

beforeAll(async () => {
  pki = makePki();
  trust = { anchors: [new X509Certificate(pki.caPem)], service: [] };
  signed = signPdf(await makePdf(1), { signer: pki.rsa });
}, 60_000);
afterAll(() => pki?.cleanup());

const verify = (b: Uint8Array | string) => verifyPdf(typeof b === 'string' ? new Uint8Array(Buffer.from(b, 'latin1')) : b, { trust });

function expectFolioError(f: () => unknown, code: string, status: number) {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(FolioError);
    expect((e as FolioError).code).toBe(code);
    expect((e as FolioError).status).toBe(status);
    return;
  }
  throw new Error(`expected ${code}`);
}

/** A minimal classic PDF: catalog 1, pages 2, plus extra objects, with a correct xref table. */
function tinyPdf(extra: string[] = [], trailerExtra = ''): string {
  const objs = ['<</Type /Catalog /Pages 2 0 R>>', '<</Type /Pages /Kids [] /Count 0>>', ...extra];
  let out = '%PDF-1.7\n';
  const offsets: number[] = [];
  objs.forEach((o, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xrefAt = out.length;
  out += `xref\n0 ${objs.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<</Size ${objs.length + 1} /Root 1 0 R${trailerExtra}>>\nstartxref\n${xrefAt}\n%%EOF\n`;
  return out;
}

describe('input that is not a usable PDF', () => {
  it('not a PDF → 400 INVALID_FILE_FORMAT', () => {
    expectFolioError(() => verify('PK\x03\x04 this is a zip, not a pdf'), 'INVALID_FILE_FORMAT', 400);
    expectFolioError(() => verify(''), 'INVALID_FILE_FORMAT', 400);
  });

  it('an encrypted PDF → 422 UNPROCESSABLE_DOCUMENT', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-verify-enc-'));
    try {
      fs.writeFileSync(path.join(dir, 'in.pdf'), await makePdf(1));
      execFileSync('qpdf', ['--encrypt', 'user', 'owner', '256', '--', path.join(dir, 'in.pdf'), path.join(dir, 'out.pdf')]);
      const enc = new Uint8Array(fs.readFileSync(path.join(dir, 'out.pdf')));
      expectFolioError(() => verify(enc), 'UNPROCESSABLE_DOCUMENT', 422);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a header and nothing readable → 422', () => {
    expectFolioError(() => verify('%PDF-1.7\n%garbage only\n'), 'UNPROCESSABLE_DOCUMENT', 422);
  });
});

describe('broken structure still gets an answer', () => {
  it('a truncated signed PDF: the signature is not reported valid', () => {
    for (const keep of [0.95, 0.6]) {
      const cut = signed.subarray(0, Math.floor(signed.length * keep));
      try {
        const r = verify(cut);
        expect(r.valid).toBe(false);
      } catch (e) {
        expect((e as FolioError).code).toBe('UNPROCESSABLE_DOCUMENT');
      }
    }
  });

  it('xref /Prev loops (self and mutual) terminate', () => {
    const base = tinyPdf();
    const selfLoop = base.replace('/Root 1 0 R>>', `/Root 1 0 R /Prev ${base.indexOf('xref')}>>`);
    expect(verify(selfLoop).indication).toBe('NO_SIGNATURE_FOUND');
    const upd = Buffer.from(appendUpdate(new Uint8Array(Buffer.from(base, 'latin1')), [{ num: 3, body: '<<>>' }])).toString('latin1');
    const secondXref = upd.lastIndexOf('xref\n');
    const mutual = upd
      .replace(/\/Root 1 0 R>>\nstartxref\n(\d+)\n%%EOF\n$/, '/Root 1 0 R>>\nstartxref\n$1\n%%EOF\n')
      .replace('/Size 3 /Root 1 0 R>>', `/Size 3 /Root 1 0 R /Prev ${secondXref}>>`);
    expect(verify(mutual).signatureCount).toBe(0);
  });

  it('a 1,000,000-entry xref table is read within bounds', () => {
    const head = '%PDF-1.7\n1 0 obj\n<</Type /Catalog /Pages 2 0 R>>\nendobj\n2 0 obj\n<</Type /Pages /Kids [] /Count 0>>\nendobj\n';
    const lines = ['0000000000 65535 f \n', '0000000009 00000 n \n', `${String(head.indexOf('2 0 obj')).padStart(10, '0')} 00000 n \n`];
    const free = '0000000000 00000 f \n'.repeat(1_000_000 - 3);
    const pdf = `${head}xref\n0 1000000\n${lines.join('')}${free}trailer\n<</Size 1000000 /Root 1 0 R>>\nstartxref\n${head.length}\n%%EOF\n`;
    const r = verify(pdf);
    expect(r.indication).toBe('NO_SIGNATURE_FOUND');
  });

  it('an xref subsection that claims 1,000,000 entries but holds none is repaired by scanning', () => {
    const pdf = tinyPdf()
      .replace(/xref\n0 3\n/, 'xref\n0 1000000\n')
      .replace(/0000000000 65535 f \n[\s\S]*trailer/, 'trailer');
    expect(verify(pdf).indication).toBe('NO_SIGNATURE_FOUND');
  });

  it('object streams nested in each other and deep arrays are refused, not followed', () => {
    // Objects 3..202 each claim to live in the object stream that is the next number, itself compressed.
    const head = '%PDF-1.7\n1 0 obj\n<</Type /Catalog /Pages 2 0 R /Deep 3 0 R>>\nendobj\n2 0 obj\n<</Type /Pages /Kids [] /Count 0>>\nendobj\n';
    const rows: Buffer[] = [];
    const row = (t: number, a: number, b: number) =>
      Buffer.from([t, (a >> 24) & 255, (a >> 16) & 255, (a >> 8) & 255, a & 255, (b >> 8) & 255, b & 255]);
    rows.push(row(0, 0, 65535), row(1, 9, 0), row(1, head.indexOf('2 0 obj'), 0));
    for (let n = 3; n < 203; n++) rows.push(row(2, n + 1, 0));
    const data = Buffer.concat(rows);
    const xrefAt = head.length;
    const xref = `203 0 obj\n<</Type /XRef /Size 204 /W [1 4 2] /Index [0 203] /Root 1 0 R /Length ${data.length}>>\nstream\n`;
    const pdf = Buffer.concat([
      Buffer.from(head + xref, 'latin1'),
      data,
      Buffer.from(`\nendstream\nendobj\nstartxref\n${xrefAt}\n%%EOF\n`, 'latin1'),
    ]);
    const r = verify(new Uint8Array(pdf));
    expect(r.indication).toBe('NO_SIGNATURE_FOUND');
    // Arrays nested 5000 deep make the object unreadable (bounded recursion): here the catalog, so 422.
    const deep = tinyPdf().replace('/Pages 2 0 R>>', `/Pages 2 0 R /Nest ${'['.repeat(5000)}${']'.repeat(5000)}>>`);
    expectFolioError(() => verify(deep), 'UNPROCESSABLE_DOCUMENT', 422);
    const deepElsewhere = tinyPdf([`<</Nest ${'['.repeat(5000)}${']'.repeat(5000)}>>`]);
    expect(verify(deepElsewhere).indication).toBe('NO_SIGNATURE_FOUND');
  });

  it('a 10 MB /Contents is refused as too large, with a clear problem', () => {
    const hex = 'ab'.repeat(5 * 1024 * 1024);
    const placeholder = '[0 0000000000 0000000000 0000000000]';
    const body = `<</Type /Sig /Filter /Adobe.PPKLite /SubFilter /adbe.pkcs7.detached /ByteRange ${placeholder} /Contents <${hex}>>>`;
    const pdf = Buffer.from(
      appendUpdate(new Uint8Array(Buffer.from(tinyPdf(), 'latin1')), [
        { num: 3, body },
        { num: 4, body: '<</FT /Sig /T (Big) /V 3 0 R /Rect [0 0 0 0] /Subtype /Widget>>' },
        { num: 1, body: '<</Type /Catalog /Pages 2 0 R /AcroForm <</Fields [4 0 R]>>>>' },
      ]),
    );
    // Point the ByteRange at the real gap, so the only thing wrong is the size.
    const text = pdf.toString('latin1');
    const start = text.indexOf('/Contents <') + 10;
    const end = text.indexOf('>', start) + 1;
    const pad = (n: number) => String(n).padStart(10, '0');
    pdf.write(`[0 ${pad(start)} ${pad(end)} ${pad(pdf.length - end)}]`, text.indexOf(placeholder), 'latin1');
    const r = verify(new Uint8Array(pdf));
    expect(r.signatureCount).toBe(1);
    expect(r.valid).toBe(false);
    expect(r.signatures[0]!.problems.join()).toMatch(/CONTENTS_TOO_LARGE/);
  });

  it('a field tree that loops and a /Kids cycle in the page tree terminate', () => {
    const pdf = tinyPdf(['<</FT /Sig /T (A) /Kids [4 0 R]>>', '<</T (B) /Kids [3 0 R]>>'])
      .replace('<</Type /Catalog /Pages 2 0 R>>', '<</Type /Catalog /Pages 2 0 R /AcroForm <</Fields [3 0 R]>>>>')
      .replace('/Kids [] /Count 0', '/Kids [2 0 R] /Count 1');
    expect(verify(pdf).signatureCount).toBe(0);
  });

  it('a compression bomb in an object stream is capped', () => {
    const bomb = zlib.deflateSync(Buffer.alloc(100 * 1024 * 1024, 0x20));
    const head = '%PDF-1.7\n1 0 obj\n<</Type /Catalog /Pages 2 0 R /X 5 0 R>>\nendobj\n2 0 obj\n<</Type /Pages /Kids [] /Count 0>>\nendobj\n';
    const stmAt = head.length;
    const stm = Buffer.concat([
      Buffer.from(`3 0 obj\n<</Type /ObjStm /N 1 /First 4 /Filter /FlateDecode /Length ${bomb.length}>>\nstream\n`, 'latin1'),
      bomb,
      Buffer.from('\nendstream\nendobj\n'),
    ]);
    const xrefAt = head.length + stm.length;
    const row = (t: number, a: number, b: number) =>
      Buffer.from([t, (a >> 24) & 255, (a >> 16) & 255, (a >> 8) & 255, a & 255, (b >> 8) & 255, b & 255]);
    const data = Buffer.concat([
      row(0, 0, 65535),
      row(1, 9, 0),
      row(1, head.indexOf('2 0 obj'), 0),
      row(1, stmAt, 0),
      row(1, xrefAt, 0),
      row(2, 3, 0),
    ]);
    const xref = Buffer.concat([
      Buffer.from(`4 0 obj\n<</Type /XRef /Size 6 /W [1 4 2] /Root 1 0 R /Length ${data.length}>>\nstream\n`, 'latin1'),
      data,
      Buffer.from(`\nendstream\nendobj\nstartxref\n${xrefAt}\n%%EOF\n`),
    ]);
    const pdf = new Uint8Array(Buffer.concat([Buffer.from(head, 'latin1'), stm, xref]));
    try {
      expect(verify(pdf).signatureCount).toBe(0);
    } catch (e) {
      expect((e as FolioError).code).toBe('UNPROCESSABLE_DOCUMENT');
    }
  });
});
