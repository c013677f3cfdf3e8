/**
 * Hostile PDF structure against both PDF engines: signDocument (src/sign) and verifyPdf (src/verify). Every
 * input is generated here, small on disk however much work it asks for: absurd cross-reference /W and
 * /Index, cyclic /Prev, object-stream loops, deep arrays, an object stream inflating to 1.5 GB, noise after
 * %PDF, a lying /Size, page trees that loop or fan out. Each ends in a clear FolioError naming what was too
 * large or unreadable, or in a correct result; vitest's per-test timeout is the time bound.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/modules/config.js';
import { FolioError } from '../../src/errors.js';
import type { SigningIdentity } from '../../src/services.js';
import { loadSigningIdentity } from '../../src/sign/index.js';
import { signMinimal } from './helpers.js';
import { loadTrustStore, verifyPdf, type TrustStore } from '../../src/verify/index.js';

let tmp: string;
let identity: SigningIdentity;
let trust: TrustStore;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-sign-bounds-'));
  identity = await loadSigningIdentity(loadConfig({ DATA_DIR: tmp }), pino({ level: 'silent' }));
  trust = loadTrustStore({ rootCertificatePem: identity.rootCertificatePem, certificatePem: identity.certificatePem });
}, 60_000);
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const sign = (document: Uint8Array) => signMinimal(identity, document);
const verify = (bytes: Uint8Array) => verifyPdf(bytes, { trust });

async function expectSignRefused(bytes: Uint8Array, code: string, message: RegExp): Promise<void> {
  const err = await sign(bytes).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(FolioError);
  expect(err).toMatchObject({ code, status: code === 'UNPROCESSABLE_DOCUMENT' ? 422 : 400 });
  expect((err as Error).message).toMatch(message);
}

function expectVerifyRefused(bytes: Uint8Array, code: string, message: RegExp): void {
  let err: unknown;
  try {
    verify(bytes);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(FolioError);
  expect(err).toMatchObject({ code });
  expect((err as Error).message).toMatch(message);
}

/** Signs, then checks the output keeps the input's bytes and carries one intact signature over them. */
async function expectSignedIntact(bytes: Uint8Array): Promise<void> {
  const res = await sign(bytes);
  const base = res.repaired ? undefined : bytes;
  if (base) expect(Buffer.from(res.pdf.subarray(0, base.length)).equals(Buffer.from(base))).toBe(true);
  const report = verify(res.pdf);
  expect(report.signatureCount).toBe(1);
  expect(report.signatures[0]!.integrity).toEqual({ digestMatches: true, signatureValid: true });
}

// ---------------------------------------------------------------------------------------------------------
// Generators.

const BASE = [
  '<< /Type /Catalog /Pages 2 0 R >>',
  '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
  '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>',
];

/** A PDF of the given bodies (object 1 first); a classic xref table unless `tail` writes its own ending. */
function pdfOf(objs: Array<string | Buffer>, opts: { tail?: (offsets: number[], pos: number) => Buffer; trailer?: string } = {}): Uint8Array {
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let pos = parts[0]!.length;
  const offsets = [0];
  objs.forEach((o, i) => {
    offsets.push(pos);
    const b = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), typeof o === 'string' ? Buffer.from(o, 'latin1') : o, Buffer.from('\nendobj\n')]);
    parts.push(b);
    pos += b.length;
  });
  if (opts.tail) parts.push(opts.tail(offsets, pos));
  else {
    let x = `xref\n0 ${objs.length + 1}\n0000000000 65535 f \n`;
    for (let i = 1; i <= objs.length; i++) x += `${String(offsets[i]).padStart(10, '0')} 00000 n \n`;
    x += `trailer\n<< ${opts.trailer ?? `/Size ${objs.length + 1} /Root 1 0 R`} >>\nstartxref\n${pos}\n%%EOF\n`;
    parts.push(Buffer.from(x, 'latin1'));
  }
  return new Uint8Array(Buffer.concat(parts));
}

/** An xref stream (object `num`, at the end) with the given dictionary entries and raw rows. */
function xrefStreamTail(num: number, dict: string, rows: Buffer) {
  return (_o: number[], pos: number) =>
    Buffer.concat([
      Buffer.from(`${num} 0 obj\n<< /Type /XRef /Root 1 0 R ${dict.replace('$POS', String(pos))} /Length ${rows.length} >>\nstream\n`, 'latin1'),
      rows,
      Buffer.from(`\nendstream\nendobj\nstartxref\n${pos}\n%%EOF\n`, 'latin1'),
    ]);
}

