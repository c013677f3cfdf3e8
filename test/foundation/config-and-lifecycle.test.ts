/** Configuration validation (README § Configuration), OpenAPI/docs, health, and SIGTERM draining of the real process. */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/index.js';
import { loadConfig } from '../../src/modules/config.js';
import { startTestApi, type TestApi } from '../helpers/api.js';

const root = path.resolve(import.meta.dirname, '../..');

function runMain(env: Record<string, string>, args: string[] = []) {
  return spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src/main.ts'), ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

describe('configuration', () => {
  it('has the contract defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ host: '127.0.0.1', port: 8080, ingestPort: 8081, logLevel: 'info' });
    expect(c.dataDir).toBe(path.resolve('./data'));
    expect(c.officeWorkers).toBeGreaterThanOrEqual(1);
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['INGEST_PORT', '-1'],
    ['DATABASE_URL', 'mysql://x'],
    ['TELEMETRY_DATABASE_URL', 'not a url'],
    ['REDIS_URL', 'http://x'],
    ['REDIS_KEY_PREFIX', 'has spaces'],
    ['SMTP_URL', 'ftp://x'],
    ['TSA_URL', 'file:///etc/passwd'],
    ['URL_FETCH_ALLOWLIST', 'host-without-port'],
    ['OFFICE_WORKERS', '0'],
    ['LOG_LEVEL', 'loud'],
    ['METRICS_PORT', 'x'],
    ['ADMIN_TOKEN', 'short'],
  ])('rejects %s=%s naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^Invalid configuration: ${name} `));
  });

  it('stops start-up with one line naming the bad variable', async () => {
    const child = runMain({ PORT: 'nope' });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toEqual(['Invalid configuration: PORT must be an integer, got "nope"']);
  });
});

describe('dependencies unreachable at start', () => {
  it.each([
    ['api', 'DATABASE_URL'],
    ['ingest', 'TELEMETRY_DATABASE_URL'],
  ])(
    '%s: an unreachable %s stops start-up with one line naming it (no password), exit 1',
    async (mode, variable) => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-nodb-'));
      const child = runMain({ PORT: '0', INGEST_PORT: '0', DATA_DIR: dataDir, [variable]: 'postgres://folio:s3cret@127.0.0.1:1/folio' }, [mode]);
      let stderr = '';
      let stdout = '';
      child.stderr.on('data', (d) => (stderr += d));
      child.stdout.on('data', (d) => (stdout += d));
      const code = await new Promise<number | null>((r) => child.on('exit', r));
      expect(code).toBe(1);
      const lines = stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`^Cannot start: ${variable}: PostgreSQL at 127\\.0\\.0\\.1:1/folio cannot be used \\(.*ECONNREFUSED`));
      expect(stderr + stdout).not.toContain('s3cret');
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
    60_000,
  );
});

describe('process lifecycle', () => {
  it('serves, then drains on SIGTERM and exits 0', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-life-'));
    const port = await freePort();
    const metricsPort = await freePort();
    const child = runMain({ PORT: String(port), METRICS_PORT: String(metricsPort), DATA_DIR: dataDir, LOG_LEVEL: 'info', OFFICE_WORKERS: '1' }, [
      'api',
    ]);
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    const deadline = Date.now() + 60_000;
    let health: Response | undefined;
    while (!health) {
      if (Date.now() > deadline) throw new Error(`server did not start: ${stdout}`);
      health = await fetch(`http://127.0.0.1:${port}/v1/health`).catch(() => undefined);
      if (!health) await new Promise((r) => setTimeout(r, 200));
    }
    expect(health.status).toBe(200);
    await fetch(`http://127.0.0.1:${port}/v1/nowhere`);

    // Prometheus metrics only on METRICS_PORT: counts and latency per route and status.
    const publicMetrics = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(publicMetrics.status).toBe(404);
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(metrics).toMatch(/folio_http_requests_total\{[^}]*route="\/v1\/health"[^}]*status="200"[^}]*\} [1-9]/);
    expect(metrics).toMatch(/folio_http_request_duration_seconds_bucket\{[^}]*status="404"/);
    expect(metrics).toContain('folio_http_in_flight_requests');
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    expect(code).toBe(0);
    expect(stdout).toContain('API listening');
    expect(stdout).toContain('draining in-flight requests');
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 90_000);
});

describe('draining', () => {
  it('lets an in-flight request finish after SIGTERM, refuses new ones, then exits 0', async () => {
    const { SMTPServer } = await import('smtp-server');
    // An SMTP server that takes 1.5 s to accept a message keeps a register request in flight.
    const smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, _s, cb) {
        stream.resume();
        stream.on('end', () => setTimeout(() => cb(), 1500));
      },
    });
    await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
    const smtpPort = (smtp.server.address() as net.AddressInfo).port;
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-drain-'));
    const port = await freePort();
    const child = runMain({ PORT: String(port), DATA_DIR: dataDir, SMTP_URL: `smtp://127.0.0.1:${smtpPort}`, LOG_LEVEL: 'warn' }, ['api']);
    const deadline = Date.now() + 60_000;
    while (!(await fetch(`http://127.0.0.1:${port}/v1/health`).catch(() => undefined))) {
      if (Date.now() > deadline) throw new Error('server did not start');
      await new Promise((r) => setTimeout(r, 200));
    }
    const inFlight = fetch(`http://127.0.0.1:${port}/v1/auth/register?email=drain@example.com`);
    await new Promise((r) => setTimeout(r, 500));
    const exited = new Promise<number | null>((r) => child.on('exit', r));
    child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    const late = await fetch(`http://127.0.0.1:${port}/v1/health`).catch((e: Error) => e);
    // A new request is either refused at the socket (listener closed) or answered 503 on a kept-alive one.
    if (!(late instanceof Error)) expect(late.status).toBe(503);
    const res = await inFlight;
    expect(res.status).toBe(200);
    // The answer finished while draining closes its socket, so the exit does not wait for keep-alive.
    expect(res.headers.get('connection')).toBe('close');
    expect(await exited).toBe(0);
    await new Promise<void>((r) => smtp.close(() => r()));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 90_000);
});

describe('health, OpenAPI and docs', () => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi();
  });
  afterAll(async () => t?.close());

  it('GET and HEAD /v1/health need no key and reveal no paths', async () => {
    const res = await fetch(`${t.url}/v1/health`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ status: 'healthy', version: '0.9.0', service: 'folio-api' });
    expect(Date.parse(body.timestamp as string)).not.toBeNaN();
    expect(body.instance).toMatchObject({ startTime: expect.any(String), uptimeSeconds: expect.any(Number) });
    expect(JSON.stringify(body)).not.toContain(t.dataDir);
    const head = await fetch(`${t.url}/v1/health`, { method: 'HEAD' });
    expect(head.status).toBe(200);
  });

  it('serves OpenAPI 3.1 at version 0.9.0 describing the registered routes, and /docs', async () => {
    const res = await fetch(`${t.url}/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as {
      openapi: string;
      info: { version: string };
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    expect(doc.openapi).toMatch(/^3\.1/);
    expect(doc.info.version).toBe('0.9.0');
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/v1/health', '/v1/auth/register', '/v1/auth/verify', '/v1/auth/keys', '/v1/auth/keys/{keyId}']),
    );
    expect(Object.keys(doc.paths['/v1/auth/keys/{keyId}']!.delete!.responses)).toEqual(expect.arrayContaining(['204', '401', '404']));
    const docs = await fetch(`${t.url}/docs`, { redirect: 'follow' });
    expect(docs.status).toBe(200);
    expect(await docs.text()).toMatch(/swagger/i);
  });
});
