/**
 * The one configuration schema (issue 26): each module's settings joined with the core ones, read once —
 * values, units and defaults as before, and a bad variable named in one line, by the server (exit 1) and by
 * the CLI (exit 2), both through the same schemas.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/index.js';
import { loadConfig, loadSettings } from '../../src/modules/config.js';
import { runCli } from '../cli/helpers.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const MB = 1024 * 1024;

describe('module settings in the configuration', () => {
  it('reads each module’s variables into Config, in its units', () => {
    const c = loadConfig({
      AUTH_CLIENT_WINDOW_SECONDS: '60',
      PREVIEW_MEMORY_MB: '256',
      PREVIEW_MAX_MEGAPIXELS: '2',
      SIGNING_P12: '/keys/a.p12',
      SIGNING_P12_PASSWORD: ' spaced ',
      TSA_OPTIONAL: 'yes',
      TRUST_ANCHORS: '/etc/anchors.pem',
      INGEST_PORT: '9000',
      PUBLIC_URL: 'https://folio.example/',
    });
    expect(c).toMatchObject({
      authClientWindowMs: 60_000,
      previewMemoryBytes: 256 * MB,
      previewMaxPixels: 2_000_000,
      signingP12: '/keys/a.p12',
      // Taken as written: a password may begin or end with spaces.
      signingP12Password: ' spaced ',
      tsaOptional: true,
      trustAnchors: '/etc/anchors.pem',
      ingestPort: 9000,
      publicUrl: 'https://folio.example',
    });
  });

  it('keeps the defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      mailFrom: 'Folio <no-reply@folio.localhost>',
      authClientWindowMs: 600_000,
      authRegisterPerClient: 20,
      tsaOptional: false,
      previewMaxPixels: 50_000_000,
      previewMemoryBytes: 1024 * MB,
      ingestPort: 8081,
      adminAuthFailuresPerAddress: 10,
      officeMemoryBytes: 1536 * MB,
      trustProxy: false,
      redisKeyPrefix: 'folio:',
      urlFetchAllowlist: [],
    });
    expect(c.tsaUrl).toBeUndefined();
    expect(c.inFlightBytes % MB).toBe(0);
  });

  it.each([
    ['TSA_OPTIONAL', 'maybe', 'must be true or false, got "maybe"'],
    ['AUTH_CLIENT_WINDOW_SECONDS', '5', 'must be between 10 and 86400, got 5'],
    ['PREVIEW_MAX_MEGAPIXELS', '1.5', 'must be an integer, got "1.5"'],
    ['SIGNING_P12_PASSWORD', 'secret', 'is set but SIGNING_P12 is not'],
    ['MAIL_FROM', 'nobody', 'must contain an e-mail address'],
    ['TRUST_PROXY', '40', 'hop count must be at most 32, got 40'],
    ['INFLIGHT_BYTES_MB', '8', 'must be between 16 and 16777216, got 8'],
    ['ADMIN_TOKEN', 'short', 'must be at least 16 characters'],
    ['DATABASE_URL', 'mysql://x', 'must use postgres: or postgresql: (got mysql:)'],
    ['LOG_LEVEL', 'LOUD', 'must be one of fatal, error, warn, info, debug, trace, silent'],
  ])('%s=%s: one line naming it', (name, value, issue) => {
    let error: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe(name);
    expect((error as Error).message).toBe(`Invalid configuration: ${name} ${issue}`);
  });

  it('reads some settings alone through the same schemas', () => {
    expect(loadSettings(['officeWorkers'], { OFFICE_WORKERS: '3', PORT: 'not checked here' })).toEqual({ officeWorkers: 3 });
    expect(() => loadSettings(['officeWorkers'], { OFFICE_WORKERS: '0' })).toThrow(
      /^Invalid configuration: OFFICE_WORKERS must be between 1 and 64, got 0$/,
    );
  });
});

describe('a bad module setting stops', () => {
  it('the server: one line naming it, exit 1', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/main.ts'), 'api'], {
      cwd: ROOT,
      env: { ...process.env, PREVIEW_MEMORY_MB: '64' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toEqual(['Invalid configuration: PREVIEW_MEMORY_MB must be between 128 and 65536, got 64']);
  }, 60_000);

  it('the CLI: the same line, exit 2, before any work', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-cli-config-'));
    try {
      fs.writeFileSync(path.join(dir, 'a.md'), '# A\n');
      const local = await runCli(['convert', path.join(dir, 'a.md'), '--to', 'docx', '--out', dir], { env: { TSA_OPTIONAL: 'maybe' } });
      expect(local.code).toBe(2);
      expect(local.stderr).toContain('Invalid configuration: TSA_OPTIONAL must be true or false, got "maybe"');
      expect(fs.existsSync(path.join(dir, 'a.docx'))).toBe(false);
      // The default concurrency is OFFICE_WORKERS, read through its setting, not by hand.
      const jobs = await runCli(['convert', path.join(dir, 'a.md'), '--to', 'docx', '--out', dir], { env: { OFFICE_WORKERS: 'many' } });
      expect(jobs.code).toBe(2);
      expect(jobs.stderr).toContain('Invalid configuration: OFFICE_WORKERS must be an integer, got "many"');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
