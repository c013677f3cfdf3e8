/**
 * Starts the real API (real SQLite or PostgreSQL, real engines) on a free port with a temporary DATA_DIR
 * and issues an API key directly through the auth service, for HTTP-level tests of every capability.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { loadConfig } from '../../src/modules/config.js';
import { buildApi, type RunningApi } from '../../src/api.js';
import type { Services } from '../../src/services.js';

export interface TestApi {
  url: string;
  apiKey: string;
  keyId: string;
  services: Services;
  api: RunningApi;
  dataDir: string;
  close(): Promise<void>;
}

export interface TestApiOptions {
  /** Extra environment (README § Configuration names), e.g. { SMTP_URL, DATABASE_URL, TSA_URL }. */
  env?: Record<string, string>;
  /** Start the LibreOffice pool (slow to warm; only for tests that convert). */
  office?: boolean;
  /** Keep this data dir (e.g. to reuse a generated signing identity). */
  dataDir?: string;
  email?: string;
}

export async function startTestApi(opts: TestApiOptions = {}): Promise<TestApi> {
  const dataDir = opts.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'folio-test-'));
  const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent', OFFICE_WORKERS: '1', ...opts.env });
  const logger = pino({ level: process.env.FOLIO_TEST_LOG ?? 'silent' });
  const api = await buildApi({ config, logger, withoutOffice: !opts.office });
  await api.app.listen({ host: '127.0.0.1', port: 0 });
  const port = (api.app.server.address() as AddressInfo).port;
  const issued = await api.services.auth.issueKey(opts.email ?? 'tester@example.com');
  return {
    url: `http://127.0.0.1:${port}`,
    apiKey: issued.apiKey,
    keyId: issued.keyId,
    services: api.services,
    api,
    dataDir,
    async close() {
      await api.close();
      if (!opts.dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** fetch with the API key. */
export function authed(t: TestApi, init: RequestInit = {}): RequestInit {
  return { ...init, headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${t.apiKey}` } };
}
