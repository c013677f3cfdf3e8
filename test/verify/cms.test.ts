/**
 * src/verify/cms.ts and src/sign/cms.ts on their own, against OpenSSL as the independent party: CMS written by
 * `openssl cms -sign` (detached DER, attached DER, attached BER with indefinite lengths and a constructed
 * OCTET STRING) verifies, and a CMS built by Folio's signer verifies with `openssl cms -verify` and here.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityFromParts } from '../../src/sign/identity.js';
import { buildSignedData, signDigest } from '../../src/sign/cms.js';
import { verifyCms } from '../../src/verify/cms.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-cms-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const content = Buffer.from('the signed bytes\n');
const digestOf = (alg: string) => new Uint8Array(crypto.createHash(alg.replace('-', '').toLowerCase()).update(content).digest());
const openssl = (args: string[]) => execFileSync('openssl', args, { cwd: tmp, stdio: ['ignore', 'pipe', 'pipe'] });
const read = (name: string) => new Uint8Array(fs.readFileSync(path.join(tmp, name)));

beforeAll(() => {
  fs.writeFileSync(path.join(tmp, 'content.bin'), content);
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-subj', '/CN=CMS Test', '-days', '2']);
  const sign = (out: string, extra: string[]) =>
    openssl([
      'cms',
      '-sign',
      '-binary',
      '-md',
      'sha256',
      '-in',
      'content.bin',
      '-signer',
      'cert.pem',
      '-inkey',
      'key.pem',
      '-outform',
      'DER',
      '-out',
      out,
      ...extra,
    ]);
  sign('detached.der', []);
  sign('attached.der', ['-nodetach']);
  sign('ber.der', ['-nodetach', '-stream', '-indef']);
}, 60_000);

describe('verifyCms on CMS written by OpenSSL', () => {
  it.each(['detached.der', 'attached.der', 'ber.der'])('%s: digest and signature hold', (name) => {
    const r = verifyCms(read(name), digestOf);
    expect(r.errors).toEqual([]);
    expect(r).toMatchObject({ digestAlgorithm: 'SHA-256', digestMatches: true, signatureValid: true });
    expect(r.signerCertificate?.subject).toBe('CN=CMS Test');
    expect(r.signingTime).toBeInstanceOf(Date);
    if (name !== 'detached.der') expect(Buffer.from(r.encapsulatedContent!)).toEqual(content);
  });

  it('the BER file really is BER: indefinite lengths and a constructed eContent', () => {
    const ber = Buffer.from(read('ber.der'));
    expect(ber.subarray(0, 2).toString('hex')).toBe('3080');
    expect(ber.includes(Buffer.from('a0802480', 'hex'))).toBe(true);
  });

  it('one flipped byte in the signature value fails the signature, not the parse', () => {
    const der = read('detached.der');
    der[der.length - 10] = der[der.length - 10]! ^ 0x01;
    const r = verifyCms(der, digestOf);
    expect(r.errors).toEqual([]);
    expect(r.signatureValid).toBe(false);
  });

  it('garbage is an error in the result, not an exception', () => {
    expect(verifyCms(new Uint8Array([0x30, 0x80, 0x01]), digestOf).errors[0]).toMatch(/CMS not parseable/);
  });
});

describe('the SignedData Folio builds (src/sign/cms.ts)', () => {
  it('verifies with openssl cms -verify and with verifyCms, timestamp attribute included', async () => {
    const identity = identityFromParts(crypto.createPrivateKey(fs.readFileSync(path.join(tmp, 'key.pem'))), [
      new Uint8Array(new crypto.X509Certificate(fs.readFileSync(path.join(tmp, 'cert.pem'))).raw),
    ]);
    const signer = await signDigest(identity, digestOf('SHA-256'));
    const token = read('attached.der'); // any ContentInfo stands in for the token here
    const cms = buildSignedData(identity, signer, token);
    fs.writeFileSync(path.join(tmp, 'folio.der'), cms);
    openssl([
      'cms',
      '-verify',
      '-binary',
      '-inform',
      'DER',
      '-in',
      'folio.der',
      '-content',
      'content.bin',
      '-CAfile',
      'cert.pem',
      '-out',
      '/dev/null',
    ]);
    const r = verifyCms(cms, digestOf);
    expect(r.errors).toEqual([]);
    expect(r).toMatchObject({ digestMatches: true, signatureValid: true });
    expect(Buffer.from(r.timestampToken!)).toEqual(Buffer.from(token));
  });
});
