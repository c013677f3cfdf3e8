/**
 * `folio sign` (local mode, the compiled CLI as a user runs it) with the same three settings as the server:
 * it signs through the SoftHSM2 token, pdfsig finds the signature valid with the token's certificate, DATA_DIR
 * gets no key; `folio verify` trusts it; and a wrong PIN is a configuration error (exit 2) on one line.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../cli/helpers.js';
import { makePdf, nssDbTrusting, pdfsig, writeTemp } from './helpers.js';
import { TestToken, filesUnder, hasPemPrivateKey, hsmMissing, type IssuedKey } from './hsm-helpers.js';

const missing = hsmMissing();
if (missing) console.warn(`hsm-cli: skipped — ${missing}`);

describe.skipIf(missing)('folio sign with a key in a SoftHSM2 token', () => {
  let token: TestToken;
  let key: IssuedKey;
  let dataDir: string;
  let pdf: string;

  beforeAll(async () => {
    token = new TestToken();
    key = token.issueKey('cli-signer', { type: 'rsa', bits: 2048 });
    dataDir = tempDir('hsm');
    pdf = writeTemp(token.work, 'contract.pdf', await makePdf(2));
  }, 60_000);
  afterAll(() => {
    token?.remove();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('signs through the token; pdfsig and folio verify accept it; DATA_DIR gets no key', async () => {
    const out = path.join(token.work, 'contract.signed.pdf');
    const env = { ...token.settings(key), DATA_DIR: dataDir, SIGNING_RSA_PADDING: 'pss' };
    const s = await runCli(['sign', pdf, '--name', 'Ada Lovelace', '--email', 'ada@example.com', '-o', out], { env });
    expect(s.code, s.stderr).toBe(0);
    const nss = nssDbTrusting(key.rootPem);
    try {
      const report = pdfsig(out, nss);
      expect(report).toContain('Signature Validation: Signature is Valid.');
      expect(report).toContain('Certificate Validation: Certificate is Trusted.');
      expect(report).toContain('Signer Certificate Common Name: Folio HSM cli-signer');
    } finally {
      fs.rmSync(nss, { recursive: true, force: true });
    }
    // Local verify trusts this machine's identity: the token certificate's chain.
    const v = await runCli(['verify', out, '--json'], { env });
    expect(v.code, v.stderr).toBe(0);
    // One file: its verify answer, as the API gives it.
    const verdict = JSON.parse(v.stdout) as { valid: boolean; signatures: Array<{ signatureAlgorithm: string; certificate: { trusted: boolean } }> };
    expect(verdict.valid).toBe(true);
    expect(verdict.signatures[0]!.signatureAlgorithm).toMatch(/^RSASSA-PSS/);
    expect(verdict.signatures[0]!.certificate.trusted).toBe(true);
    expect(fs.existsSync(path.join(dataDir, 'signing'))).toBe(false);
    for (const f of filesUnder(dataDir)) {
      expect(hasPemPrivateKey(f.bytes), f.file).toBe(false);
      expect(f.bytes.includes(key.secret), f.file).toBe(false);
    }
  }, 150_000);

  it('a wrong PIN is a configuration error on one line (exit 2)', async () => {
    const wrong = writeTemp(token.work, 'wrong-pin', '0000\n');
    const env = { ...token.settings(key, `pkcs11:token=folio;object=cli-signer?pin-source=file:${wrong}`), DATA_DIR: dataDir };
    const s = await runCli(['sign', pdf, '--name', 'Ada Lovelace', '--email', 'ada@example.com', '-o', path.join(token.work, 'x.pdf')], { env });
    expect(s.code).toBe(2);
    expect(s.stderr.trim().split('\n')).toHaveLength(1);
    expect(s.stderr).toMatch(/SIGNING_PKCS11_URI the token "folio" refused the PIN \(CKR_PIN_INCORRECT\)/);
    expect(fs.existsSync(path.join(token.work, 'x.pdf'))).toBe(false);
  }, 150_000);
});
