import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/modules/config.js';
import { loadSigningIdentity, loadPkcs12, describeIdentity } from '../../src/sign/index.js';
import { FileKeySigner } from '../../src/sign/signer/index.js';
import { authed, startTestApi } from '../helpers/api.js';
import { lastSignature, makePdf, nssDbTrusting, opensslCmsPrint, opensslCmsVerify, pdfsig, postSign, signBody, writeTemp } from './helpers.js';

const logger = pino({ level: 'silent' });
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-sign-id-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function openssl(args: string[], cwd = tmp): string {
  return execFileSync('openssl', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

describe('generated signing identity', () => {
  it('creates a root CA and a signer certificate once, with owner-only files, and reuses them', async () => {
    const dataDir = path.join(tmp, 'gen');
    const first = await loadSigningIdentity(loadConfig({ DATA_DIR: dataDir }), logger);
    const dir = path.join(dataDir, 'signing');
    const files = fs.readdirSync(dir).sort();
    expect(files).toEqual(['root-ca.key.pem', 'root-ca.pem', 'signer.key.pem', 'signer.pem']);
    for (const f of files) expect(fs.statSync(path.join(dir, f)).mode & 0o077).toBe(0);
    expect(fs.statSync(dir).mode & 0o077).toBe(0);

    const again = await loadSigningIdentity(loadConfig({ DATA_DIR: dataDir }), logger);
    expect(again.certificatePem).toBe(first.certificatePem);
    expect(again.rootCertificatePem).toBe(first.rootCertificatePem);

    // OpenSSL accepts the chain, and the signer has the key usages PAdES validators expect.
    expect(openssl(['verify', '-CAfile', path.join(dir, 'root-ca.pem'), path.join(dir, 'signer.pem')])).toContain('OK');
    const text = openssl(['x509', '-in', path.join(dir, 'signer.pem'), '-noout', '-text']);
    expect(text).toMatch(/Digital Signature, Non Repudiation/);
    expect(text).toMatch(/CA:FALSE/);
    const rootText = openssl(['x509', '-in', path.join(dir, 'root-ca.pem'), '-noout', '-text']);
    expect(rootText).toMatch(/CA:TRUE/);
    expect(first.keyAlgorithm).toBe('ECDSA');
    expect(first.chainDer).toHaveLength(2);

    // The key signs what the certificate verifies.
    const data = Buffer.from('x');
    const { signature } = await first.signer.sign({ digest: crypto.createHash('sha256').update(data).digest(), data });
    expect(crypto.verify('sha256', data, new crypto.X509Certificate(first.certificatePem).publicKey, signature)).toBe(true);
  });
});

describe('damaged generated identity', () => {
  it('stops start-up with one line naming DATA_DIR instead of signing with a broken key', async () => {
    const dataDir = path.join(tmp, 'damaged');
    await loadSigningIdentity(loadConfig({ DATA_DIR: dataDir }), logger);
    fs.writeFileSync(path.join(dataDir, 'signing', 'signer.key.pem'), 'not a key');
    await expect(loadSigningIdentity(loadConfig({ DATA_DIR: dataDir }), logger)).rejects.toThrow(
      /^Invalid configuration: DATA_DIR holds an unreadable signing identity/,
    );
  });
});

describe('SIGNING_P12', () => {
  const p12Dir = path.join(tmp, 'p12');
  fs.mkdirSync(p12Dir);
  // A three-level chain made by OpenSSL: root → intermediate → RSA signer.
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'root.key',
      '-out',
      'root.pem',
      '-subj',
      '/CN=P12 Root',
      '-days',
      '30',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    p12Dir,
  );
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'int.key', '-out', 'int.csr', '-subj', '/CN=P12 Intermediate'], p12Dir);
  fs.writeFileSync(path.join(p12Dir, 'ca.ext'), 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n');
  openssl(
    [
      'x509',
      '-req',
      '-in',
      'int.csr',
      '-CA',
      'root.pem',
      '-CAkey',
      'root.key',
      '-CAcreateserial',
      '-out',
      'int.pem',
      '-days',
      '30',
      '-extfile',
      'ca.ext',
    ],
    p12Dir,
  );
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=P12 Signer/O=Example'], p12Dir);
  fs.writeFileSync(path.join(p12Dir, 'leaf.ext'), 'keyUsage=critical,digitalSignature,nonRepudiation\n');
  openssl(
    [
      'x509',
      '-req',
      '-in',
      'leaf.csr',
      '-CA',
      'int.pem',
      '-CAkey',
      'int.key',
      '-CAcreateserial',
      '-out',
      'leaf.pem',
      '-days',
      '30',
      '-extfile',
      'leaf.ext',
    ],
    p12Dir,
  );
  fs.writeFileSync(
    path.join(p12Dir, 'chain.pem'),
    fs.readFileSync(path.join(p12Dir, 'int.pem'), 'utf8') + fs.readFileSync(path.join(p12Dir, 'root.pem'), 'utf8'),
  );
  const exportP12 = (out: string, extra: string[]) =>
    openssl(
      ['pkcs12', '-export', '-inkey', 'leaf.key', '-in', 'leaf.pem', '-certfile', 'chain.pem', '-out', out, '-passout', 'pass:pä55 word', ...extra],
      p12Dir,
    );
  exportP12('modern.p12', []); // PBES2 / PBKDF2 / AES-256-CBC, HMAC-SHA-256
  exportP12('legacy.p12', ['-legacy']); // 3DES key bag, RC2-40 certificates, HMAC-SHA-1
  exportP12('aes-nomac-3des.p12', ['-keypbe', 'DES-EDE3-CBC', '-certpbe', 'AES-128-CBC']);

  for (const name of ['modern.p12', 'legacy.p12', 'aes-nomac-3des.p12']) {
    it(`loads ${name} with its chain ordered signer → intermediate → root`, () => {
      const identity = loadPkcs12(fs.readFileSync(path.join(p12Dir, name)), 'pä55 word');
      expect(identity.keyAlgorithm).toBe('RSA');
      expect(identity.chainDer).toHaveLength(3);
      const subjects = identity.chainDer.map((d) => new crypto.X509Certificate(d).subject);
      expect(subjects).toEqual(['CN=P12 Signer\nO=Example', 'CN=P12 Intermediate', 'CN=P12 Root']);
      expect(new crypto.X509Certificate(identity.rootCertificatePem!).subject).toBe('CN=P12 Root');
      expect(new crypto.X509Certificate(identity.certificatePem).checkPrivateKey((identity.signer as FileKeySigner).privateKey)).toBe(true);
    });
  }

  it('rejects a wrong password clearly', () => {
    expect(() => loadPkcs12(fs.readFileSync(path.join(p12Dir, 'legacy.p12')), 'nope')).toThrow(/wrong password/);
    expect(() => loadPkcs12(fs.readFileSync(path.join(p12Dir, 'modern.p12')), 'nope')).toThrow(/wrong password/);
  });

  it('stops start-up with one line naming SIGNING_P12 when the file is unusable', async () => {
    const config = loadConfig({ DATA_DIR: tmp, SIGNING_P12: path.join(p12Dir, 'modern.p12'), SIGNING_P12_PASSWORD: 'bad' });
    await expect(loadSigningIdentity(config, logger)).rejects.toThrow(/^Invalid configuration: SIGNING_P12 cannot be used: PKCS#12: wrong password/);
  });

  it('is served by GET /v1/verify/key (path or base64 value)', async () => {
    const base64 = fs.readFileSync(path.join(p12Dir, 'modern.p12')).toString('base64');
    const t = await startTestApi({ env: { SIGNING_P12: base64, SIGNING_P12_PASSWORD: 'pä55 word' } });
    try {
      const res = await fetch(`${t.url}/v1/verify/key`, authed(t));
      expect(res.status).toBe(200);
      const body = await res.json();
      const leaf = new crypto.X509Certificate(fs.readFileSync(path.join(p12Dir, 'leaf.pem')));
      expect(body.subject).toBe('CN=P12 Signer, O=Example');
      expect(body.issuer).toBe('CN=P12 Intermediate');
      expect(body.fingerprint).toBe(leaf.fingerprint256);
      expect(body.algorithm).toMatch(/^RSA-2048/);
      expect(new crypto.X509Certificate(body.certificate).fingerprint256).toBe(leaf.fingerprint256);
      expect(crypto.createPublicKey(body.publicKey).export({ format: 'der', type: 'spki' })).toEqual(
        leaf.publicKey.export({ format: 'der', type: 'spki' }),
      );
      expect(new Date(body.validTo).getTime()).toBe(new Date(leaf.validTo).getTime());
      expect((await fetch(`${t.url}/v1/verify/key`)).status).toBe(401);

      // Documents are signed with the P12's RSA key, and the CMS carries its whole chain.
      const signed = await postSign(t, signBody(await makePdf(1)));
      expect(signed.status).toBe(200);
      const file = writeTemp(p12Dir, 'signed-rsa.pdf', signed.pdf!);
      const nss = nssDbTrusting(fs.readFileSync(path.join(p12Dir, 'root.pem'), 'utf8'));
      const out = pdfsig(file, nss);
      fs.rmSync(nss, { recursive: true, force: true });
      expect(out).toContain('Signature Validation: Signature is Valid.');
      expect(out).toContain('Certificate Validation: Certificate is Trusted.');
      expect(out).toContain('Signer Certificate Common Name: P12 Signer');
      const parts = lastSignature(signed.pdf!);
      expect(opensslCmsVerify(p12Dir, parts, fs.readFileSync(path.join(p12Dir, 'root.pem'), 'utf8')).status).toBe(0);
      expect(opensslCmsPrint(p12Dir, parts.cms)).toMatch(/sha256WithRSAEncryption/);
    } finally {
      await t.close();
    }
  });
});

describe('GET /v1/verify/key with the generated identity', () => {
  it('publishes the generated signer certificate and keeps it across restarts', async () => {
    const dataDir = path.join(tmp, 'api');
    const t1 = await startTestApi({ dataDir });
    const k1 = await (await fetch(`${t1.url}/v1/verify/key`, authed(t1))).json();
    await t1.close();
    const t2 = await startTestApi({ dataDir });
    const k2 = await (await fetch(`${t2.url}/v1/verify/key`, authed(t2))).json();
    await t2.close();
    expect(k2).toEqual(k1);
    expect(k1.algorithm).toBe('ECDSA P-256 SHA-256');
    expect(k1.subject).toMatch(/^CN=Folio Document Signing [0-9a-f]{8}, O=Folio$/);
    expect(k1.issuer).toMatch(/^CN=Folio Local Root CA [0-9a-f]{8}, O=Folio$/);
    expect(k1.fingerprint).toBe(new crypto.X509Certificate(k1.certificate).fingerprint256);
    expect(describeIdentity(t2.services.signing!).fingerprint).toBe(k1.fingerprint);
  });
});
