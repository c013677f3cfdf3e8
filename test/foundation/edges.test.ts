/**
 * Edge cases found by probing a running service: IPv6 spellings of internal IPv4 addresses, fetch
 * time-outs, a multipart upload with two files, JSON keys named `constructor`, and the API's answer to
 * oversized headers.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SafeFetcher, isInternalAddress } from '../../src/fetch/safe-fetch.js';
import { parseJsonBody } from '../../src/http/json-body.js';
import { FolioError } from '../../src/errors.js';
import { startTestApi, type TestApi } from '../helpers/api.js';

async function failure(p: Promise<unknown>): Promise<FolioError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(FolioError);
    return e as FolioError;
  }
  throw new Error('expected a FolioError');
}

describe('IPv6 addresses that carry an internal IPv4 address are internal', () => {
  it.each([
    '::127.0.0.1', // IPv4-compatible
    '::7f00:1',
    '::10.0.0.1',
    '::ffff:127.0.0.1', // IPv4-mapped, every spelling
    '::ffff:7f00:1',
    '::FFFF:7F00:0001',
    '0:0:0:0:0:ffff:127.0.0.1',
    '0000:0000:0000:0000:0000:ffff:7f00:0001',
    '::ffff:169.254.169.254',
    '::ffff:0:127.0.0.1', // SIIT
    '64:ff9b::127.0.0.1', // NAT64 mapping an internal v4
    '64:ff9b::a9fe:a9fe',
    '64:ff9b:1::1', // local-use NAT64
    '2002:7f00:1::1', // 6to4 of 127.0.0.1
    '2002:c0a8:101::', // 6to4 of 192.168.1.1
    '2001:0:4136:e378::1', // Teredo
    'fe80::1%eth0',
    'fec0::1',
  ])('%s', (ip) => expect(isInternalAddress(ip)).toBe(true));

  it.each(['::ffff:8.8.8.8', '64:ff9b::8.8.8.8', '2002:808:808::1', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e'])('%s is public', (ip) =>
    expect(isInternalAddress(ip)).toBe(false),
  );

  it.each([
    'http://[::127.0.0.1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[0:0:0:0:0:ffff:7f00:1]:8080/',
    'http://[64:ff9b::7f00:1]/',
    'http://[2002:7f00:1::]/',
  ])('%s is refused before any connection with URL_NOT_ALLOWED', async (url) => {
    const fetcher = new SafeFetcher();
    try {
      const e = await failure(fetcher.fetch(url));
      expect(e.code).toBe('URL_NOT_ALLOWED');
      expect(e.status).toBe(400);
    } finally {
      await fetcher.close();
    }
  });
});

describe('fetch time-outs', () => {
  let server: http.Server;
  let port: number;
  beforeAll(async () => {
    // Answers nothing (headers stall), or headers then a body that stalls.
    server = http.createServer((req, res) => {
      if (req.url === '/slow-body') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('first bytes');
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it.each(['/no-answer', '/slow-body'])('%s is reported as a time-out with URL_FETCH_FAILED', async (path) => {
    const fetcher = new SafeFetcher({ allowlist: [`127.0.0.1:${port}`], timeoutMs: 700 });
    try {
      const started = Date.now();
      const e = await failure(fetcher.fetch(`http://127.0.0.1:${port}${path}`));
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(e.code).toBe('URL_FETCH_FAILED');
      expect(e.status).toBe(422);
      expect(e.message).toBe('document.url could not be fetched: timed out after 0.7 s');
      expect(e.details).toEqual([{ field: 'document.url', issue: 'timed out' }]);
    } finally {
      await fetcher.close();
    }
  });
});

describe('JSON keys that can reach a prototype are refused, others are data', () => {
  it.each([
    ['{"a":1,"__proto__":{"polluted":true}}', '__proto__'],
    ['{"audit":[{"x":{"__proto__":{"p":1}}}]}', 'audit[0].x.__proto__'],
    ['{"\\u005f_proto__":{"p":1}}', '__proto__'],
    ['{"constructor":{"prototype":{"p":1}}}', 'constructor.prototype'],
    ['{"a":{"constructor":{"prototype":null}}}', 'a.constructor.prototype'],
  ])('%s', (text, field) => {
    try {
      parseJsonBody(text);
      throw new Error('expected a refusal');
    } catch (e) {
      expect(e).toBeInstanceOf(FolioError);
      expect((e as FolioError).code).toBe('VALIDATION_ERROR');
      expect((e as FolioError).details?.[0]?.field).toBe(field);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each([
    '{"constructor":"Acme Ltd"}',
    '{"audit":[{"event":"signed","constructor":"new Signer()"}]}',
    '{"data":{"constructor":{"name":"builder","steps":3}}}',
    '{"text":"\\"__proto__\\": is only a string here"}',
    '{"prototype":{"constructor":1}}',
  ])('%s is accepted as is', (text) => {
    expect(parseJsonBody(text)).toEqual(JSON.parse(text));
  });
});

describe('over HTTP', () => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a multipart upload with two files answers 400 VALIDATION_ERROR naming the field', async () => {
    for (const second of ['file', 'other']) {
      const form = new FormData();
      form.append('file', new Blob(['# one']), 'a.md');
      form.append(second, new Blob(['# two']), 'b.md');
      const res = await fetch(`${t.url}/v1/convert?from=md&to=docx`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.apiKey}` },
        body: form,
      });
      expect(res.status, second).toBe(400);
      const body = (await res.json()) as { code: string; details?: Array<{ field: string; issue: string }> };
      expect(body.code).toBe('VALIDATION_ERROR');
      expect(body.details).toEqual([{ field: 'file', issue: 'more than one file' }]);
    }
  });

  it('a legitimate "constructor" key in a JSON body is not refused by the parser', async () => {
    const res = await fetch(`${t.url}/v1/verify`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ constructor: 'Acme', document: { base64: 'JVBERi0=' } }),
    });
    const body = (await res.json()) as { code?: string; details?: Array<{ issue: string }> };
    // Whatever the route makes of the body, it is not the prototype guard's refusal.
    expect(JSON.stringify(body)).not.toMatch(/forbidden key|constructor\.prototype/);
  });

  it('oversized request headers get 431 with the error envelope', async () => {
    const res = await rawExchange(t.url, `GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`);
    expect(res.status).toBe(431);
    expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', error: 'Request Header Fields Too Large' });
    expect(typeof res.body.requestId).toBe('string');
  });
});

/** Sends raw bytes and parses the status line and JSON body of the answer (the server closes the connection). */
export async function rawExchange(baseUrl: string, request: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const net = await import('node:net');
  const u = new URL(baseUrl);
  const text = await new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    const s = net.connect(Number(u.port), u.hostname, () => s.write(request));
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    s.on('error', (e) => (chunks.length ? resolve(Buffer.concat(chunks).toString('utf8')) : reject(e)));
  });
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
  const body = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
  return { status, body };
}
