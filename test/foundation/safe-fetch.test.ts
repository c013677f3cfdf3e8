/**
 * The URL fetcher behind every `document.url` and image URL (docs/api.md § Common rules): internal addresses refused,
 * also after DNS resolution and on redirects, allow-list honoured, redirect and size limits.
 */
import http from 'node:http';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SafeFetcher, isInternalAddress } from '../../src/fetch/safe-fetch.js';
import { decodeBase64Input, resolveDocumentSource } from '../../src/fetch/document-source.js';
import { FolioError } from '../../src/errors.js';

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'resolved';
  } catch (e) {
    expect(e).toBeInstanceOf(FolioError);
    return (e as FolioError).code;
  }
}

describe('internal address classification', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd12::3',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
  ])('%s is internal', (ip) => expect(isInternalAddress(ip)).toBe(true));
  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '93.184.216.34'])('%s is public', (ip) =>
    expect(isInternalAddress(ip)).toBe(false),
  );
});

describe('SafeFetcher against local servers', () => {
  let server: http.Server;
  let port: number;
  let hits = 0;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hits++;
      const u = new URL(req.url!, 'http://x');
      if (u.pathname === '/doc') return res.end('hello');
      if (u.pathname === '/big') {
        res.setHeader('content-length', String(26 * 1024 * 1024));
        return res.end();
      }
      if (u.pathname === '/stream-big') {
        const chunk = Buffer.alloc(1024 * 1024);
        let sent = 0;
        const push = () => {
          while (sent < 30 && res.write(chunk)) sent++;
          if (sent >= 30) res.end();
          else res.once('drain', push);
        };
        return push();
      }
      if (u.pathname === '/hop') {
        const n = Number(u.searchParams.get('n'));
        res.statusCode = 302;
        res.setHeader('location', n > 0 ? `/hop?n=${n - 1}` : '/doc');
        return res.end();
      }
      if (u.pathname === '/to-metadata') {
        res.statusCode = 302;
        res.setHeader('location', 'http://169.254.169.254/latest/meta-data/');
        return res.end();
      }
      if (u.pathname === '/missing') {
        res.statusCode = 404;
        return res.end();
      }
      res.statusCode = 500;
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('refuses loopback, metadata and private literals before connecting', async () => {
    const f = new SafeFetcher();
    const before = hits;
    expect(await codeOf(f.fetch(`http://127.0.0.1:${port}/doc`))).toBe('URL_NOT_ALLOWED');
    expect(await codeOf(f.fetch('http://169.254.169.254/latest/meta-data/'))).toBe('URL_NOT_ALLOWED');
    expect(await codeOf(f.fetch('http://[::1]/x'))).toBe('URL_NOT_ALLOWED');
    expect(await codeOf(f.fetch(`http://localhost:${port}/doc`))).toBe('URL_NOT_ALLOWED');
    expect(await codeOf(f.fetch('file:///etc/passwd'))).toBe('URL_NOT_ALLOWED');
    expect(await codeOf(f.fetch('ftp://example.com/x'))).toBe('URL_NOT_ALLOWED');
    expect(await codeOf(f.fetch('not a url'))).toBe('VALIDATION_ERROR');
    expect(hits).toBe(before);
    await f.close();
  });

  it('refuses a hostname that resolves to an internal address (checked after DNS)', async () => {
    const f = new SafeFetcher();
    const before = hits;
    // The machine's own name resolves to a loopback address through /etc/hosts.
    expect(await codeOf(f.fetch(`http://${os.hostname()}:${port}/doc`))).toBe('URL_NOT_ALLOWED');
    expect(hits).toBe(before);
    await f.close();
  });

  it('fetches an allow-listed internal host, follows ≤ 3 redirects, re-checks each hop', async () => {
    const f = new SafeFetcher({ allowlist: [`127.0.0.1:${port}`] });
    const ok = await f.fetch(`http://127.0.0.1:${port}/doc`);
    expect(Buffer.from(ok.bytes).toString()).toBe('hello');
    expect(Buffer.from((await f.fetch(`http://127.0.0.1:${port}/hop?n=2`)).bytes).toString()).toBe('hello');
    expect(await codeOf(f.fetch(`http://127.0.0.1:${port}/hop?n=3`))).toBe('URL_FETCH_FAILED');
    expect(await codeOf(f.fetch(`http://127.0.0.1:${port}/to-metadata`))).toBe('URL_NOT_ALLOWED');
    expect(await codeOf(f.fetch(`http://127.0.0.1:${port}/missing`))).toBe('URL_FETCH_FAILED');
    await f.close();
  });

  it('stops at 25 MB, from Content-Length or while streaming', async () => {
    const f = new SafeFetcher({ allowlist: [`127.0.0.1:${port}`] });
    expect(await codeOf(f.fetch(`http://127.0.0.1:${port}/big`))).toBe('FILE_TOO_LARGE');
    expect(await codeOf(f.fetch(`http://127.0.0.1:${port}/stream-big`))).toBe('FILE_TOO_LARGE');
    await f.close();
  });

  it('times out', async () => {
    const slow = http.createServer(() => undefined);
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', () => r()));
    const p = (slow.address() as AddressInfo).port;
    const f = new SafeFetcher({ allowlist: [`127.0.0.1:${p}`], timeoutMs: 300 });
    expect(await codeOf(f.fetch(`http://127.0.0.1:${p}/`))).toBe('URL_FETCH_FAILED');
    await f.close();
    slow.closeAllConnections();
    await new Promise<void>((r) => slow.close(() => r()));
  });
});

describe('document sources', () => {
  it('decodes raw base64 and data URIs, refuses bad base64, both or neither', async () => {
    expect(Buffer.from(decodeBase64Input('aGVsbG8=', 'd').bytes).toString()).toBe('hello');
    const d = decodeBase64Input('data:application/pdf;base64,aGVsbG8=', 'd');
    expect(d.mime).toBe('application/pdf');
    expect(Buffer.from(d.bytes).toString()).toBe('hello');
    expect(() => decodeBase64Input('not base64!!', 'document.base64')).toThrow(/not valid base64/);
    expect(() => decodeBase64Input('data:text/plain,hello', 'd')).toThrow(/base64/);
    const f = new SafeFetcher();
    expect(await codeOf(resolveDocumentSource({ base64: 'aGVsbG8=', url: 'http://x' }, f))).toBe('VALIDATION_ERROR');
    expect(await codeOf(resolveDocumentSource({}, f))).toBe('VALIDATION_ERROR');
    expect(await codeOf(resolveDocumentSource({ url: 'http://127.0.0.1/x' }, f))).toBe('URL_NOT_ALLOWED');
    await f.close();
  });

  it('refuses more than 25 MB of base64 without decoding it', () => {
    const big = 'A'.repeat(Math.ceil((26 * 1024 * 1024 * 4) / 3));
    expect(() => decodeBase64Input(big, 'document.base64')).toThrow(FolioError);
    try {
      decodeBase64Input(big, 'document.base64');
    } catch (e) {
      expect((e as FolioError).code).toBe('FILE_TOO_LARGE');
    }
  });
});
