/**
 * src/crypto/der.ts, the one DER reader and writer: exact round trips (reader → writer) on real structures (a
 * certificate, the CMS Folio makes, a pyHanko CMS; Acrobat's BER CMS reads and re-encodes to DER), and fuzzing:
 * random and mutated bytes and the classic hostile encodings (truncated and oversized lengths, indefinite
 * lengths, 5 length octets, 10,000-deep nests, a million elements) give a value or a DerError, in bounded time,
 * and never another exception.
 */
import { execFileSync } from 'node:child_process';
import crypto, { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as asn1js from 'asn1js';
import { describe, expect, it } from 'vitest';
import { parseOid } from '../../src/crypto/asn1.js';
import { splitSignedData } from '../../src/crypto/cms-slices.js';
import {
  DER_LIMITS,
  DerError,
  TAG,
  certificateFields,
  contentBytes,
  decodeOid,
  encodeElement,
  encodeLength,
  octetStringContents,
  oidContent,
  readChildren,
  readElement,
  readInner,
  readSingle,
  retag,
  spkiKeyBits,
  tryDer,
  type Tlv,
} from '../../src/crypto/der.js';
import { buildSignedData, signDigest } from '../../src/sign/cms.js';
import { identityFromParts } from '../../src/sign/identity.js';

const fixture = (name: string) => new Uint8Array(fs.readFileSync(path.join(import.meta.dirname, 'fixtures', name)));
const PYHANKO = fixture('pyhanko.p7s');
const ACROBAT = fixture('acrobat.p7s');
const hex = (u: Uint8Array) => Buffer.from(u).toString('hex');
const bytes = (h: string) => new Uint8Array(Buffer.from(h.replace(/\s+/g, ''), 'hex'));

/** A decoded element: constructed ones with their children, primitive ones with their content octets. */
interface Node {
  tag: number;
  content?: Uint8Array;
  children?: Node[];
}

/** The whole tree under `t`, read with the reader only (64 levels at most: deeper is left as content). */
function readTree(buf: Uint8Array, t: Tlv, depth = 0): Node {
  if (t.tag & 0x20 && depth < 64) return { tag: t.tag, children: readChildren(buf, t).map((c) => readTree(buf, c, depth + 1)) };
  return { tag: t.tag, content: contentBytes(buf, t) };
}

/** The tree written back with the writer (definite lengths, minimal: DER). */
const writeTree = (n: Node): Uint8Array => (n.children ? encodeElement(n.tag, ...n.children.map(writeTree)) : encodeElement(n.tag, n.content!));

const roundTrip = (der: Uint8Array) => writeTree(readTree(der, readSingle(der)));

async function folioCms(): Promise<{ cms: Uint8Array; certDer: Uint8Array }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-der-'));
  try {
    const key = path.join(dir, 'key.pem');
    const cert = path.join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-subj',
        '/CN=DER test signer',
        '-days',
        '2',
      ],
      {
        stdio: 'ignore',
      },
    );
    const certDer = new Uint8Array(new X509Certificate(fs.readFileSync(cert)).raw);
    const identity = identityFromParts(crypto.createPrivateKey(fs.readFileSync(key)), [certDer]);
    const digest = crypto.createHash('sha256').update('document').digest();
    return { cms: buildSignedData(identity, await signDigest(identity, digest)), certDer };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('reader and writer on real structures', () => {
  it('reads what asn1js writes, long lengths included', () => {
    const big = Buffer.alloc(300, 7);
    const seq = new asn1js.Sequence({
      value: [new asn1js.ObjectIdentifier({ value: '1.2.840.113549.1.7.2' }), new asn1js.OctetString({ valueHex: big })],
    });
    const der = new Uint8Array(seq.toBER(false));
    const outer = readSingle(der, TAG.SEQUENCE);
    const [oid, octets] = readChildren(der, outer);
    expect(oid!.tag).toBe(TAG.OID);
    expect(decodeOid(contentBytes(der, oid!))).toBe('1.2.840.113549.1.7.2');
    expect(octets!.tag).toBe(TAG.OCTET_STRING);
    expect(Buffer.from(contentBytes(der, octets!)).equals(big)).toBe(true);
    expect(hex(roundTrip(der))).toBe(hex(der));
  });

  it("pyHanko's CMS (DER) comes back byte for byte, and so does each certificate it carries", () => {
    expect(hex(roundTrip(PYHANKO))).toBe(hex(PYHANKO));
    const split = splitSignedData(PYHANKO)!;
    expect(split.certs.length).toBeGreaterThanOrEqual(2);
    for (const der of split.certs) {
      expect(hex(roundTrip(der))).toBe(hex(der));
      const cert = new X509Certificate(der);
      const fields = certificateFields(der)!;
      expect(hex(fields.serial).replace(/^00/, '').toUpperCase()).toBe(cert.serialNumber.replace(/^00/, ''));
      // The issuer slice is the issuer Name as encoded: it equals the issuer's subject Name, byte for byte.
      const issuer = split.certs.map((d) => new X509Certificate(d)).find((c) => cert.checkIssued(c));
      if (issuer) expect(hex(fields.issuer)).toBe(hex(subjectOf(new Uint8Array(issuer.raw))));
      expect(spkiKeyBits(new Uint8Array(cert.publicKey.export({ type: 'spki', format: 'der' })))).toBeDefined();
    }
    expect(hex(roundTrip(split.signerInfos))).toBe(hex(split.signerInfos));
  });

  it('the CMS SignedData Folio makes comes back byte for byte, its certificate and signer info slices included', async () => {
    const { cms, certDer } = await folioCms();
    expect(hex(roundTrip(cms))).toBe(hex(cms));
    const split = splitSignedData(cms)!;
    expect(split.certs.map(hex)).toEqual([hex(certDer)]);
    expect(hex(roundTrip(certDer))).toBe(hex(certDer));
    expect(hex(certificateFields(certDer)!.issuer)).toBe(hex(subjectOf(certDer)));
    // The signed attributes are signed as a SET: re-tagging [0] gives back what signDigest signed.
    const signerInfo = readChildren(split.signerInfos, readSingle(split.signerInfos, TAG.SET))[0]!;
    const attrs = readChildren(split.signerInfos, signerInfo).find((f) => f.tag === 0xa0)!;
    const asSet = retag(split.signerInfos.subarray(attrs.at, attrs.end), TAG.SET);
    expect(asSet[0]).toBe(TAG.SET);
    expect(hex(asSet.subarray(1))).toBe(hex(split.signerInfos.subarray(attrs.at + 1, attrs.end)));
  });

  it("Acrobat's BER CMS (indefinite lengths on the outer layers) reads whole, and re-encodes to DER that reads to the same tree", () => {
    const outer = readSingle(ACROBAT);
    expect(ACROBAT[1]).toBe(0x80); // indefinite, as Acrobat writes it
    const tree = readTree(ACROBAT, outer);
    const der = writeTree(tree);
    expect(der.length).toBeLessThan(ACROBAT.length);
    expect(readTree(der, readSingle(der))).toEqual(tree);
    expect(hex(roundTrip(der))).toBe(hex(der));
    const split = splitSignedData(ACROBAT)!;
    expect(split.certs.length).toBeGreaterThan(0);
    for (const c of split.certs) expect(() => new X509Certificate(c)).not.toThrow();
    expect(splitSignedData(der)!.certs.map(hex)).toEqual(split.certs.map(hex));
  });

  it('writes minimal lengths at every boundary and reads them back', () => {
    for (const n of [0, 1, 127, 128, 255, 256, 65_535, 65_536]) {
      const el = encodeElement(TAG.OCTET_STRING, new Uint8Array(n).fill(n % 251));
      const t = readSingle(el, TAG.OCTET_STRING);
      expect(t.contentEnd - t.start).toBe(n);
      expect(t.start).toBe(n < 0x80 ? 2 : n < 0x100 ? 3 : n < 0x10000 ? 4 : 5);
      expect(hex(roundTrip(el))).toBe(hex(el));
    }
    expect(hex(encodeLength(16_777_216))).toBe('8401000000');
    expect(hex(encodeLength(2 ** 32 - 1))).toBe('84ffffffff');
    expect(() => encodeLength(-1)).toThrow(RangeError);
    expect(() => encodeLength(2 ** 32)).toThrow(RangeError);
    expect(() => encodeElement(0x1f)).toThrow(RangeError);
  });

  it('writes OBJECT IDENTIFIERs as asn1js does and decodes them back', () => {
    for (const oid of [
      '1.2.840.113549.1.7.2',
      '2.5.29.14',
      '1.3.6.1.5.5.7.48.1.1',
      '2.16.840.1.101.3.4.2.1',
      '0.9.2342.19200300.100.1.25',
      '2.999.1',
      '1.3.6.1.4.1.311.2.1.4',
    ]) {
      const ours = encodeElement(TAG.OID, oidContent(oid));
      expect(hex(ours)).toBe(hex(new Uint8Array(new asn1js.ObjectIdentifier({ value: oid }).toBER(false))));
      expect(decodeOid(oidContent(oid))).toBe(oid);
      expect(parseOid(ours)).toBe(oid);
    }
    expect(decodeOid(bytes('2a86'))).toBeUndefined(); // unterminated arc
    expect(decodeOid(new Uint8Array(0))).toBeUndefined();
    expect(decodeOid(bytes('2a ffffffffffffffff7f'))).toBeUndefined(); // arc beyond 2^53
    expect(() => oidContent('1.40')).toThrow(RangeError);
    expect(() => oidContent('x.1')).toThrow(RangeError);
  });

  it('joins a BER-constructed OCTET STRING, pieces nested, and refuses what is not one', () => {
    expect(hex(octetStringContents(bytes('24 80 04 02 0102 24 04 04 02 0304 00 00'))!)).toBe('01020304');
    expect(hex(octetStringContents(bytes('24 00'))!)).toBe('');
    expect(octetStringContents(bytes('04 02 01'))).toBeUndefined();
    expect(octetStringContents(bytes('04 01 01 00'))).toBeUndefined(); // bytes after it
    expect(octetStringContents(bytes('30 03 04 01 01'))).toBeUndefined();
    let nested: Uint8Array = bytes('04 01 aa');
    for (let i = 0; i < DER_LIMITS.octetStringDepth; i++) nested = encodeElement(TAG.OCTET_STRING_PIECES, nested);
    expect(hex(octetStringContents(nested)!)).toBe('aa');
    expect(octetStringContents(encodeElement(TAG.OCTET_STRING_PIECES, nested))).toBeUndefined();
  });
});

