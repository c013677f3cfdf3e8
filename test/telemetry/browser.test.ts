/**
 * @folio/client in a real browser: headless Chromium (Debian `chromium`, driven by playwright-core) loads a
 * page served from this process on one origin, imports the built browser bundle, opens DOCX files, and
 * reports to the real ingest on another origin (so the CORS preflight is exercised). Checked: exactly one
 * event with the expected documentId, no cookies, the preflight answered; nothing when disabled; an open that
 * succeeds when the ingest is down or never answers; the same identity results as in Node.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import { build } from 'esbuild';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CORPUS_DOCX as CORPUS } from '../helpers/corpus.js';
import { startTestIngest, type SeenRequest, type TestIngest } from './helpers.js';

const root = path.resolve(import.meta.dirname, '../..');
const bundle = path.join(root, 'packages/client/dist/folio-client.min.js');
const DOCS = {
  docid: 'pandoc--comments.docx', // w15:docId + created → rule 1
  created: 'pandoc--lists.docx', // created only → rule 2, export adds DocumentGuid
  bare: 'mammoth--utf8-bom.docx', // neither → rule 2, export adds both
} as const;
const sha256 = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');
const month = () => new Date().toISOString().slice(0, 7);

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>folio client test</title></head><body>
<script type="module">
import * as lib from '/folio-client.min.js';
import { portableCases } from '/portable.js';
const { Folio } = lib;
async function bytesOf(name) { return new Uint8Array(await (await fetch('/docs/' + name)).arrayBuffer()); }
window.openDoc = async (name, options) => {
  const doc = await new Folio(options).open(new Blob([await bytesOf(name)]));
  return { documentId: doc.documentId, guid: doc.guid, createdAt: doc.createdAt, rule: doc.rule };
};
window.exportAndReopen = async (name) => {
  const folio = new Folio({ telemetry: { enabled: false } });
  const doc = await folio.open(await bytesOf(name));
  const again = await folio.open(await doc.export());
  return { first: doc.documentId, identity: doc.identity, reopened: again.documentId, rule: again.rule };
};
window.runPortable = async () => {
  const fixtures = { docid: await bytesOf('${DOCS.docid}'), created: await bytesOf('${DOCS.created}'), bare: await bytesOf('${DOCS.bare}') };
  const results = [];
  for (const c of portableCases) {
    try { await c.run(lib, fixtures); results.push({ name: c.name, ok: true }); }
    catch (e) { results.push({ name: c.name, ok: false, error: String(e && e.stack || e) }); }
  }
  return results;
};
document.cookie = 'session=page-secret; path=/';
window.ready = true;
</script></body></html>`;

let browser: Browser;
let page: Page;
let pageServer: http.Server;
let pageOrigin: string;
let ingest: TestIngest;
let portableJs = '';
const seen: SeenRequest[] = [];

beforeAll(async () => {
  if (!fs.existsSync(bundle)) {
    const r = spawnSync(process.execPath, [path.join(root, 'packages/client/build.mjs')], { stdio: 'inherit' });
    if (r.status !== 0) throw new Error('building @folio/client failed');
  }
  // The library's portable unit tests (packages/client/test/portable.ts), bundled for the page; they receive
  // the built bundle as \`lib\`, so what runs is the shipped code.
  const bundled = await build({
    entryPoints: [path.join(root, 'packages/client/test/portable.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
  });
  portableJs = bundled.outputFiles[0]!.text;
  ingest = await startTestIngest({}, seen);
  pageServer = http.createServer((req, res) => {
    const url = req.url ?? '/';
    if (url === '/') return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    if (url === '/portable.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(portableJs);
    if (url === '/folio-client.min.js') {
      return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(fs.readFileSync(bundle));
    }
    const m = /^\/docs\/([\w.-]+\.docx)$/.exec(url);
    if (m && Object.values(DOCS).includes(m[1] as never)) {
      return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(fs.readFileSync(path.join(CORPUS, m[1]!)));
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => pageServer.listen(0, '127.0.0.1', r));
  // Same host, another port: a different origin (so CORS applies), but cookies ignore ports, so the page's
  // cookie would travel to the ingest if the client sent credentials.
  pageOrigin = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  page = await browser.newPage();
  await page.goto(pageOrigin + '/');
  await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
  expect(await page.evaluate(() => document.cookie)).toContain('session=page-secret');
});

afterAll(async () => {
  await browser?.close();
  await new Promise((r) => pageServer?.close(r));
  await ingest?.close();
});

async function waitFor(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('condition not reached');
}

/** What the test page (PAGE) puts on window; a cast only, since page.evaluate runs these bodies in the browser. */
interface OpenResult {
  documentId: string;
  guid?: string;
  createdAt?: string;
  rule: string;
}
interface TestPage {
  openDoc(name: string, options: object): Promise<OpenResult>;
  exportAndReopen(name: string): Promise<{ first: string; identity: { guid: string; createdAt: string }; reopened: string; rule: string }>;
  runPortable(): Promise<Array<{ name: string; ok: boolean; error?: string }>>;
}

