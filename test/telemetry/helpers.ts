/** Starts the real ingest (real SQLite in a temp DATA_DIR, or PostgreSQL) on a free port for HTTP tests. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { Registry } from 'prom-client';
import { loadConfig } from '../../src/modules/config.js';
import { createIngest, type Ingest } from '../../src/telemetry/index.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface TestIngest {
  url: string;
  ingest: Ingest;
  registry: Registry;
  dataDir: string;
  /** Moves the server clock (billing month is by receive time). */
  clock: { now: number | undefined };
  close(): Promise<void>;
}

export interface SeenRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  status?: number;
  responseHeaders?: Record<string, unknown>;
}

/** `seen`, when given, receives every request the ingest answered (method, headers, status, response headers). */
export async function startTestIngest(env: Record<string, string> = {}, seen?: SeenRequest[]): Promise<TestIngest> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-ingest-test-'));
  const config = loadConfig({ HOST: '127.0.0.1', INGEST_PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent', ADMIN_TOKEN, ...env });
  const registry = new Registry();
  const clock: { now: number | undefined } = { now: undefined };
  const ingest = await createIngest({
    config,
    logger: pino({ level: process.env.FOLIO_TEST_LOG ?? 'silent' }),
    registry,
    now: () => clock.now ?? Date.now(),
  });
  if (seen) {
    ingest.app.addHook('onResponse', (request, reply, done) => {
      seen.push({
        method: request.method,
        url: request.url,
        headers: { ...request.headers },
        status: reply.statusCode,
        responseHeaders: reply.getHeaders(),
      });
      done();
    });
  }
  await ingest.app.listen({ host: '127.0.0.1', port: 0 });
  const port = (ingest.app.server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    ingest,
    registry,
    dataDir,
    clock,
    async close() {
      await ingest.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export function event(documentId: string | null, extra: Record<string, unknown> = {}) {
  return { timestamp: new Date().toISOString(), documentId, documentCreatedAt: '2024-01-15T10:30:00Z', ...extra };
}

export function payload(events: unknown[], extra: Record<string, unknown> = {}) {
  return {
    libraryVersion: '0.9.0',
    browserInfo: {
      userAgent: 'Mozilla/5.0 (test)',
      currentUrl: 'https://app.example.com/editor/42?token=secret#frag',
      hostname: 'app.example.com',
      screenSize: { width: 1920, height: 1080 },
    },
    events,
    ...extra,
  };
}

export async function collect(t: TestIngest, body: unknown, licenseKey: string | null = 'lic_test', headers: Record<string, string> = {}) {
  const h: Record<string, string> = { 'content-type': 'application/json', ...headers };
  if (licenseKey !== null) h['x-license-key'] = licenseKey;
  const res = await fetch(`${t.url}/v1/collect`, {
    method: 'POST',
    headers: h,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, headers: res.headers, text };
}

export async function usage(t: TestIngest, query: string, token: string | null = ADMIN_TOKEN) {
  const res = await fetch(`${t.url}/v1/usage?${query}`, { headers: token === null ? {} : { authorization: `Bearer ${token}` } });
  const text = await res.text();
  return { status: res.status, text, json: res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined, headers: res.headers };
}

export async function metricValue(t: TestIngest, name: string, labels: Record<string, string> = {}): Promise<number> {
  const m = await t.registry.getSingleMetric(name)?.get();
  const v = m?.values.find((x) => Object.entries(labels).every(([k, val]) => (x.labels as Record<string, unknown>)[k] === val));
  return v?.value ?? 0;
}
