/**
 * What goes wrong with a key in a token, each case with its own SoftHSM2 token directory:
 *
 * - at start-up (the real server, `node dist/src/main.js api`, as an operator starts it): a wrong PIN, no such
 *   token, no such key, a certificate of another key, a key type Folio cannot sign with, an unreadable PIN file,
 *   a missing module, a token directory that is not there — each stops the server with exit code 1 and one line
 *   on stderr naming the setting, and nothing is generated in DATA_DIR instead;
 * - while serving (the API in this process): the token going away (its directory moved) answers /v1/sign with
 *   503 + Retry-After and health `degraded`, never 500, also noticed while idle, and signing resumes when it is
 *   back; a key deleted from the token the same, until it is imported again.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { loadTrustStore, verifyPdf } from '../../src/verify/index.js';
import { makePdf, signBody } from './helpers.js';
import { ROOT, serverEntry } from '../adversarial/server.js';
import { TestToken, hsmMissing, type IssuedKey } from './hsm-helpers.js';

const missing = hsmMissing();
if (missing) console.warn(`hsm-failures: skipped — ${missing}`);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts the server with `env` and waits for it to exit (it must, within the limit): its exit code and stderr. */
function startExpectingExit(env: Record<string, string>, dataDir: string): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const entry = serverEntry();
  const child = spawn(process.execPath, [...entry.args, 'api'], {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'warn', OFFICE_WORKERS: '1', ENGINE_WORKERS: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (d) => (stderr += d));
  child.stdout.on('data', (d) => (stdout += d));
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, stdout });
    });
  });
}