/** The subject Name element of a certificate (TBSCertificate field 5, after the explicit version). */
function subjectOf(cert: Uint8Array): Uint8Array {
  const f = readChildren(cert, readChildren(cert, readSingle(cert))[0]!);
  const s = f[f[0]!.tag === 0xa0 ? 5 : 4]!;
  return cert.subarray(s.at, s.end);
}

// ---- fuzzing ----

/** Deterministic PRNG (mulberry32), so that a failure is reproducible from its seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Every entry point of src/crypto's DER code on `buf`: the throwing reader must give a value or a DerError,
 * the helpers that answer undefined must not throw at all. Returns what went wrong, if anything.
 */
function exercise(buf: Uint8Array): string[] {
  const wrong: string[] = [];
  const throwing: Array<() => unknown> = [
    () => readTree(buf, readElement(buf)),
    () => readSingle(buf, TAG.SEQUENCE),
    () => readInner(buf, readElement(buf)),
    () => readChildren(buf, readElement(buf), 8),
    () => retag(buf, TAG.SET),
  ];
  for (const f of throwing) {
    try {
      f();
    } catch (e) {
      if (!(e instanceof DerError)) wrong.push(`${(e as Error)?.name}: ${(e as Error)?.message}`);
    }
  }
  try {
    const split = splitSignedData(buf);
    for (const c of split?.certs ?? []) certificateFields(c);
    certificateFields(buf);
    octetStringContents(buf);
    spkiKeyBits(buf);
    parseOid(buf);
    decodeOid(buf);
    tryDer(() => readTree(buf, readSingle(buf)));
  } catch (e) {
    wrong.push(`helper threw ${(e as Error)?.name}: ${(e as Error)?.message}`);
  }
  return wrong;
}

