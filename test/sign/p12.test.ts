/**
 * PKCS#12 reading (src/sign/p12.ts) on files written by `openssl pkcs12 -export`, and the measured reason why
 * p12.ts keeps its own PKCS#12 key derivation and RC2: pkijs cannot open a `-legacy` file and Node's OpenSSL 3
 * has no RC2.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Pkcs12Error, loadPkcs12 } from '../../src/sign/p12.js';
import { FileKeySigner } from '../../src/sign/signer/index.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-p12-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const PASSWORD = 'pä55 word';

function openssl(args: string[]): void {
  execFileSync('openssl', args, { cwd: tmp, stdio: ['ignore', 'pipe', 'pipe'] });
}
const p12 = (name: string) => new Uint8Array(fs.readFileSync(path.join(tmp, name)));

beforeAll(() => {
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'rsa.key', '-out', 'rsa.pem', '-subj', '/CN=P12 RSA', '-days', '2']);
  openssl([
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    'ec.key',
    '-out',
    'ec.pem',
    '-subj',
    '/CN=P12 EC',
    '-days',
    '2',
  ]);
  const exp = (out: string, key: string, cert: string, pass: string, extra: string[] = []) =>
    openssl(['pkcs12', '-export', '-inkey', key, '-in', cert, '-out', out, '-passout', `pass:${pass}`, ...extra]);
  exp('modern.p12', 'rsa.key', 'rsa.pem', PASSWORD);
  exp('legacy.p12', 'rsa.key', 'rsa.pem', PASSWORD, ['-legacy']);
  exp('nomac.p12', 'rsa.key', 'rsa.pem', PASSWORD, ['-nomac']);
  exp('empty-password.p12', 'rsa.key', 'rsa.pem', '');
  exp('ec.p12', 'ec.key', 'ec.pem', PASSWORD);
}, 60_000);

describe('loadPkcs12', () => {
  it.each(['modern.p12', 'legacy.p12', 'nomac.p12', 'ec.p12'])('opens %s with its key and certificate', (name) => {
    const identity = loadPkcs12(p12(name), PASSWORD);
    expect(identity.chainDer).toHaveLength(1);
    expect(new crypto.X509Certificate(identity.chainDer[0]!).checkPrivateKey((identity.signer as FileKeySigner).privateKey)).toBe(true);
    expect(identity.keyAlgorithm).toBe(name === 'ec.p12' ? 'ECDSA' : 'RSA');
  });

  it('opens a file exported with an empty password', () => {
    expect(loadPkcs12(p12('empty-password.p12'), '').keyAlgorithm).toBe('RSA');
  });

  it('a wrong password is a Pkcs12Error naming the password, with or without a MAC', () => {
    for (const name of ['modern.p12', 'legacy.p12', 'nomac.p12']) {
      expect(() => loadPkcs12(p12(name), 'nope')).toThrow(Pkcs12Error);
      expect(() => loadPkcs12(p12(name), 'nope')).toThrow(/wrong password/);
    }
  });

  it('bytes that are not a PFX are a Pkcs12Error', () => {
    expect(() => loadPkcs12(new Uint8Array([0x30, 0x03, 0x02, 0x01, 0x03]), PASSWORD)).toThrow(Pkcs12Error);
    expect(() => loadPkcs12(new TextEncoder().encode('not a pkcs12 file'), PASSWORD)).toThrow(/PKCS#12: cannot parse/);
  });
});

describe('why p12.ts keeps its own PKCS#12 KDF and RC2', () => {
  it("Node's OpenSSL has no RC2", () => {
    expect(crypto.getCiphers().filter((c) => c.includes('rc2'))).toEqual([]);
    expect(() => crypto.createDecipheriv('rc2-40-cbc', Buffer.alloc(5), Buffer.alloc(8))).toThrow();
  });

  it('pkijs cannot open an `openssl pkcs12 -export -legacy` file', async () => {
    pkijs.setEngine('node', new pkijs.CryptoEngine({ name: 'node', crypto: crypto.webcrypto as Crypto }));
    const bytes = p12('legacy.p12');
    const pfx = new pkijs.PFX({ schema: asn1js.fromBER(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)).result });
    const password = new TextEncoder().encode(PASSWORD).buffer;
    const open = async () => {
      await pfx.parseInternalValues({ password, checkIntegrity: true });
      const safe = pfx.parsedValue!.authenticatedSafe!;
      await safe.parseInternalValues({ safeContents: safe.safeContents.map(() => ({ password })) });
    };
    // pkijs checks the MAC, then stops at the RC2-40 certificate bag (pbeWithSHAAnd40BitRC2-CBC).
    await expect(open()).rejects.toThrow(/Unknown "contentEncryptionAlgorithm": 1\.2\.840\.113549\.1\.12\.1\.6/);
    // the same file opens here
    expect(loadPkcs12(bytes, PASSWORD).keyAlgorithm).toBe('RSA');
  });
});
