/**
 * Structured logs (issue 2): one line per request with id, method, route pattern, status and duration, and
 * never an API key, a verification code, a query string, a file name or document content.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/modules/config.js';
import { createLogger } from '../../src/logger.js';
import { buildApi, type RunningApi } from '../../src/api.js';
import { startTestSmtp, codeFrom, type TestSmtp } from '../helpers/smtp.js';

describe('request logs', () => {
  const lines: string[] = [];
  let api: RunningApi;
  let url: string;
  let smtp: TestSmtp;
  let dataDir: string;

  beforeAll(async () => {
    smtp = await startTestSmtp();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-logs-'));
    const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'info', SMTP_URL: smtp.url });
    const logger = createLogger('info', 'folio', { write: (s: string) => void lines.push(s) });
    api = await buildApi({ config, logger, withoutOffice: true });
    await api.app.listen({ host: '127.0.0.1', port: 0 });
    url = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await api?.close();
    await smtp?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('writes id, route, status and duration, and no key, code, query, file name or content', async () => {
    const email = 'logged.person@example.com';
    expect((await fetch(`${url}/v1/auth/register?email=${email}`)).status).toBe(200);
    const code = codeFrom(await smtp.waitFor(email));
    const verified = await fetch(`${url}/v1/auth/verify?email=${email}&code=${code}`, { headers: { 'x-request-id': 'trace-verify-1' } });
    const { apiKey } = (await verified.json()) as { apiKey: string };
    const wrongKey = `${apiKey.slice(0, -3)}zzz`;
    expect((await fetch(`${url}/v1/auth/keys`, { headers: { authorization: `Bearer ${wrongKey}` } })).status).toBe(401);
    const secretText = 'Confidential merger terms for Project Zebra';
    const form = new FormData();
    form.append('file', new Blob([`# ${secretText}\n`]), 'zebra-merger-plan.md');
    const converted = await fetch(`${url}/v1/convert?from=md&to=docx`, {
      method: 'POST',
      body: form,
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(converted.status).toBe(200);
    await new Promise((r) => setTimeout(r, 50));

    const text = lines.join('');
    const records = lines
      .flatMap((l) => l.split('\n'))
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const verifyLine = records.find((r) => r.reqId === 'trace-verify-1');
    expect(verifyLine).toMatchObject({ method: 'GET', route: '/v1/auth/verify', status: 200 });
    expect(typeof verifyLine!.ms).toBe('number');
    expect(records.find((r) => r.route === '/v1/convert')).toMatchObject({ method: 'POST', status: 200 });
    expect(records.find((r) => r.route === '/v1/auth/keys')).toMatchObject({ status: 401 });
    for (const secret of [apiKey, apiKey.slice(9, 30), wrongKey, code, secretText, 'Zebra', 'zebra-merger-plan', email, 'code=']) {
      expect(text).not.toContain(secret);
    }
  });
});
