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

/**
 * Algorithm pairings (RFC 8419 for EdDSA, RFC 5754 and RFC 8017 for RSA and ECDSA with a digest in their OID,
 * RFC 4055 for RSASSA-PSS parameters; RFC 8933 protects the pairing): a SignerInfo whose digest algorithm is not
 * the one its signature algorithm implies is a cryptographic constraint failure, as pyHanko reports it
 * (INDETERMINATE / CRYPTO_CONSTRAINTS_FAILURE, before any certificate check). The signature still verifies,
 * so `valid` stays with integrity, coverage and modifications (docs/api.md), as for SHA-1.
 */
describe('algorithm pairings', () => {
  const mismatch = (r: ReturnType<typeof verifyPdf>) => {
    const s = r.signatures[0]!;
    expect(s.integrity).toEqual({ digestMatches: true, signatureValid: true });
    expect(s.warnings.join('\n')).toMatch(/ALGORITHM_MISMATCH/);
    expect(s.indication).toBe('INDETERMINATE');
    expect(s.subIndication).toBe('CRYPTO_CONSTRAINTS_FAILURE');
    expect(r.indication).toBe('INDETERMINATE');
    expect(r.valid).toBe(true);
    return s;
  };
  const clean = (r: ReturnType<typeof verifyPdf>) => {
    expect(r.signatures[0]!.warnings.join('\n')).not.toMatch(/ALGORITHM_MISMATCH/);
    expect(r.indication).toBe('TOTAL_PASSED');
  };

  it('Ed448 with SHA-512 (not SHAKE256) is a constraint failure', () => {
    const s = mismatch(verifyPdf(signPdf(base, { signer: ed448, digest: 'sha512' }), { trust }));
    expect(s.warnings.join()).toMatch(/Ed448 signatures digest their signed attributes with SHAKE256, not SHA-512 \(RFC 8419\)/);
  });

  it('Ed448 with SHA-256 too; with SHAKE256 (either OID) it is clean', () => {
    mismatch(verifyPdf(signPdf(base, { signer: ed448, digest: 'sha256' }), { trust }));
    clean(verifyPdf(signPdf(base, { signer: ed448, digest: 'shake256' }), { trust }));
    clean(verifyPdf(signPdf(base, { signer: ed448, digest: 'shake256', shakeLen: true }), { trust }));
  });

  it('Ed25519 with SHA-256 (not SHA-512) is a constraint failure; with SHA-512 it is clean', () => {
    const s = mismatch(verifyPdf(signPdf(base, { signer: ed25519, digest: 'sha256' }), { trust }));
    expect(s.warnings.join()).toMatch(/Ed25519 .* with SHA-512, not SHA-256/);
    clean(verifyPdf(signPdf(base, { signer: ed25519, digest: 'sha512' }), { trust }));
  });

  it('sha384WithRSAEncryption over a SHA-256 message digest is a constraint failure; a matching pair is clean', () => {
    const s = mismatch(verifyPdf(signPdf(base, { signer: pki.rsa, digest: 'sha256', signatureDigest: 'sha384' }), { trust }));
    expect(s.warnings.join()).toMatch(/message digest is SHA-256 but the signature algorithm 1\.2\.840\.113549\.1\.1\.12 implies SHA-384/);
    clean(verifyPdf(signPdf(base, { signer: pki.rsa, digest: 'sha384', signatureDigest: 'sha384' }), { trust }));
    // rsaEncryption names no digest: nothing to pair.
    clean(verifyPdf(signPdf(base, { signer: pki.rsa, digest: 'sha512' }), { trust }));
  });

  it('ecdsa-with-SHA512 over a SHA-256 message digest is a constraint failure', () => {
    mismatch(verifyPdf(signPdf(base, { signer: pki.ec, digest: 'sha256', signatureDigest: 'sha512' }), { trust }));
    clean(verifyPdf(signPdf(base, { signer: pki.ec, digest: 'sha384' }), { trust }));
  });

  it('RSASSA-PSS parameters hashing with SHA-512 over a SHA-256 message digest is a constraint failure', () => {
    const s = mismatch(verifyPdf(signPdf(base, { signer: pki.rsa, pss: true, digest: 'sha256', signatureDigest: 'sha512' }), { trust }));
    expect(s.signatureAlgorithm).toBe('RSASSA-PSS (SHA-512, MGF1 SHA-512, salt 32)');
    expect(s.warnings.join()).toMatch(/RSASSA-PSS parameters hash with SHA-512/);
  });

  it('the constraint failure comes before trust: an untrusted signer with a mismatch is CRYPTO_CONSTRAINTS_FAILURE', () => {
    const r = verifyPdf(signPdf(base, { signer: ed448, digest: 'sha512' }), { trust: { anchors: [], service: [] } });
    expect(r.signatures[0]!.subIndication).toBe('CRYPTO_CONSTRAINTS_FAILURE');
  });
});
