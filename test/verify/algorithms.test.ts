/**
 * Signature algorithms beyond RSA PKCS#1 v1.5 and ECDSA: EdDSA (Ed25519 with SHA-512, Ed448 with SHAKE256 as
 * id-shake256 and id-shake256-len, RFC 8419) and RSASSA-PSS whose hash and salt length are read from the
 * AlgorithmIdentifier (RFC 4055). Certificates are issued here by the test root with openssl; the CMS is built
 * by the independent fixture signer with node:crypto.
 */
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyPdf } from '../../src/verify/index.js';
import { makePdf, makePki, signPdf, type Signer, type TestPki } from './fixtures.js';
import { issueLeaf } from './ltv-fixtures.js';

let pki: TestPki;
let trust: { anchors: X509Certificate[]; service: X509Certificate[] };
let ed25519: Signer;
let ed448: Signer;
let base: Uint8Array;

beforeAll(async () => {
  pki = makePki();
  trust = { anchors: [new X509Certificate(pki.caPem)], service: [] };
  ed25519 = issueLeaf(pki, 'ed25519', 'ed25519', '/CN=Erin Ed25519');
  ed448 = issueLeaf(pki, 'ed448', 'ed448', '/CN=Fay Ed448');
  base = await makePdf(1);
}, 60_000);
afterAll(() => pki?.cleanup());

describe('EdDSA', () => {
  it('Ed25519 with SHA-512 signed attributes verifies and is named', () => {
    const r = verifyPdf(signPdf(base, { signer: ed25519, digest: 'sha512' }), { trust });
    const s = r.signatures[0]!;
    expect(s.integrity).toEqual({ digestMatches: true, signatureValid: true });
    expect(s.signatureAlgorithm).toBe('Ed25519');
    expect(s.digestAlgorithm).toBe('SHA-512');
    expect(r.valid).toBe(true);
    expect(r.indication).toBe('TOTAL_PASSED');
  });

  it('Ed448 with SHAKE256 (id-shake256) verifies', () => {
    const r = verifyPdf(signPdf(base, { signer: ed448, digest: 'shake256' }), { trust });
    const s = r.signatures[0]!;
    expect(s.problems).toEqual([]);
    expect(s.signatureAlgorithm).toBe('Ed448');
    expect(s.digestAlgorithm).toBe('SHAKE256');
    expect(r.valid).toBe(true);
    expect(r.indication).toBe('TOTAL_PASSED');
  });

  it('Ed448 with id-shake256-len (512 bits) verifies', () => {
    const r = verifyPdf(signPdf(base, { signer: ed448, digest: 'shake256', shakeLen: true }), { trust });
    expect(r.signatures[0]!.integrity).toEqual({ digestMatches: true, signatureValid: true });
    expect(r.valid).toBe(true);
  });

  it('an Ed448 signature over altered bytes is a hash failure', () => {
    const signed = Buffer.from(signPdf(base, { signer: ed448, digest: 'shake256' }));
    // The header's version digit lies inside the signed range and changes nothing else.
    signed.write(signed[7] === 0x37 ? '6' : '7', 7, 'latin1');
    const r = verifyPdf(new Uint8Array(signed), { trust });
    expect(r.valid).toBe(false);
    expect(r.signatures[0]!.subIndication).toBe('HASH_FAILURE');
  });

  it('an Ed25519 certificate cannot stand in for an Ed448 signature OID', () => {
    // Signed by the Ed448 key, but the CMS names the Ed25519 certificate's identity: no valid signature.
    const swapped = { ...ed448, certPem: ed25519.certPem };
    const r = verifyPdf(signPdf(base, { signer: swapped, digest: 'shake256' }), { trust });
    expect(r.valid).toBe(false);
    expect(r.signatures[0]!.integrity.signatureValid).toBe(false);
  });
});

describe('RSASSA-PSS parameters', () => {
  it('SHA-384 with MGF1-SHA-384 and a 48-byte salt verifies with the parameters it declares', () => {
    const r = verifyPdf(signPdf(base, { signer: pki.rsa, pss: true, digest: 'sha384', pssSaltLength: 48 }), { trust });
    const s = r.signatures[0]!;
    expect(s.problems).toEqual([]);
    expect(s.integrity).toEqual({ digestMatches: true, signatureValid: true });
    expect(s.signatureAlgorithm).toBe('RSASSA-PSS (SHA-384, MGF1 SHA-384, salt 48)');
    expect(r.valid).toBe(true);
  });

  it('SHA-512 with salt 0 verifies', () => {
    const r = verifyPdf(signPdf(base, { signer: pki.rsa, pss: true, digest: 'sha512', pssSaltLength: 0 }), { trust });
    expect(r.signatures[0]!.signatureAlgorithm).toBe('RSASSA-PSS (SHA-512, MGF1 SHA-512, salt 0)');
    expect(r.valid).toBe(true);
  });

  it('a PSS signature whose declared salt length differs from the one used does not verify', () => {
    const signed = Buffer.from(signPdf(base, { signer: pki.rsa, pss: true, digest: 'sha384', pssSaltLength: 48 }));
    // saltLength [2] INTEGER 48 (a2 03 02 01 30) → 32 (a2 03 02 01 20), inside the unsigned /Contents.
    const hex = signed.toString('latin1');
    const at = hex.lastIndexOf('a203020130');
    expect(at).toBeGreaterThan(0);
    signed.write('a203020120', at, 'latin1');
    const r = verifyPdf(new Uint8Array(signed), { trust });
    expect(r.valid).toBe(false);
    expect(r.signatures[0]!.subIndication).toBe('SIG_CRYPTO_FAILURE');
  });
});