/** zlib data inflating to `total` zero bytes: one self-contained full-flush deflate chunk, repeated. */
function zeroBomb(total: number): Buffer {
  const chunkSize = 16 * 1024 * 1024;
  const chunk = zlib.deflateRawSync(Buffer.alloc(chunkSize), { level: 9, finishFlush: zlib.constants.Z_FULL_FLUSH });
  const n = Math.ceil(total / chunkSize);
  const adler = Buffer.alloc(4);
  adler.writeUInt32BE((((n * chunkSize) % 65521) * 65536 + 1) >>> 0);
  return Buffer.concat([Buffer.from([0x78, 0xda]), ...Array<Buffer>(n).fill(chunk), Buffer.from([0x03, 0x00]), adler]);
}

/** `%PDF-1.7` and `bytes` of deterministic noise (xorshift). */
function noise(bytes: number): Uint8Array {
  const out = Buffer.alloc(bytes + 9);
  out.write('%PDF-1.7\n', 'latin1');
  let x = 0x12345678;
  for (let i = 9; i < out.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return new Uint8Array(out);
}

// ---------------------------------------------------------------------------------------------------------

describe('cross-reference data', () => {
  it('an xref stream with /W [0 4000000 0] and /Index [0 1000000000] over 16 bytes (the 603-byte freeze)', async () => {
    const bytes = pdfOf([...BASE], { tail: xrefStreamTail(4, '/Size 1000000000 /W [0 4000000 0] /Index [0 1000000000]', Buffer.alloc(16, 1)) });
    expect(bytes.length).toBeLessThan(700);
    expect(verify(bytes).indication).toBe('NO_SIGNATURE_FOUND');
    // The section is unusable: the signer repairs the file (a rewrite) and signs it.
    await expectSignedIntact(bytes);
  });

  it('an xref stream whose /W are legal but whose /Index claims millions of rows it does not hold', async () => {
    const bytes = pdfOf([...BASE], { tail: xrefStreamTail(4, '/Size 3000000 /W [1 4 1] /Index [0 3000000]', Buffer.alloc(60, 1)) });
    expect(verify(bytes).indication).toBe('NO_SIGNATURE_FOUND');
    await expectSignedIntact(bytes);
  });

  it('an xref stream whose rows do hold more entries than the reader reads is a 422 naming them', async () => {
    // 1.2 million one-byte rows of zeros: a few kilobytes deflated.
    const rows = zlib.deflateSync(Buffer.alloc(1_200_000));
    const bytes = pdfOf([...BASE], { tail: xrefStreamTail(4, '/Size 1200000 /W [0 1 0] /Filter /FlateDecode', rows) });
    expectVerifyRefused(bytes, 'UNPROCESSABLE_DOCUMENT', /cross-reference entries/);
    await expectSignRefused(bytes, 'UNPROCESSABLE_DOCUMENT', /cross-reference entries/);
  });

  it('classic xref sections whose /Prev point at each other', async () => {
    const bytes = pdfOf([...BASE], {
      tail: (o, pos) => {
        const table = (prev: number) =>
          `xref\n0 4\n0000000000 65535 f \n${[1, 2, 3].map((i) => `${String(o[i]).padStart(10, '0')} 00000 n \n`).join('')}trailer\n<< /Size 4 /Root 1 0 R /Prev ${prev} >>\n`;
        const second = pos + table(0).length;
        return Buffer.from(`${table(second)}${table(pos)}startxref\n${second}\n%%EOF\n`, 'latin1');
      },
    });
    expect(verify(bytes).indication).toBe('NO_SIGNATURE_FOUND');
    await expectSignedIntact(bytes);
  });

  it('an xref stream whose /Prev is itself', async () => {
    const bytes = pdfOf([...BASE], {
      tail: (o, pos) => {
        const rows = Buffer.alloc(25);
        [0, o[1]!, o[2]!, o[3]!, pos].forEach((off, i) => {
          rows[i * 5] = i === 0 ? 0 : 1;
          rows.writeUInt32BE(off, i * 5 + 1);
        });
        return xrefStreamTail(4, '/Size 5 /Prev $POS /W [1 4 0]', rows)(o, pos);
      },
    });
    expect(verify(bytes).indication).toBe('NO_SIGNATURE_FOUND');
    await expectSignedIntact(bytes);
  });

  it('a trailer /Size beyond the PDF object-number limit', async () => {
    const bytes = pdfOf([...BASE], { trailer: '/Size 2000000000 /Root 1 0 R' });
    expect(verify(bytes).indication).toBe('NO_SIGNATURE_FOUND');
    await expectSignRefused(bytes, 'UNPROCESSABLE_DOCUMENT', /\/Size 2000000000/);
  });

  it('a million bare %%EOF markers', async () => {
    const bytes = new Uint8Array(Buffer.from(`%PDF-1.7\n${'%%EOF\n'.repeat(1_000_000)}`, 'latin1'));
    expectVerifyRefused(bytes, 'UNPROCESSABLE_DOCUMENT', /catalog/);
    await expectSignRefused(bytes, 'UNPROCESSABLE_DOCUMENT', /catalog/);
  });

  it('more revisions than the reader reads is a 422 naming them', async () => {
    let text = Buffer.from(pdfOf([...BASE])).toString('latin1');
    const xrefAt = Number(/startxref\n(\d+)/.exec(text)![1]);
    text += `startxref\n${xrefAt}\n%%EOF\n`.repeat(1_100);
    const bytes = new Uint8Array(Buffer.from(text, 'latin1'));
    expectVerifyRefused(bytes, 'UNPROCESSABLE_DOCUMENT', /more than 1000 revisions/);
    await expectSignRefused(bytes, 'UNPROCESSABLE_DOCUMENT', /more than 1000 revisions/);
  });
});

describe('object streams', () => {
  /** Stream 4's /Length lives inside itself, stream 5 lists itself, stream 6 claims /N 10^9. */
  function loops(): Uint8Array {
    const inner = '7 0 99 ';
    const objs = [
      '<< /Type /Catalog /Pages 2 0 R /A 7 0 R /B 8 0 R /C 9 0 R >>',
      BASE[1]!,
      BASE[2]!,
      `<< /Type /ObjStm /N 2 /First ${inner.length} /Length 7 0 R >>\nstream\n${inner}<< /Foo 1 >> 99\nendstream`,
      '<< /Type /ObjStm /N 1 /First 4 /Length 9 >>\nstream\n8 0 5 0\nendstream',
      '<< /Type /ObjStm /N 1000000000 /First 4 /Length 4 >>\nstream\n9 0 \nendstream',
    ];
    return pdfOf(objs, {
      tail: (o, pos) => {
        const rows: Array<[number, number, number]> = [
          [0, 0, 0],
          [1, o[1]!, 0],
          [1, o[2]!, 0],
          [1, o[3]!, 0],
          [1, o[4]!, 0],
          [2, 5, 0],
          [2, 6, 0],
          [2, 4, 0],
          [2, 5, 0],
          [2, 6, 0],
          [1, pos, 0],
        ];
        const data = Buffer.alloc(rows.length * 6);
        rows.forEach(([t, a, b], i) => {
          data[i * 6] = t;
          data.writeUInt32BE(a, i * 6 + 1);
          data[i * 6 + 5] = b;
        });
        return xrefStreamTail(10, '/Size 11 /W [1 4 1]', data)(o, pos);
      },
    });
  }

  it('object streams that loop through /Length, contain themselves or claim a billion objects', async () => {
    const bytes = loops();
    expect(verify(bytes).indication).toBe('NO_SIGNATURE_FOUND');
    await expectSignedIntact(bytes);
  });

  it('an object stream of 1.5 MB that inflates to 1.5 GB is read no further than the cap', async () => {
    const z = zeroBomb(1536 * 1024 * 1024);
    expect(z.length).toBeLessThan(2 * 1024 * 1024);
    const bomb = Buffer.concat([
      Buffer.from(`<< /Type /ObjStm /N 1 /First 4 /Filter /FlateDecode /Length ${z.length} >>\nstream\n`),
      z,
      Buffer.from('\nendstream'),
    ]);
    const bytes = pdfOf([...BASE, bomb]);
    expect(verify(bytes).indication).toBe('NO_SIGNATURE_FOUND');
    // Nothing refers to the stream: the signer signs without inflating it beyond the cap.
    await expectSignedIntact(bytes);
  });

  it('the catalog inside an object stream that inflates beyond the cap: no catalog, 422', async () => {
    const body = Buffer.concat([Buffer.from('1 0 '), Buffer.from(BASE[0]!), Buffer.alloc(40 * 1024 * 1024, 0x20)]);
    const z = zlib.deflateSync(body);
    const stm = Buffer.concat([
      Buffer.from(`<< /Type /ObjStm /N 1 /First 4 /Filter /FlateDecode /Length ${z.length} >>\nstream\n`),
      z,
      Buffer.from('\nendstream'),
    ]);
    const bytes = pdfOf(['<< /Type /Foo >>', BASE[1]!, BASE[2]!, stm], {
      tail: (o, pos) => {
        const rows = Buffer.alloc(6 * 6);
        [
          [0, 0, 0],
          [2, 4, 0],
          [1, o[2]!, 0],
          [1, o[3]!, 0],
          [1, o[4]!, 0],
          [1, pos, 0],
        ].forEach(([t, a, b], i) => {
          rows[i * 6] = t!;
          rows.writeUInt32BE(a!, i * 6 + 1);
          rows[i * 6 + 5] = b!;
        });
        return xrefStreamTail(5, '/Size 6 /W [1 4 1]', rows)(o, pos);
      },
    });
    expectVerifyRefused(bytes, 'UNPROCESSABLE_DOCUMENT', /catalog/);
    await expectSignRefused(bytes, 'UNPROCESSABLE_DOCUMENT', /catalog/);
  });
});

describe('nesting and trees', () => {
  it('an object of 100,000 nested arrays referenced from the catalog', async () => {
    const bytes = pdfOf(['<< /Type /Catalog /Pages 2 0 R /Deep 4 0 R >>', BASE[1]!, BASE[2]!, `${'['.repeat(100_000)}${']'.repeat(100_000)}`]);
    expect(verify(bytes).indication).toBe('NO_SIGNATURE_FOUND');
    await expectSignedIntact(bytes);
  });

  it('nested arrays inside the catalog itself: no readable catalog, 422', async () => {
    const bytes = pdfOf([`<< /Type /Catalog /Pages 2 0 R /Deep ${'['.repeat(100_000)}${']'.repeat(100_000)} >>`, BASE[1]!, BASE[2]!]);
    expectVerifyRefused(bytes, 'UNPROCESSABLE_DOCUMENT', /catalog/);
    await expectSignRefused(bytes, 'UNPROCESSABLE_DOCUMENT', /catalog/);
  });

  it('a page tree whose node lists itself', async () => {
    const bytes = pdfOf([BASE[0]!, '<< /Type /Pages /Kids [3 0 R 2 0 R] /Count 2 >>', BASE[2]!]);
    expect(verify(bytes).indication).toBe('NO_SIGNATURE_FOUND');
    await expectSignRefused(bytes, 'UNPROCESSABLE_DOCUMENT', /page tree contains a cycle/);
  });

  it('a page tree that fans out to 10^12 visits through shared nodes', async () => {
    // Node k lists node k+1 a thousand times; four levels make 10^12 leaves for a walker that follows Kids.
    const kids = (n: number) => Array(1000).fill(`${n} 0 R`).join(' ');
    const bytes = pdfOf([
      BASE[0]!,
      `<< /Type /Pages /Kids [${kids(4)}] /Count 1 >>`,
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>',
      `<< /Type /Pages /Kids [${kids(5)}] >>`,
      `<< /Type /Pages /Kids [${kids(6)}] >>`,
      `<< /Type /Pages /Kids [${kids(7)}] >>`,
      '<< /Type /Pages /Kids [3 0 R] >>',
    ]);
    expect(verify(bytes).indication).toBe('NO_SIGNATURE_FOUND');
    await expectSignRefused(bytes, 'UNPROCESSABLE_DOCUMENT', /page tree has more than 200000 nodes/);
  });
});

describe('not a PDF after its header', () => {
  it('%PDF followed by 20 MB of noise is a 422 without crawling the bytes', async () => {
    const bytes = noise(20 * 1024 * 1024);
    expectVerifyRefused(bytes, 'UNPROCESSABLE_DOCUMENT', /catalog/);
    await expectSignRefused(bytes, 'UNPROCESSABLE_DOCUMENT', /catalog/);
  });

  it('no %PDF header at all stays a 400 INVALID_FILE_FORMAT', async () => {
    const bytes = noise(4096).subarray(9);
    expectVerifyRefused(bytes, 'INVALID_FILE_FORMAT', /not a PDF/);
    await expectSignRefused(bytes, 'INVALID_FILE_FORMAT', /neither a PDF nor a DOCX/);
  });
});