describe.skipIf(missing)('start-up stops with one line naming the setting', () => {
  let token: TestToken;
  let key: IssuedKey;
  let other: IssuedKey;
  let dataDir: string;

  beforeAll(() => {
    token = new TestToken();
    key = token.issueKey('signer', { type: 'ec', curve: 'P-256' });
    // A certificate whose key never reached the token, and an RSA one.
    other = token.issueKey('other', { type: 'ec', curve: 'P-256' }, { import: false });
  }, 60_000);
  afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  afterAll(() => token?.remove());

  const uri = (attrs: string, query: string) => `pkcs11:token=folio;${attrs}?${query}`;
  const cases: Array<[string, () => Record<string, string>, RegExp]> = [
    [
      'a wrong PIN',
      () => {
        const wrong = path.join(token.work, 'wrong-pin');
        fs.writeFileSync(wrong, '9999\n');
        return token.settings(key, uri('object=signer;type=private', `pin-source=file:${wrong}`));
      },
      /^Invalid configuration: SIGNING_PKCS11_URI the token "folio" refused the PIN \(CKR_PIN_INCORRECT\)$/,
    ],
    [
      'no such token',
      () => token.settings(key, `pkcs11:token=absent;object=signer?pin-source=file:${token.pinFile}`),
      /^Invalid configuration: SIGNING_PKCS11_URI names no token of \/usr\/lib\/softhsm\/libsofthsm2\.so \(tokens present: "folio"/,
    ],
    [
      'no such key',
      () => token.settings(key, uri('object=absent;type=private', `pin-source=file:${token.pinFile}`)),
      /^Invalid configuration: SIGNING_PKCS11_URI finds no private key pkcs11:token=folio;object=absent;type=private on the token/,
    ],
    [
      'a certificate of another key',
      () => ({ ...token.settings(key), SIGNING_CERT_CHAIN: other.chainFile }),
      /^Invalid configuration: SIGNING_CERT_CHAIN does not certify the key that signs: a test signature made with the key did not verify with the certificate's public key$/,
    ],
    [
      'a certificate of another key type',
      () => ({ ...token.settings(key), SIGNING_CERT_CHAIN: token.issueKey('rsa-other', { type: 'rsa', bits: 2048 }, { import: false }).chainFile }),
      /^Invalid configuration: SIGNING_CERT_CHAIN certifies an RSA-2048 key, but the token's key is EC P-256$/,
    ],
    [
      'a key type Folio cannot sign with (secp256k1)',
      () => token.settings(token.issueKey('k1', { type: 'ec', curve: 'secp256k1' })),
      /^Invalid configuration: SIGNING_PKCS11_URI names a key Folio cannot sign with: SIGNING_CERT_CHAIN certifies an EC key on curve secp256k1/,
    ],
    [
      'an RSA key of 1024 bits',
      () => token.settings(token.issueKey('rsa1024', { type: 'rsa', bits: 1024 })),
      /^Invalid configuration: SIGNING_PKCS11_URI names a key Folio cannot sign with: SIGNING_CERT_CHAIN certifies an RSA key of 1024 bits/,
    ],
    [
      'an unreadable PIN file',
      () => token.settings(key, uri('object=signer', 'pin-source=file:/run/secrets/absent-pin')),
      /^Invalid configuration: SIGNING_PKCS11_URI names pin-source \/run\/secrets\/absent-pin, which cannot be read \(ENOENT\)$/,
    ],
    [
      'a module that is not there',
      () => ({ ...token.settings(key), SIGNING_PKCS11_MODULE: '/usr/lib/absent/libpkcs11.so' }),
      /^Invalid configuration: SIGNING_PKCS11_MODULE \/usr\/lib\/absent\/libpkcs11\.so does not exist$/,
    ],
    [
      'a token directory that is not there',
      () => {
        const conf = path.join(token.work, 'no-tokens.conf');
        fs.writeFileSync(conf, `directories.tokendir = ${path.join(token.work, 'absent')}\nobjectstore.backend = file\n`);
        return { ...token.settings(key), SOFTHSM2_CONF: conf };
      },
      /^Invalid configuration: SIGNING_PKCS11_MODULE cannot reach the key: C_Initialize failed \(CKR_GENERAL_ERROR\)$/,
    ],
    [
      'a chain file that is not PEM',
      () => ({ ...token.settings(key), SIGNING_CERT_CHAIN: token.pinFile }),
      /^Invalid configuration: SIGNING_CERT_CHAIN names .*pin, which holds no PEM certificate$/,
    ],
  ];

  it.each(cases)(
    '%s',
    async (_name, env, line) => {
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-hsm-start-'));
      const { code, stderr, stdout } = await startExpectingExit(env(), dataDir);
      expect(code, stdout + stderr).toBe(1);
      const lines = stderr.trim().split('\n');
      expect(lines, stderr).toHaveLength(1);
      expect(lines[0]).toMatch(line);
      // Folio did not fall back to a key of its own.
      expect(fs.existsSync(path.join(dataDir, 'signing'))).toBe(false);
    },
    90_000,
  );
});

describe.skipIf(missing)('a token that goes away while serving', () => {
  let token: TestToken;
  let key: IssuedKey;
  let keyFile: string;
  let api: TestApi;

  beforeAll(async () => {
    token = new TestToken();
    key = token.issueKey('signer', { type: 'ec', curve: 'P-256' }, { import: false });
    // Kept (outside the token) so that the deleted key can be imported again.
    keyFile = path.join(token.work, 'signer.key');
    fs.copyFileSync(keyFile, `${keyFile}.backup`);
    token.importKey(keyFile, 'signer', key.id);
    process.env.SOFTHSM2_CONF = token.conf;
    api = await startTestApi({
      env: { ...token.settings(key), SIGNING_PKCS11_URI: `pkcs11:token=folio;object=signer?pin-source=file:${token.pinFile}` },
    });
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    token?.remove();
  });

  const health = async () =>
    (await (await fetch(`${api.url}/v1/health`)).json()) as { status: string; engines: Record<string, { status: string; reason?: string }> };
  async function waitForHealth(status: string, ms: number) {
    const deadline = Date.now() + ms;
    for (;;) {
      const h = await health();
      if (h.engines.signingKey?.status === status) return h;
      if (Date.now() > deadline) throw new Error(`signingKey not ${status} within ${ms} ms: ${JSON.stringify(h.engines.signingKey)}`);
      await sleep(250);
    }
  }
  const signOnce = async () => {
    const res = await fetch(`${api.url}/v1/sign`, {
      method: 'POST',
      headers: { authorization: `Bearer ${api.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...signBody(await makePdf(1)), level: 'B-B' }),
    });
    const json = (await res.json()) as { code?: string; message?: string; document?: { base64: string } };
    return { status: res.status, retryAfter: res.headers.get('retry-after'), json };
  };
  const expectValid = (b64: string) => {
    const report = verifyPdf(new Uint8Array(Buffer.from(b64, 'base64')), { trust: loadTrustStore({ rootCertificatePem: key.rootPem }) });
    expect(report.valid).toBe(true);
  };

  it('answers 503 + Retry-After while the token is gone (health degraded, never 500), and signs again once it is back', async () => {
    const ok = await signOnce();
    expect(ok.status).toBe(200);
    token.unplug();
    try {
      const during = await Promise.all(Array.from({ length: 4 }, () => signOnce()));
      for (const r of during) {
        expect(r.status, JSON.stringify(r.json)).toBe(503);
        expect(r.json.code).toBe('SERVICE_UNAVAILABLE');
        expect(r.json.message).toMatch(/not signed: the signing key cannot be reached/);
        expect(Number(r.retryAfter)).toBeGreaterThan(0);
      }
      const h = await waitForHealth('degraded', 5000);
      expect(h.status).toBe('degraded');
      // A PKCS#11 code: no path, label or URI in an answer that needs no key.
      expect(h.engines.signingKey?.reason).toMatch(/^CKR_[A-Z_]+$/);
      expect(during[0]!.json.message).not.toMatch(/pkcs11:|\/tmp\//);
    } finally {
      token.plugBack();
    }
    await waitForHealth('healthy', 30_000);
    const after = await signOnce();
    expect(after.status, JSON.stringify(after.json)).toBe(200);
    expectValid(after.json.document!.base64);
  }, 90_000);

  it('notices a token gone while idle (health probe), before any request fails', async () => {
    await waitForHealth('healthy', 30_000);
    token.unplug();
    try {
      await waitForHealth('degraded', 12_000);
    } finally {
      token.plugBack();
    }
    await waitForHealth('healthy', 30_000);
    expect((await signOnce()).status).toBe(200);
  }, 90_000);

  it('answers 503 when the key is deleted from the token, and signs again once it is imported back', async () => {
    await waitForHealth('healthy', 30_000);
    token.deleteKey('signer');
    const r = await signOnce();
    expect(r.status, JSON.stringify(r.json)).toBe(503);
    expect(r.retryAfter).not.toBeNull();
    const h = await waitForHealth('degraded', 5000);
    // The recovery looks for the key and says what it misses.
    await sleep(1500);
    expect((await health()).engines.signingKey?.reason ?? h.engines.signingKey?.reason).toMatch(/^(CKR_OBJECT_HANDLE_INVALID|key not found)$/);
    fs.copyFileSync(`${keyFile}.backup`, keyFile);
    token.importKey(keyFile, 'signer', key.id);
    await waitForHealth('healthy', 30_000);
    const after = await signOnce();
    expect(after.status).toBe(200);
    expectValid(after.json.document!.base64);
  }, 90_000);
});