function mutate(src: Uint8Array, rnd: () => number): Uint8Array {
  const b = new Uint8Array(src);
  const at = Math.floor(rnd() * b.length);
  switch (Math.floor(rnd() * 7)) {
    case 0: // a random byte
      b[at] = Math.floor(rnd() * 256);
      return b;
    case 1: // a length octet made indefinite, long-form or reserved
      b[at] = [0x80, 0x81, 0x84, 0x85, 0xff, 0x00][Math.floor(rnd() * 6)]!;
      return b;
    case 2: // truncated
      return b.subarray(0, at);
    case 3: // bytes inserted
      return new Uint8Array([
        ...b.subarray(0, at),
        ...Array.from({ length: 1 + Math.floor(rnd() * 8) }, () => Math.floor(rnd() * 256)),
        ...b.subarray(at),
      ]);
    case 4: // a length pushed past its end
      b[at] = Math.min(0x7f, (b[at] ?? 0) + 1 + Math.floor(rnd() * 16));
      return b;
    case 5: // a slice repeated (nesting, counts)
      return new Uint8Array([...b.subarray(0, at), ...b.subarray(at, at + 64), ...b.subarray(at)]);
    default: // a multi-byte tag
      b[at] = 0x1f | (b[at]! & 0xe0);
      return b;
  }
}

