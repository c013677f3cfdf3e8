/**
 * The signer interface with a real SoftHSM2 token (its own token directory per test): every key type Folio
 * signs with — RSA PKCS#1 v1.5 and PSS, ECDSA P-256/P-384/P-521 with the matching SHA-2 — signs a PDF
 * through the token and the signature is checked by Folio's verifier and by pdfsig (NSS); the file key signs
 * the same way; engine threads get a channel, never key material; many signatures at once share the sessions.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import { loadConfig } from '../../src/modules/config.js';
import { loadSigningIdentity } from '../../src/sign/index.js';
import type { SigningIdentity } from '../../src/sign/identity-types.js';
import { FileKeySigner, signerFromThreadData, type SignatureAlgorithm } from '../../src/sign/signer/index.js';
import { digestInfo, ecdsaRawToDer } from '../../src/sign/signer/encoding.js';
import { publicReason } from '../../src/sign/signer/remote-key.js';
import { engineWorkerData } from '../../src/modules/engine.js';
import { loadTrustStore, verifyPdf } from '../../src/verify/index.js';
import { makePdf, nssDbTrusting, pdfsig, signMinimal, writeTemp } from './helpers.js';
import { TestToken, USER_PIN, hsmMissing, type KeySpec } from './hsm-helpers.js';

const missing = hsmMissing();
if (missing) console.warn(`hsm-signer: skipped — ${missing}`);
const logger = pino({ level: 'silent' });

let token: TestToken | undefined;
let identity: SigningIdentity | undefined;
afterEach(async () => {
  await identity?.keyHost?.close();
  identity = undefined;
  token?.remove();
  token = undefined;
});

/** A token with one imported key, and the identity Folio loads from the three settings. */
async function tokenIdentity(spec: KeySpec, env: Record<string, string> = {}, uri?: (label: string) => string) {
  token = new TestToken();
  const key = token.issueKey('signer', spec);
  // SoftHSM2 reads SOFTHSM2_CONF from the process environment when the key host initialises it.
  process.env.SOFTHSM2_CONF = token.conf;
  const config = loadConfig({ DATA_DIR: token.work, ENGINE_WORKERS: '2', ...token.settings(key, uri?.(token.label)), ...env });
  identity = await loadSigningIdentity(config, logger);
  return { token, key, identity };
}

function verifyWithFolio(pdf: Uint8Array, rootPem: string) {
  const report = verifyPdf(pdf, { trust: loadTrustStore({ rootCertificatePem: rootPem }) });
  return { report, sig: report.signatures[0]! };
}

const cases: Array<[string, KeySpec, Record<string, string>, RegExp, string]> = [
  ['RSA-2048 PKCS#1 v1.5', { type: 'rsa', bits: 2048 }, {}, /^RSA$/, 'SHA-256'],
  ['RSA-3072 RSASSA-PSS', { type: 'rsa', bits: 3072 }, { SIGNING_RSA_PADDING: 'pss' }, /^RSASSA-PSS \(SHA-256, MGF1 SHA-256, salt 32\)$/, 'SHA-256'],
  ['ECDSA P-256', { type: 'ec', curve: 'P-256' }, {}, /^ECDSA$/, 'SHA-256'],
  ['ECDSA P-384', { type: 'ec', curve: 'P-384' }, {}, /^ECDSA$/, 'SHA-384'],
  ['ECDSA P-521', { type: 'ec', curve: 'P-521' }, {}, /^ECDSA$/, 'SHA-512'],
];

describe.skipIf(missing)('signing through a SoftHSM2 token', () => {
  it.each(cases)('%s: signed in the token, valid for Folio verify and pdfsig', async (_name, spec, env, algorithm, digest) => {
    const { key, identity } = await tokenIdentity(spec, env);
    const signed = await signMinimal(identity, await makePdf(1));
    const { report, sig } = verifyWithFolio(signed.pdf, key.rootPem);
    expect(report.valid, JSON.stringify(sig)).toBe(true);
    expect(sig.signatureAlgorithm).toMatch(algorithm);
    expect(sig.digestAlgorithm).toBe(digest);
    expect(sig.certificate?.trusted).toBe(true);
    const file = writeTemp(token!.work, 'signed.pdf', signed.pdf);
    const out = pdfsig(file, nssDbTrusting(key.rootPem));
    expect(out).toContain('Signature Validation: Signature is Valid.');
    expect(out).toContain('Signer Certificate Common Name: Folio HSM signer');
    expect(out).toContain(`Signing Hash Algorithm: ${digest}`);
  });

  it('gives engine threads a channel to the key host, never key material', async () => {
    const { key, identity } = await tokenIdentity(
      { type: 'ec', curve: 'P-256' },
      {},
      (label) => `pkcs11:token=${label};object=signer?pin-value=${USER_PIN}`,
    );
    const data = engineWorkerData({ config: loadConfig({ DATA_DIR: token!.work, ...token!.env }), logger, services: { signing: identity } });
    const serialized = JSON.stringify(data, (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('base64') : v));
    expect(data.signing?.signer.kind).toBe('channel');
    expect(serialized).not.toMatch(/PRIVATE KEY|pin-value/);
    expect(serialized).not.toContain(key.secret.toString('base64'));
    expect(data.signing?.signer.keyName).toBe('pkcs11:token=folio;object=signer');
    // What a thread rebuilds signs through the host, and the certificate's key verifies it.
    const signer = signerFromThreadData(data.signing!.signer);
    const message = crypto.randomBytes(100);
    const { signature } = await signer.sign({ digest: crypto.createHash('sha256').update(message).digest() });
    expect(crypto.verify('sha256', message, { key: identity.publicKey, dsaEncoding: 'der' }, signature)).toBe(true);
  });

  it('makes 20 signatures at once through the session pool', async () => {
    const { identity } = await tokenIdentity({ type: 'ec', curve: 'P-256' }, { ENGINE_WORKERS: '3' });
    const messages = Array.from({ length: 20 }, () => crypto.randomBytes(64));
    const signatures = await Promise.all(messages.map((m) => identity.signer.sign({ digest: crypto.createHash('sha256').update(m).digest() })));
    for (const [i, s] of signatures.entries()) {
      expect(crypto.verify('sha256', messages[i]!, { key: identity.publicKey, dsaEncoding: 'der' }, s.signature)).toBe(true);
    }
  });

  it('leaves no key and no certificate in DATA_DIR', async () => {
    const { token } = await tokenIdentity({ type: 'ec', curve: 'P-256' });
    await signMinimal(identity!, await makePdf(1));
    // DATA_DIR was the work folder (the CA, the chain, the PIN): no signing/ folder was generated beside them.
    expect(fs.existsSync(`${token.work}/signing`)).toBe(false);
  });
});

