/**
 * FolioClient in a real browser: headless Chromium (Debian `chromium`, driven by playwright-core) loads a page
 * that imports the built browser bundle (packages/client/dist/folio-client.min.js) from a local server, which
 * also plays the API on the same origin. Checked in the page: a 503 + Retry-After is retried after at least
 * that long; a Blob upload retried after a 503 re-sends the same bytes; with retries off a 429 is a
 * FolioRateLimitError (the bundle's class) carrying code, requestId and retryAfter; an abort during a back-off
 * sleep rejects at once with AbortError; a per-attempt timeout is a FolioTimeoutError; a `{ path }` upload is
 * refused as UNSUPPORTED_ENVIRONMENT before anything is sent.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelope, filePart, okJson, scriptedServer, type ScriptedServer } from './local-server.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BUNDLE = path.join(ROOT, 'packages/client/dist/folio-client.min.js');
const CHROMIUM = '/usr/bin/chromium';

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>FolioClient</title></head><body><script type="module">
import * as lib from '/folio-client.min.js';
window.lib = lib;
window.ready = true;
</script></body></html>`;

/** Per-test behaviour of the API paths, chosen by the path's first segment after /api/. */
const counters = new Map<string, number>();
let server: ScriptedServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  if (!fs.existsSync(BUNDLE)) {
    const r = spawnSync(process.execPath, [path.join(ROOT, 'packages/client/build.mjs')], { stdio: 'inherit' });
    if (r.status !== 0) throw new Error('building @folio/client failed');
  }
  const bundle = fs.readFileSync(BUNDLE);
  server = await scriptedServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    if (url.pathname === '/') return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    if (url.pathname === '/folio-client.min.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
    // The API, under /<scenario>/v1/…
    const scenario = url.pathname.split('/')[1]!;
    const n = counters.get(scenario) ?? 0;
    counters.set(scenario, n + 1);
    const arrival = server.arrivals[server.arrivals.length - 1]!;
    switch (scenario) {
      case 'busy-once':
        return n === 0 ? envelope(res, 503, 'SERVICE_UNAVAILABLE', { 'retry-after': '1' }) : okJson(res, { keys: [] });
      case 'upload': {
        const hash = createHash('sha256')
          .update(filePart(arrival) ?? Buffer.alloc(0))
          .digest('hex');
        if (n === 0) return envelope(res, 503, 'SERVICE_UNAVAILABLE', { 'retry-after': '1' }, [{ field: 'sha256', issue: hash }]);
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-disposition': 'attachment; filename="a.pdf"' });
        return void res.end(hash);
      }
      case 'limited':
        return envelope(res, 429, 'RATE_LIMIT_ERROR', { 'retry-after': '1' });
      case 'long-wait':
        return envelope(res, 503, 'SERVICE_UNAVAILABLE', { 'retry-after': '20' });
      case 'slow':
        return void setTimeout(() => okJson(res, { keys: [] }), 3000);
      default:
        res.writeHead(404).end();
    }
  });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  page = await browser.newPage();
  await page.goto(server.url + '/');
  await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const at = (scenario: string) => server.arrivals.filter((a) => a.url.startsWith(`/${scenario}/`));

