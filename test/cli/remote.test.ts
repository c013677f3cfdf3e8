/**
 * `folio --server URL` end to end against a real API started by the test (a child process, its own data
 * folder, a key obtained through register → e-mailed code → verify): keys list, convert of a folder with a
 * broken file, sign and verify (exit codes), and errors printed with their code and request id.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { FolioProcess, freePort } from '../adversarial/server.js';
import { batchFolder, cliEntry, isPdf, ROOT, runCli, tamper, tempDir, WORD_PDF } from './helpers.js';

let server: FolioProcess;
let key: string;
let dir: string;

beforeAll(async () => {
  dir = tempDir('remote');
  server = await FolioProcess.start({ OFFICE_WORKERS: '1', ENGINE_WORKERS: '1', OFFICE_MEMORY_MB: '1024' }, 150_000);
  key = await server.newKey();
}, 180_000);

afterAll(async () => {
  await server?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const remote = (args: string[], env: Record<string, string> = {}) =>
  runCli(['--server', server.url, ...args], { env: { FOLIO_API_KEY: key, ...env } });

describe('folio --server (remote mode)', () => {
  it('keys list: the calling key, marked current (key from FOLIO_API_KEY or --key)', async () => {
    const r = await remote(['keys', 'list']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^key id\s+created\s+last used\s+revoked\s+current/);
    expect(r.stdout).toMatch(/\nkey_\S+\s+\S+.*\s+yes\n/);
    const j = await runCli(['keys', 'list', '--json', '--server', server.url, '--key', key]);
    expect((JSON.parse(j.stdout) as { keys: Array<{ current: boolean }> }).keys.filter((k) => k.current)).toHaveLength(1);
  });

  it('prints the contract error code and the request id on one line', async () => {
    const r = await runCli(['--server', server.url, '--key', `folio_sk_${'A'.repeat(38)}`, 'keys', 'list']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^folio: AUTHENTICATION_ERROR: .+ \[request id [\w-]+\]$/m);
    const nokey = await runCli(['--server', server.url, 'keys', 'list']);
    expect(nokey.code).toBe(2);
    expect(nokey.stderr).toContain('FOLIO_API_KEY');
  });

  it('converts a folder with one broken file through the API: the others convert, the summary names it, exit 1', async () => {
    const input = path.join(dir, 'batch');
    const out = path.join(dir, 'out');
    const { valid, broken } = batchFolder(input);
    const r = await remote(['convert', input, '--out', out, '--jobs', '2']);
    expect(r.code, r.stderr).toBe(1);
    for (const stem of valid) expect(isPdf(path.join(out, `${stem}.pdf`)), stem).toBe(true);
    expect(r.stdout).toMatch(/FAIL {2}\S*poi--truncated62886\.docx: INVALID_FILE_FORMAT: .*\[request id [\w-]+\]/);
    expect(r.stderr).toMatch(new RegExp(`converted 3 of 4 documents .*; 1 failed:\\n {2}\\S*${broken.replace(/\./g, '\\.')}: INVALID_FILE_FORMAT`));
  }, 150_000);

  it('signs through the API; verify exits 0 on the signed PDF and 1 on a tampered copy', async () => {
    const pdf = path.join(dir, 'doc.pdf');
    fs.copyFileSync(
      path.join(
        WORD_PDF,
        fs.readdirSync(WORD_PDF).find((f) => f.endsWith('.pdf'))!,
      ),
      pdf,
    );
    const signed = path.join(dir, 'doc.signed.pdf');
    const s = await remote(['sign', pdf, '--name', 'Grace Hopper', '--email', 'grace@example.com', '-o', signed]);
    expect(s.code, s.stderr).toBe(0);

    const ok = await remote(['verify', signed]);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/VALID — TOTAL_PASSED/);
    expect(ok.stdout).toContain('signed by Grace Hopper <grace@example.com>');

    const tampered = path.join(dir, 'doc.tampered.pdf');
    tamper(signed, tampered);
    const bad = await remote(['verify', tampered, '--json']);
    expect(bad.code).toBe(1);
    expect((JSON.parse(bad.stdout) as { valid: boolean; indication: string }).indication).toBe('TOTAL_FAILED');
  }, 120_000);

  it('serve runs the API and the ingest; usage reads the ingest report; SIGTERM exits 0', async () => {
    const [port, ingestPort] = [await freePort(), await freePort()];
    const token = 'cli-test-admin-token-0123456789';
    const child = spawn(
      process.execPath,
      [...cliEntry(), 'serve', '--port', String(port), '--ingest-port', String(ingestPort), '--data-dir', path.join(dir, 'serve')],
      {
        cwd: ROOT,
        env: { ...process.env, HOST: '127.0.0.1', ADMIN_TOKEN: token, OFFICE_WORKERS: '1', ENGINE_WORKERS: '1', LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      // `serve` starts the API, then the ingest: both must answer before the ingest is asked for usage.
      const status = (p: number) =>
        fetch(`http://127.0.0.1:${p}/v1/health`).then(
          (r) => r.status,
          () => 0,
        );
      let health = [0, 0];
      for (let i = 0; i < 240 && health.some((h) => h !== 200); i++) {
        await new Promise((r) => setTimeout(r, 500));
        health = await Promise.all([status(port), status(ingestPort)]);
      }
      expect(health).toEqual([200, 200]);
      const usage = await runCli([
        'usage',
        '--ingest',
        `http://127.0.0.1:${ingestPort}`,
        '--admin-token',
        token,
        '--license-key',
        'cli-test',
        '--month',
        '2026-01',
      ]);
      expect(usage.code, usage.stderr).toBe(0);
      expect(usage.stdout).toMatch(/cli-test\s+2026-01\s+0\s+0\s+-/);
      const denied = await runCli([
        'usage',
        '--ingest',
        `http://127.0.0.1:${ingestPort}`,
        '--admin-token',
        'wrong-token-wrong-token',
        '--license-key',
        'x',
      ]);
      expect(denied.code).toBe(1);
      expect(denied.stderr).toMatch(/^folio: AUTHENTICATION_ERROR: .* \[request id [\w-]+\]$/m);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  }, 150_000);
});