describe('the file key on the same interface', () => {
  const pairs: Array<[string, crypto.KeyObject, SignatureAlgorithm['scheme'], 'pkcs1' | 'pss']> = [
    ['P-384', crypto.generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey, 'ECDSA', 'pkcs1'],
    ['RSA-PSS', crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey, 'RSASSA-PSS', 'pss'],
    ['RSA PKCS#1', crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey, 'RSASSA-PKCS1-v1_5', 'pkcs1'],
  ];
  it.each(pairs)('%s signs the data its digest names', async (_n, key, scheme, padding) => {
    const signer = new FileKeySigner(key, 'test', undefined, padding);
    expect(signer.algorithm.scheme).toBe(scheme);
    const data = crypto.randomBytes(80);
    const hash = signer.algorithm.hash === 'SHA-384' ? 'sha384' : 'sha256';
    const { signature } = await signer.sign({ digest: crypto.createHash(hash).update(data).digest(), data });
    const pub = crypto.createPublicKey(key);
    const opts =
      scheme === 'ECDSA'
        ? { key: pub, dsaEncoding: 'der' as const }
        : scheme === 'RSASSA-PSS'
          ? { key: pub, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }
          : { key: pub, padding: crypto.constants.RSA_PKCS1_PADDING };
    expect(crypto.verify(hash, data, opts, signature)).toBe(true);
  });

  it('refuses keys Folio cannot sign with', () => {
    expect(() => new FileKeySigner(crypto.generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).privateKey, 't')).toThrow(/curve secp256k1/);
    expect(() => new FileKeySigner(crypto.generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey, 't')).toThrow(/1024 bits/);
    expect(() => new FileKeySigner(crypto.generateKeyPairSync('ed25519').privateKey, 't')).toThrow(/ed25519/);
  });
});

describe('the encodings around a token', () => {
  it('DigestInfo: what RSA PKCS#1 v1.5 signs (the raw RSA operation on it is node:crypto’s signature)', () => {
    const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
    const data = Buffer.from('document');
    for (const [hash, name] of [
      ['SHA-256', 'sha256'],
      ['SHA-384', 'sha384'],
      ['SHA-512', 'sha512'],
    ] as const) {
      const raw = crypto.privateEncrypt(
        { key: privateKey, padding: crypto.constants.RSA_PKCS1_PADDING },
        digestInfo(hash, crypto.createHash(name).update(data).digest()),
      );
      expect(crypto.verify(name, data, publicKey, raw)).toBe(true);
    }
  });

  it('r‖s to DER: the signature node:crypto makes in IEEE P1363 form verifies as DER', () => {
    for (const namedCurve of ['P-256', 'P-384', 'P-521']) {
      const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve });
      for (let i = 0; i < 20; i++) {
        const data = crypto.randomBytes(32);
        const raw = crypto.sign('sha256', data, { key: privateKey, dsaEncoding: 'ieee-p1363' });
        expect(crypto.verify('sha256', data, { key: publicKey, dsaEncoding: 'der' }, ecdsaRawToDer(raw))).toBe(true);
      }
    }
    expect(() => ecdsaRawToDer(new Uint8Array(63))).toThrow(/not r‖s/);
  });
});

describe('what /v1/health and a 503 say of a failure (publicReason)', () => {
  it('a PKCS#11 code or a category, never a path, URI or label', () => {
    expect(publicReason('the token did not sign (CKR_DEVICE_REMOVED)')).toBe('CKR_DEVICE_REMOVED');
    expect(publicReason('SIGNING_PKCS11_URI finds no private key pkcs11:token=folio;object=signer on the token')).toBe('key not found');
    expect(publicReason('SIGNING_PKCS11_URI names pin-source /run/secrets/pin, which cannot be read (EACCES)')).toBe('PIN file unreadable');
    expect(publicReason('SIGNING_PKCS11_URI the token refused this PIN before; not tried again until the PIN changes')).toBe('PIN refused');
    expect(publicReason('SIGNING_CERT_CHAIN does not certify the key that signs: …')).toBe('certificate does not match the key');
    expect(publicReason('no signature within 10000 ms')).toBe('timed out');
    expect(publicReason('something else at /var/lib/hsm')).toBe('unavailable');
  });
});
