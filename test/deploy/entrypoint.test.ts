/**
 * deploy/entrypoint.sh outside a container, with the container's environment: it starts the API
 * (`entrypoint.sh api`), turns *_FILE secrets into variables (the signing key's password from a file, as the
 * Kubernetes Secret volume and the compose secret provide it), answers /v1/health, converts, signs with the
 * mounted key, passes deploy/healthcheck.mjs, and exits 0 on SIGTERM. The script runs from a copy laid out
 * as in the image (/app/deploy/entrypoint.sh beside /app/dist), with dist/ the compiled build.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, serverEntry } from '../adversarial/server.js';
import { convert, makeSigningKey, newKey, ROOT, SAMPLE_MARKDOWN, waitHealthy } from './support.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-entrypoint-'));
const app = path.join(tmp, 'app');
const entry = serverEntry();
const compiled = entry.args.length === 1 ? entry.args[0]! : undefined;

function layOut(): void {
  fs.mkdirSync(path.join(app, 'deploy'), { recursive: true });
  for (const f of ['entrypoint.sh', 'healthcheck.mjs']) fs.copyFileSync(path.join(ROOT, 'deploy', f), path.join(app, 'deploy', f));
  fs.chmodSync(path.join(app, 'deploy/entrypoint.sh'), 0o755);
  // dist/src/main.js → the compiled build; Node resolves packages from the real path (the repository's node_modules).
  fs.symlinkSync(path.dirname(path.dirname(compiled!)), path.join(app, 'dist'));
}

/** The container's variables (Dockerfile ENV + the ConfigMap), on loopback and a free port. */
async function containerEnv(dataDir: string): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  for (const k of ['PATH', 'HOME', 'LANG', 'TMPDIR']) if (process.env[k] !== undefined) env[k] = process.env[k]!;
  return {
    ...env,
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(await freePort()),
    INGEST_PORT: String(await freePort()),
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    OFFICE_WORKERS: '1',
    ENGINE_WORKERS: '1',
    OFFICE_TIMEOUT_MS: '60000',
  };
}

function run(args: string[], env: Record<string, string>): { child: ChildProcess; log: () => string; exit: Promise<number | null> } {
  let log = '';
  const child = spawn(path.join(app, 'deploy/entrypoint.sh'), args, { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-6000)));
  child.stderr!.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-6000)));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, log: () => log, exit };
}

const killGroup = (c: ChildProcess) => {
  try {
    process.kill(-c.pid!, 'SIGKILL');
  } catch {
    /* gone */
  }
};

describe.skipIf(!compiled)(`deploy/entrypoint.sh (${entry.label})`, () => {
  let server: ReturnType<typeof run> | undefined;
  let env: Record<string, string>;
  let url: string;
  let dataDir: string;
  const key = makeSigningKey(path.join(tmp, 'secrets'));

  beforeAll(async () => {
    layOut();
    dataDir = path.join(tmp, 'data');
    env = {
      ...(await containerEnv(dataDir)),
      SIGNING_P12: key.p12,
      SIGNING_P12_PASSWORD_FILE: key.passwordFile,
    };
    url = `http://127.0.0.1:${env.PORT}`;
    server = run(['api'], env);
    const s = server;
    await waitHealthy(url, 150_000, () => s.child.exitCode === null, s.log);
  }, 180_000);

  afterAll(() => {
    if (server) killGroup(server.child);
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('answers /v1/health 200 and the image health check passes; it fails on a closed port', () => {
    const ok = spawnSync(process.execPath, [path.join(app, 'deploy/healthcheck.mjs')], { env, encoding: 'utf8', timeout: 20_000 });
    expect(ok.status, ok.stderr).toBe(0);
    const closed = spawnSync(process.execPath, [path.join(app, 'deploy/healthcheck.mjs')], {
      env: { ...env, PORT: '1' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(closed.status).toBe(1);
    expect(closed.stderr).toMatch(/health: \/v1\/health failed/);
  });

  it('converts md→docx and signs with the key whose password came from SIGNING_P12_PASSWORD_FILE', async () => {
    const apiKey = await newKey(url, path.join(dataDir, 'outbox'));
    const docx = await convert(url, apiKey, 'from=md&to=docx', 'report.md', Buffer.from(SAMPLE_MARKDOWN));
    expect(docx.status).toBe(200);
    expect(docx.body.subarray(0, 2).toString()).toBe('PK');
    const k = await fetch(`${url}/v1/verify/key`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(k.status).toBe(200);
    expect(((await k.json()) as { subject: string }).subject).toContain(key.subject);
  }, 120_000);

  it('SIGTERM: drains and exits 0 (node is exec’d, so the signal reaches it)', async () => {
    const s = server!;
    process.kill(s.child.pid!, 'SIGTERM');
    const code = await Promise.race([s.exit, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 60_000))]);
    expect(code, s.log()).toBe(0);
    server = undefined;
  }, 90_000);

  it('refuses VAR and VAR_FILE together, and an unreadable VAR_FILE, naming the variable', async () => {
    const both = run(['api'], { ...env, DATABASE_URL: 'postgres://x@127.0.0.1/x', DATABASE_URL_FILE: key.passwordFile });
    expect(await both.exit).toBe(1);
    expect(both.log()).toMatch(/Invalid configuration: DATABASE_URL and DATABASE_URL_FILE are both set/);
    const missing = run(['api'], { ...env, ADMIN_TOKEN_FILE: path.join(tmp, 'absent') });
    expect(await missing.exit).toBe(1);
    expect(missing.log()).toMatch(/ADMIN_TOKEN_FILE .* is not a readable file/);
  });

  it('any other first argument runs as a command', async () => {
    const other = run(['node', '-e', 'console.log("ran " + process.env.SIGNING_P12_PASSWORD?.length)'], env);
    expect(await other.exit).toBe(0);
    expect(other.log()).toMatch(/ran \d+/);
  });
});