describe('fuzzing: a value or a DerError, in bounded time', () => {
  it('random bytes', () => {
    const rnd = prng(1);
    const wrong: string[] = [];
    const t0 = performance.now();
    for (let i = 0; i < 3000; i++) {
      const buf = Uint8Array.from({ length: Math.floor(rnd() * 96) }, () => Math.floor(rnd() * 256));
      // Half of them start like a constructed element, so the reader goes deeper than the first header.
      if (i % 2 && buf.length > 1) buf[0] = [0x30, 0x31, 0xa0, 0x24][i % 4]!;
      wrong.push(...exercise(buf));
    }
    expect(wrong).toEqual([]);
    expect(performance.now() - t0).toBeLessThan(10_000);
  });

  it.each([
    ['pyhanko.p7s', PYHANKO],
    ['acrobat.p7s (BER)', ACROBAT],
  ])('mutants of %s', (_name, src) => {
    const rnd = prng(src.length);
    const wrong: string[] = [];
    const t0 = performance.now();
    for (let i = 0; i < 400; i++) {
      let m = mutate(src, rnd);
      if (i % 3 === 0) m = mutate(m, rnd);
      wrong.push(...exercise(m).map((w) => `mutant ${i}: ${w}`));
    }
    expect(wrong).toEqual([]);
    expect(performance.now() - t0).toBeLessThan(20_000);
  });

  const refusal = (buf: Uint8Array, read: (b: Uint8Array) => unknown = (b) => readElement(b)) => {
    try {
      read(buf);
    } catch (e) {
      if (e instanceof DerError) return e.reason;
      throw e;
    }
    return 'read';
  };

  it('refuses truncated lengths, lengths past the end, 5 length octets and multi-byte tags with their reason', () => {
    expect(refusal(bytes('30'))).toBe('truncated');
    expect(refusal(bytes('30 82 01'))).toBe('truncated');
    expect(refusal(bytes('30 05 01'))).toBe('truncated');
    expect(refusal(bytes('04 84 ff ff ff ff 00'))).toBe('truncated'); // 4 GiB announced, nothing allocated
    expect(refusal(bytes('30 85 00 00 00 00 01 00'))).toBe('length');
    expect(refusal(bytes('30 ff 00'))).toBe('length');
    expect(refusal(bytes('1f 81 00 00'))).toBe('tag');
    expect(refusal(bytes('30 03 02 01 01 00'), (b) => readSingle(b))).toBe('shape');
    // A child may not run past its parent even when the buffer goes on.
    const parent = readElement(bytes('30 03 04 05 00 00 00 00 00'));
    expect(refusal(bytes('30 03 04 05 00 00 00 00 00'), (b) => readChildren(b, parent))).toBe('truncated');
    // Non-minimal lengths are BER, and read.
    expect(readElement(bytes('04 81 01 aa')).contentEnd).toBe(4);
  });

  it('takes indefinite lengths on constructed elements only, ended by 00 00', () => {
    expect(readElement(bytes('30 80 02 01 05 00 00'))).toMatchObject({ tag: 0x30, start: 2, contentEnd: 5, end: 7 });
    expect(readElement(bytes('30 80 30 80 00 00 00 00')).end).toBe(8);
    expect(refusal(bytes('04 80 01 00 00'))).toBe('length');
    expect(refusal(bytes('30 80 02 01 05'))).toBe('truncated'); // no end-of-contents
    expect(refusal(bytes('30 80 02 05 00 00'))).toBe('truncated');
  });

  it('a 10,000-deep nest: definite lengths read level by level, indefinite ones refused past 16 levels, both at once', () => {
    const depth = 10_000;
    let deep: Uint8Array = new Uint8Array(0);
    for (let i = 0; i < depth; i++) deep = encodeElement(TAG.SEQUENCE, deep);
    let t0 = performance.now();
    let t = readSingle(deep);
    let levels = 1;
    while (t.contentEnd > t.start) {
      t = readInner(deep, t);
      levels++;
    }
    expect(levels).toBe(depth);
    expect(tryDer(() => readTree(deep, readSingle(deep)))).toBeDefined(); // the tree walker stops at its own depth
    expect(performance.now() - t0).toBeLessThan(2000);

    const indefinite = new Uint8Array([...new Array<number>(depth).fill(0).flatMap(() => [0x30, 0x80]), ...new Array<number>(2 * depth).fill(0)]);
    t0 = performance.now();
    expect(refusal(indefinite)).toBe('depth');
    expect(performance.now() - t0).toBeLessThan(500);
    // Exactly at the bound it reads.
    const atBound = new Uint8Array([
      ...new Array<number>(DER_LIMITS.indefiniteDepth).fill(0).flatMap(() => [0x30, 0x80]),
      ...new Array<number>(2 * DER_LIMITS.indefiniteDepth).fill(0),
    ]);
    expect(readElement(atBound).end).toBe(atBound.length);
  });

  it('a million elements: one readChildren stops at its bound, a caller may allow more, an indefinite list is walked in linear time', () => {
    const n = 1_000_000;
    const nulls = new Uint8Array(2 * n).fill(0).map((_, i) => (i % 2 ? 0 : TAG.NULL));
    const list = encodeElement(TAG.SEQUENCE, nulls);
    let t0 = performance.now();
    expect(refusal(list, (b) => readChildren(b, readSingle(b)))).toBe('count');
    expect(performance.now() - t0).toBeLessThan(500);
    expect(readChildren(list, readSingle(list), n)).toHaveLength(n);
    expect(refusal(list, (b) => readChildren(b, readSingle(b), n - 1))).toBe('count');

    const indefinite = new Uint8Array([0x30, 0x80, ...nulls, 0, 0]);
    t0 = performance.now();
    expect(readElement(indefinite).end).toBe(indefinite.length);
    expect(performance.now() - t0).toBeLessThan(2000);
  });
});