const collects = (key: string) => seen.filter((s) => s.method === 'POST' && s.url === '/v1/collect' && s.headers['x-license-key'] === key);

describe('@folio/client in Chromium', () => {
  it('sends exactly one event with the expected documentId, no cookies, after an answered CORS preflight', async () => {
    const key = 'lic_browser';
    const result = await page.evaluate(
      ([name, endpoint, licenseKey]) =>
        (window as unknown as TestPage).openDoc(name, { licenseKey, telemetry: { endpoint, metadata: { suite: 'browser' } } }),
      [DOCS.docid, `${ingest.url}/v1/collect`, key] as const,
    );
    expect(result.documentId).toBe(sha256('9E5C29AD-F95A-4ACD-93E4-77244B7D25C9|2016-05-09T20:15:00Z'));
    await waitFor(async () => (await ingest.ingest.store.usage(key, month())).opens >= 1);
    // Let any duplicate arrive before counting.
    await new Promise((r) => setTimeout(r, 200));
    const posts = collects(key);
    expect(posts).toHaveLength(1);
    expect(posts[0]!.status).toBe(202);
    expect(posts[0]!.headers.cookie).toBeUndefined();
    expect(posts[0]!.headers.origin).toBe(pageOrigin);
    expect(posts[0]!.headers.referer).toBeUndefined();
    const preflight = seen.find((s) => s.method === 'OPTIONS' && s.url === '/v1/collect');
    expect(preflight, 'the browser sent a CORS preflight').toBeDefined();
    expect(String(preflight!.headers['access-control-request-headers'])).toContain('x-license-key');
    expect(preflight!.status).toBe(204);
    expect(preflight!.responseHeaders!['access-control-allow-origin']).toBe('*');
    expect(preflight!.responseHeaders!['access-control-allow-headers']).toBe('Content-Type, X-License-Key');
    const usage = await ingest.ingest.store.usage(key, month());
    expect(usage).toMatchObject({ documents: 1, opens: 1, hostnames: ['127.0.0.1'] });
    expect(await ingest.ingest.store.documentIds(key, month())).toEqual([result.documentId]);
  });

  it('sends nothing when telemetry is disabled', async () => {
    const endpoint = `${ingest.url}/v1/collect`;
    await page.evaluate(
      ([name, ep]) => (window as unknown as TestPage).openDoc(name, { licenseKey: 'lic_disabled', telemetry: { enabled: false, endpoint: ep } }),
      [DOCS.created, endpoint] as const,
    );
    // Barrier: an enabled open afterwards; once it is stored, a request from the first would have arrived.
    await page.evaluate(([name, ep]) => (window as unknown as TestPage).openDoc(name, { licenseKey: 'lic_barrier', telemetry: { endpoint: ep } }), [
      DOCS.created,
      endpoint,
    ] as const);
    await waitFor(async () => (await ingest.ingest.store.usage('lic_barrier', month())).opens >= 1);
    await new Promise((r) => setTimeout(r, 200));
    expect(collects('lic_disabled')).toHaveLength(0);
    expect((await ingest.ingest.store.usage('lic_disabled', month())).opens).toBe(0);
  });

  it('opens at once when the ingest is down or never answers', async () => {
    const silent = http.createServer(() => undefined); // accepts, never answers (not even the preflight)
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    try {
      for (const endpoint of [`http://127.0.0.1:${closedPort}/v1/collect`, `http://127.0.0.1:${(silent.address() as AddressInfo).port}/v1/collect`]) {
        const r = await page.evaluate(([name, ep]) => (window as unknown as TestPage).openDoc(name, { telemetry: { endpoint: ep } }), [
          DOCS.docid,
          endpoint,
        ] as const);
        expect(r.documentId).toMatch(/^[0-9a-f]{64}$/);
      }
    } finally {
      silent.closeAllConnections();
      await new Promise((r) => silent.close(r));
    }
  });

  it("runs the library's portable unit tests (the same as in Node) against the built bundle", async () => {
    const results = (await page.evaluate(() => (window as unknown as TestPage).runPortable())) as Array<{
      name: string;
      ok: boolean;
      error?: string;
    }>;
    expect(results.length).toBeGreaterThanOrEqual(10);
    expect(results.filter((r) => !r.ok)).toEqual([]);
  });

  it('computes the same identities as Node, and export + reopen gives the rule-1 id', async () => {
    for (const name of Object.values(DOCS)) {
      const bytes = fs.readFileSync(path.join(CORPUS, name));
      const r = await page.evaluate((n) => (window as unknown as TestPage).exportAndReopen(n), name);
      expect(r.rule, name).toBe('metadata');
      expect(r.reopened, name).toBe(sha256(`${r.identity.guid}|${r.identity.createdAt}`));
      if (name === DOCS.docid) expect(r.first).toBe(r.reopened);
      else expect(r.first, name).toBe(sha256(bytes));
    }
  });
});
