/**
 * The open event in Node against a real HTTP server that records what arrives: one request per open with the
 * contract's body and headers, the license-key rules, nothing when disabled, and an open that never waits on
 * (or fails because of) the network.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { COMMUNITY_LICENSE_KEY, Folio, LIBRARY_VERSION } from '../src/index.js';
import { CREATED_AND_CUSTOM, WITH_DOCID, corpus } from './fixtures.js';

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

let server: http.Server;
let endpoint: string;
const received: Received[] = [];
/** Responses held open on purpose (the "slow ingest" case); released in afterAll. */
const held: http.ServerResponse[] = [];
let hold = false;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      if (hold) return void held.push(res);
      res.writeHead(202, { 'content-type': 'application/json' }).end('{"accepted":1}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/collect`;
});
afterEach(() => {
  received.length = 0;
  hold = false;
});
afterAll(async () => {
  for (const res of held) res.end();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

async function waitForRequests(n: number): Promise<void> {
  for (let i = 0; i < 500 && received.length < n; i++) await new Promise((r) => setTimeout(r, 10));
}

describe('telemetry', () => {
  it('sends one POST per open with the documentId, the license key and no document content', async () => {
    const folio = new Folio({ licenseKey: 'lic_node', telemetry: { endpoint, metadata: { app: 'tests' } } });
    const doc = await folio.open(corpus(WITH_DOCID));
    await waitForRequests(1);
    expect(received).toHaveLength(1);
    const [r] = received;
    expect(r!.method).toBe('POST');
    expect(r!.url).toBe('/v1/collect');
    expect(r!.headers['x-license-key']).toBe('lic_node');
    expect(r!.headers['content-type']).toBe('application/json');
    expect(r!.headers.cookie).toBeUndefined();
    expect(r!.headers.authorization).toBeUndefined();
    const body = JSON.parse(r!.body);
    expect(Object.keys(body).sort()).toEqual(['browserInfo', 'events', 'libraryVersion', 'metadata']);
    expect(body.libraryVersion).toBe(LIBRARY_VERSION);
    expect(body.metadata).toEqual({ app: 'tests' });
    expect(body.events).toHaveLength(1);
    expect(body.events[0]).toEqual({ timestamp: expect.any(String), documentId: doc.documentId, documentCreatedAt: '2016-05-09T20:15:00Z' });
    expect(Number.isNaN(Date.parse(body.events[0].timestamp))).toBe(false);
    // Outside a browser there is no page, user agent or screen to report.
    // Node 21+ has a global navigator whose userAgent is "Node.js/<major>"; Node 20 has none.
    const userAgent = (globalThis as { navigator?: { userAgent?: string } }).navigator?.userAgent ?? '';
    expect(body.browserInfo).toEqual({ userAgent, currentUrl: '', hostname: '', screenSize: { width: 0, height: 0 } });
    // Nothing of the document: no GUID, no text.
    expect(r!.body).not.toContain('9E5C29AD');
    expect(r!.body.length).toBeLessThan(600);
  });

  it('uses the community key by default, and the root licenseKey over the deprecated telemetry.licenseKey (warning once)', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      await new Folio({ telemetry: { endpoint } }).open(corpus(CREATED_AND_CUSTOM));
      await new Folio({ licenseKey: 'root-key', telemetry: { endpoint, licenseKey: 'old-key' } }).open(corpus(CREATED_AND_CUSTOM));
      await new Folio({ telemetry: { endpoint, licenseKey: 'old-key' } }).open(corpus(CREATED_AND_CUSTOM));
      await waitForRequests(3);
      expect(received.map((r) => r.headers['x-license-key'] as string).sort()).toEqual([COMMUNITY_LICENSE_KEY, 'old-key', 'root-key'].sort());
      const deprecations = warn.mock.calls.filter((c) => String(c[0]).includes('telemetry.licenseKey is deprecated'));
      expect(deprecations).toHaveLength(1);
    } finally {
      warn.mockRestore();
    }
  });

  it('sends nothing at all when telemetry is disabled, and still fills in the identity for export', async () => {
    const off = new Folio({ telemetry: { enabled: false, endpoint } });
    const doc = await off.open(corpus(CREATED_AND_CUSTOM));
    expect(doc.identity.guid).toMatch(/^[0-9a-f-]{36}$/);
    expect((await off.open(await doc.export())).rule).toBe('metadata');
    // A later enabled open is the barrier: once its request has arrived, an earlier one would have too.
    const on = new Folio({ telemetry: { endpoint: endpoint + '?barrier' } });
    await on.open(corpus(WITH_DOCID));
    await waitForRequests(1);
    await new Promise((r) => setTimeout(r, 100));
    expect(received.map((r) => r.url)).toEqual(['/v1/collect?barrier']);
  });

  it('resolves the open without waiting for an ingest that never answers', async () => {
    hold = true;
    const folio = new Folio({ telemetry: { endpoint } });
    const doc = await folio.open(corpus(WITH_DOCID));
    expect(doc.documentId).toMatch(/^[0-9a-f]{64}$/);
    await waitForRequests(1);
    expect(received).toHaveLength(1);
    expect(held).toHaveLength(1); // the request is still unanswered, and the open is done
  });

  it('swallows every failure: ingest down, bad endpoint URL, unserialisable metadata', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      const closed = http.createServer();
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
      const port = (closed.address() as AddressInfo).port;
      await new Promise((r) => closed.close(r));
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      for (const options of [
        { telemetry: { endpoint: `http://127.0.0.1:${port}/v1/collect` } },
        { telemetry: { endpoint: 'not a url' } },
        { telemetry: { endpoint, metadata: cyclic } },
      ]) {
        const doc = await new Folio(options).open(corpus(WITH_DOCID));
        expect(doc.documentId).toMatch(/^[0-9a-f]{64}$/);
      }
      await new Promise((r) => setTimeout(r, 200));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