describe.skipIf(!fs.existsSync(CHROMIUM))('FolioClient in Chromium (the browser bundle)', () => {
  it('retries a 503 after at least Retry-After', async () => {
    const keys = await page.evaluate(async (base) => {
      const { FolioClient } = (window as any).lib;
      return new FolioClient({ baseUrl: base, apiKey: 'k', retry: { baseDelayMs: 10 } }).listKeys();
    }, `${server.url}/busy-once`);
    expect(keys).toEqual([]);
    const a = at('busy-once');
    expect(a).toHaveLength(2);
    expect(a[1]!.at - a[0]!.at).toBeGreaterThanOrEqual(950);
    expect(a[1]!.headers['x-request-id']).toBe(`${a[0]!.headers['x-request-id']}.2`);
  }, 30_000);

  it('re-sends the same bytes of a Blob upload after a 503', async () => {
    const r = await page.evaluate(async (base) => {
      const { FolioClient } = (window as any).lib;
      const bytes = new Uint8Array(300_000);
      for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919) % 251;
      const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
      const hex = Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
      const events: Array<{ details: unknown }> = [];
      const out = await new FolioClient({ baseUrl: base, apiKey: 'k', retry: { baseDelayMs: 10 } }).convert(new File([bytes], 'in.docx'), {
        onRetry: (e: { error: { details: unknown } }) => events.push({ details: e.error.details }),
      });
      return { hex, echoed: new TextDecoder().decode(out.bytes), filename: out.filename, events };
    }, `${server.url}/upload`);
    expect(r.echoed).toBe(r.hex);
    expect(r.filename).toBe('a.pdf');
    expect(r.events).toEqual([{ details: [{ field: 'sha256', issue: r.hex }] }]);
    expect(at('upload')).toHaveLength(2);
    expect(String(at('upload')[0]!.headers['content-type'])).toMatch(/^multipart\/form-data; boundary=/);
  }, 30_000);

  it('with retries off, a 429 is the bundle’s FolioRateLimitError with the envelope', async () => {
    const e = await page.evaluate(async (base) => {
      const { FolioClient, FolioRateLimitError, FolioApiError } = (window as any).lib;
      try {
        await new FolioClient({ baseUrl: base, apiKey: 'k', retry: false }).verify({ base64: 'AA==' }, { requestId: 'in-the-browser' });
        return null;
      } catch (err: any) {
        return {
          rateLimit: err instanceof FolioRateLimitError,
          api: err instanceof FolioApiError,
          name: err.name,
          status: err.status,
          code: err.code,
          requestId: err.requestId,
          retryAfter: err.retryAfter,
          attempts: err.attempts,
        };
      }
    }, `${server.url}/limited`);
    expect(e).toEqual({
      rateLimit: true,
      api: true,
      name: 'FolioRateLimitError',
      status: 429,
      code: 'RATE_LIMIT_ERROR',
      requestId: 'in-the-browser',
      retryAfter: 1,
      attempts: 1,
    });
  });

  it('an abort during the back-off sleep rejects at once with AbortError', async () => {
    const r = await page.evaluate(async (base) => {
      const { FolioClient } = (window as any).lib;
      const ctrl = new AbortController();
      let abortedAt = 0;
      const client = new FolioClient({ baseUrl: base, apiKey: 'k', retry: { maxDelayMs: 60_000 } });
      const p = client.listKeys({
        signal: ctrl.signal,
        onRetry: () =>
          setTimeout(() => {
            abortedAt = performance.now();
            ctrl.abort();
          }, 100),
      });
      try {
        await p;
        return null;
      } catch (err: any) {
        return { name: err.name, ms: performance.now() - abortedAt };
      }
    }, `${server.url}/long-wait`);
    expect(r?.name).toBe('AbortError');
    expect(r!.ms).toBeLessThan(1000);
    expect(at('long-wait')).toHaveLength(1);
  }, 30_000);

  it('a per-attempt timeout is a FolioTimeoutError', async () => {
    const r = await page.evaluate(async (base) => {
      const { FolioClient, FolioTimeoutError } = (window as any).lib;
      try {
        await new FolioClient({ baseUrl: base, apiKey: 'k', timeoutMs: 300, retry: false }).listKeys();
        return null;
      } catch (err: any) {
        return { timeoutError: err instanceof FolioTimeoutError, code: err.code, timeout: err.timeout, status: err.status };
      }
    }, `${server.url}/slow`);
    expect(r).toEqual({ timeoutError: true, code: 'CLIENT_TIMEOUT', timeout: 'attempt', status: 0 });
  }, 30_000);

  it('refuses a { path } upload in the browser before sending anything', async () => {
    const before = server.arrivals.length;
    const r = await page.evaluate(async (base) => {
      const { FolioClient, FolioClientError } = (window as any).lib;
      try {
        await new FolioClient({ baseUrl: base, apiKey: 'k' }).convert({ path: '/etc/hostname' });
        return null;
      } catch (err: any) {
        return { clientError: err instanceof FolioClientError, code: err.code };
      }
    }, `${server.url}/nowhere`);
    expect(r).toEqual({ clientError: true, code: 'UNSUPPORTED_ENVIRONMENT' });
    expect(server.arrivals.length).toBe(before);
  });
});
