/**
 * Secrets at rest (docs/api.md § Getting a key: "the server keeps only a hash of it"): after a code is sent, a
 * key issued with it and used, no file of the SQLite store holds the API key (nor its random part) or the
 * e-mailed code — keys are stored as SHA-256 hashes, codes as HMACs. The outbox, the embedded mail default,
 * holds the code by design and is not the store.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { createAuthService } from '../../src/auth/service.js';
import { loadConfig } from '../../src/modules/config.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-secrets-'));
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

/** Every file below `dir` except the mail outbox, as latin1 text (SQLite pages hold text as UTF-8 bytes). */
function storeFiles(dir: string): Array<{ name: string; text: string }> {
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true }).flatMap((e) => {
    const p = path.join(e.parentPath, e.name);
    if (!e.isFile() || path.relative(dataDir, p).startsWith('outbox')) return [];
    return [{ name: path.relative(dataDir, p), text: fs.readFileSync(p).toString('latin1') }];
  });
}

describe('the auth store keeps no secret in the clear', () => {
  it('holds neither the issued key nor the code, only the address they belong to', async () => {
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    const auth = await createAuthService(config, pino({ level: 'silent' }));
    const email = 'ada.secrets@example.org';
    await auth.register(email, '192.0.2.1');
    const mail = fs.readdirSync(path.join(dataDir, 'outbox')).map((f) => fs.readFileSync(path.join(dataDir, 'outbox', f), 'utf8'));
    const code = /verification code is (\d{6})/.exec(mail.join('\n').replace(/=\r?\n/g, ''))?.[1];
    expect(code).toMatch(/^\d{6}$/);
    const issued = await auth.verify(email, code!, '192.0.2.1');
    expect(await auth.authenticate(issued.apiKey)).not.toBeNull();
    await auth.close();

    const files = storeFiles(dataDir);
    expect(files.map((f) => f.name)).toContain('folio.sqlite');
    const all = files.map((f) => f.text).join('\n');
    expect(all).toContain(email); // the store is where this test looks
    expect(all).not.toContain(issued.apiKey);
    expect(all).not.toContain(issued.apiKey.slice('folio_sk_'.length, 'folio_sk_'.length + 32));
    expect(all).not.toContain(code);
  });
});
