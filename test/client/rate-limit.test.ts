/**
 * @folio/client against the real Folio API (a child process, as test/adversarial runs it) held at its
 * per-key limit: ten `POST /v1/verify` calls with `document: {url}` point at a slow HTTP server in this test
 * (allow-listed with URL_FETCH_ALLOWLIST) that holds each answer for a few seconds, so the key has its ten
 * slots in flight. An eleventh call through FolioClient then gets 429 RATE_LIMIT_ERROR with Retry-After:
 * - with retries off it throws FolioRateLimitError carrying status, code, requestId and retryAfter;
 * - with retries on it waits (at least Retry-After each time), retries, and succeeds once a slot frees.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FolioClient, FolioRateLimitError, type RetryEvent, type VerifyResponse } from '../../packages/client/src/index.js';
import { FolioProcess, serverEnv } from '../adversarial/server.js';

/** A one-page PDF with no signature, with a correct cross-reference table. */
function minimalPdf(): Uint8Array {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Resources << >> >>',
  ];
  let out = '%PDF-1.7\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const off of offsets) out += `${String(off).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return new TextEncoder().encode(out);
}

const PDF = minimalPdf();
const HOLD_MS = 3000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let slow: http.Server;
let slowUrl: string;
/** When each held request arrived at the slow server (ms, performance.now()). */
const held: number[] = [];
/** When each held answer was sent. */
const releases: number[] = [];
let folio: FolioProcess | undefined;
let apiKey: string;

beforeAll(async () => {
  slow = http.createServer((_req, res) => {
    held.push(performance.now());
    setTimeout(() => {
      releases.push(performance.now());
      res.writeHead(200, { 'content-type': 'application/pdf' }).end(PDF);
    }, HOLD_MS);
  });
  await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
  const port = (slow.address() as AddressInfo).port;
  slowUrl = `http://127.0.0.1:${port}/slow.pdf`;
  folio = await FolioProcess.start(
    { ...serverEnv({ engineTimeoutMs: 30_000, officeTimeoutMs: 60_000 }), URL_FETCH_ALLOWLIST: `127.0.0.1:${port}` },
    240_000,
  );
  apiKey = await folio.newKey();
}, 300_000);

afterAll(async () => {
  await folio?.stop();
  slow?.closeAllConnections();
  await new Promise((r) => slow?.close(r));
});

/** Starts ten slow verifies on the key and waits until the slow server holds all ten (so all ten slots are taken). */
async function fillSlots(client: FolioClient): Promise<Array<Promise<VerifyResponse>>> {
  const before = held.length;
  // Retried on 429: a slot of the previous test may be given back a moment after its answer arrived.
  const slowCalls = Array.from({ length: 10 }, () => client.verify({ url: slowUrl }, { retry: { maxAttempts: 10 } }));
  const deadline = Date.now() + 30_000;
  while (held.length - before < 10) {
    if (Date.now() > deadline) throw new Error(`only ${held.length - before} of 10 slow requests reached the slow server`);
    await sleep(20);
  }
  return slowCalls;
}

describe('FolioClient against a real server at its per-key limit', () => {
  it('with retries off, the 11th call throws FolioRateLimitError with code, requestId and retryAfter', async () => {
    const client = new FolioClient({ baseUrl: folio!.url, apiKey });
    const slowCalls = await fillSlots(client);
    const err = (await client.verify(PDF, { retry: false, requestId: 'client-rate-limit-1' }).catch((e: unknown) => e)) as FolioRateLimitError;
    expect(err).toBeInstanceOf(FolioRateLimitError);
    expect(err.status).toBe(429);
    expect(err.code).toBe('RATE_LIMIT_ERROR');
    expect(err.requestId).toBe('client-rate-limit-1'); // the server echoes the client's X-Request-Id
    expect(err.retryAfter).toBeGreaterThanOrEqual(1);
    expect(err.message).toMatch(/in flight/);
    expect(err.attempts).toBe(1);
    const results = await Promise.all(slowCalls);
    for (const r of results) expect(r.indication).toBe('NO_SIGNATURE_FOUND');
  }, 120_000);

  it('with retries on, the 11th call backs off (honouring Retry-After) and succeeds once a slot frees', async () => {
    const client = new FolioClient({ baseUrl: folio!.url, apiKey });
    const slowCalls = await fillSlots(client);
    const releasedBefore = releases.length;
    const events: RetryEvent[] = [];
    const t0 = performance.now();
    const result = await client.verify(PDF, {
      retry: { maxAttempts: 30, baseDelayMs: 200, maxDelayMs: 10_000 },
      deadlineMs: 90_000,
      onRetry: (e) => events.push(e),
    });
    const done = performance.now();
    expect(result.indication).toBe('NO_SIGNATURE_FOUND');
    expect(result.valid).toBe(false);
    expect(events.length).toBeGreaterThanOrEqual(1);
    for (const e of events) {
      expect(e.error).toBeInstanceOf(FolioRateLimitError);
      expect(e.error.code).toBe('RATE_LIMIT_ERROR');
      expect(e.delayMs).toBeGreaterThanOrEqual((e.error.retryAfter ?? 0) * 1000);
    }
    // It succeeded only after the slow requests were answered (their slots freed), not by slipping through.
    expect(releases.length).toBeGreaterThan(releasedBefore);
    expect(done).toBeGreaterThanOrEqual(releases[releasedBefore]!);
    expect(done - t0).toBeGreaterThanOrEqual(1000);
    const results = await Promise.all(slowCalls);
    expect(results).toHaveLength(10);
  }, 120_000);
});
