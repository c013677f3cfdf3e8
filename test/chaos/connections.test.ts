/**
 * Issue 24, time and connections, from the outside: the compiled API (and the ingest) as child processes
 * with short budgets (HTTP_HEADERS_TIMEOUT_MS, HTTP_BODY_TIMEOUT_MS, MAX_CONNECTIONS), talked to over raw
 * TCP. Before src/http/server-limits.ts a body that stopped was held for good (also unauthenticated, also on
 * an unknown path), `Expect: 100-continue` got a 100 on a 404 and then waited, and 20,000 connections took
 * the process to its descriptor limit (health stopped answering). Asserted: a stalled or trickling body and
 * stalled headers are answered 408 in the envelope and closed within the budget (plus a sweep); an honest
 * upload slower than the body timeout still succeeds; no 100 before routing and the key accept the request;
 * 3,000 idle connections are held while health answers, and beyond MAX_CONNECTIONS the server makes room
 * instead of running out of descriptors. About a minute.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import { FolioProcess, ROOT, serverEntry } from '../adversarial/server.js';
import { spawnIngest, type SpawnedIngest } from './ingest-harness.js';
import { rawExchange } from './raw-client.js';
import { openFileLimit } from '../../src/http/server-limits.js';

/** The budgets the servers run with here (short, so the suite is quick). */
const HEADERS_TIMEOUT_MS = 1500;
const BODY_TIMEOUT_MS = 1500;
const MIN_RATE = 10_240;
/** Idle connections held open at once, and the server's connection cap above them. */
const IDLE_CONNECTIONS = 3000;
const MAX_CONNECTIONS = 3500;
/**
 * How late a timeout may be answered: Node and the sweep look every quarter of the shortest budget, and a
 * machine running other suites may delay a timer by a second or two. Far below "held for good".
 */
const SLACK_MS = 3000;
const LIMITS_ENV = {
  HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
  HTTP_BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS),
  HTTP_BODY_MIN_BYTES_PER_SECOND: String(MIN_RATE),
  MAX_CONNECTIONS: String(MAX_CONNECTIONS),
};

let api: FolioProcess;
let ingest: SpawnedIngest;
let key: string;
let port: number;

function expectEnvelope(response: { status: number; headers: Record<string, string>; body: string } | undefined, status: number, code: string) {
  expect(response, 'an answer').toBeDefined();
  expect(response!.status).toBe(status);
  expect(response!.headers['content-type']).toMatch(/^application\/json/);
  const body = JSON.parse(response!.body) as Record<string, unknown>;
  expect(body).toMatchObject({ code, requestId: expect.any(String), message: expect.any(String), error: expect.any(String) });
  return body;
}

const multipartHead = (path: string, length: number, extra = '') =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
  `Content-Type: multipart/form-data; boundary=folio\r\nContent-Length: ${length}\r\n${extra}\r\n`;

describe('time and connection budgets', () => {
  beforeAll(async () => {
    // LOG_LEVEL=info for the start-up line (health's 200s are logged at debug, so the log stays small).
    api = await FolioProcess.start({ OFFICE_WORKERS: '1', ENGINE_WORKERS: '1', LOG_LEVEL: 'info', ...LIMITS_ENV });
    port = Number(new URL(api.url).port);
    key = await api.newKey();
    ingest = await spawnIngest(ROOT, LIMITS_ENV, serverEntry().args);
  }, 180_000);

  afterAll(async () => {
    await api?.stop();
    await ingest?.stop();
  });

  it('start-up reports the descriptor limit and the limits it applied', () => {
    const line = api
      .logTail()
      .split('\n')
      .find((l) => l.includes('"API listening"'));
    expect(line, 'the start-up line').toBeDefined();
    const limits = (JSON.parse(line!) as { limits: Record<string, number> }).limits;
    expect(limits).toMatchObject({ maxConnections: MAX_CONNECTIONS, headersTimeoutMs: HEADERS_TIMEOUT_MS, bodyTimeoutMs: BODY_TIMEOUT_MS });
    // The server's own limit, as /proc shows it for its pid.
    expect(limits.fdLimit).toBe(openFileLimit(`/proc/${api.pid}/limits`));
  });

  it('a body that stops is answered 408 in the envelope and closed (authenticated, on a document endpoint)', async () => {
    const r = await rawExchange(
      port,
      [multipartHead('/v1/convert?to=pdf', 100_000), '--folio\r\nContent-Disposition: form-data; name="file"; filename="a.md"\r\n\r\n# a'],
      20_000,
    );
    expectEnvelope(r.responses[0], 408, 'VALIDATION_ERROR');
    expect(r.responses[0]!.headers.connection).toBe('close');
    expect(r.closedMs).toBeGreaterThanOrEqual(BODY_TIMEOUT_MS - 100);
    expect(r.closedMs).toBeLessThan(BODY_TIMEOUT_MS + SLACK_MS);
  });

  it('a body that stops after an early refusal (no key; unknown path) is closed, not held', async () => {
    for (const head of [
      'POST /v1/convert HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=folio\r\nContent-Length: 100000\r\n\r\n--fo',
      'POST /no/such/path HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\nabc',
    ]) {
      const r = await rawExchange(port, [head], 20_000);
      expect([401, 404]).toContain(r.responses[0]?.status);
      expect(r.closedMs, head.split('\r\n')[0]).toBeLessThan(BODY_TIMEOUT_MS + SLACK_MS);
    }
  });

  it('a body trickling below the minimum rate is answered 408', async () => {
    const trickle: Array<string | number> = [multipartHead('/v1/convert?to=docx', 1_000_000)];
    // 20 bytes every 100 ms: progress every sweep (never a stall), 200 bytes/s on average.
    for (let i = 0; i < 150; i++) trickle.push('x'.repeat(20), 100);
    const r = await rawExchange(port, trickle, 20_000);
    expectEnvelope(r.responses[0], 408, 'VALIDATION_ERROR');
    expect(r.closedMs).toBeLessThan(BODY_TIMEOUT_MS + SLACK_MS + 1000);
  });

  it('an honest upload slower than the body timeout, above the minimum rate, is served', async () => {
    const md = Buffer.from(Array.from({ length: 4000 }, (_, i) => `Paragraph ${i} ${'lorem ipsum '.repeat(10)}\n\n`).join(''));
    const body = Buffer.concat([
      Buffer.from('--folio\r\nContent-Disposition: form-data; name="file"; filename="a.md"\r\nContent-Type: text/markdown\r\n\r\n'),
      md,
      Buffer.from('\r\n--folio--\r\n'),
    ]);
    // ~100 KB/s for ~5 s: three times the body timeout, ten times the minimum rate.
    const steps: Array<string | Buffer | number> = [multipartHead('/v1/convert?to=docx', body.length)];
    const slice = 10_000;
    for (let i = 0; i < body.length; i += slice) steps.push(body.subarray(i, i + slice), 100);
    const started = Date.now();
    const r = await rawExchange(port, steps, 60_000, 'answer');
    expect(Date.now() - started).toBeGreaterThan(2 * BODY_TIMEOUT_MS);
    expect(r.responses[0]?.status, r.text.slice(0, 300)).toBe(200);
  });

  it('headers that stop are answered 408 in the envelope', async () => {
    for (const target of [port, Number(new URL(ingest.url).port)]) {
      const r = await rawExchange(target, ['GET /v1/health HTTP/1.1\r\nHost: x\r\n'], 20_000);
      expectEnvelope(r.responses[0], 408, 'VALIDATION_ERROR');
      expect(r.closedMs).toBeLessThan(HEADERS_TIMEOUT_MS + SLACK_MS);
    }
  });

  it("the ingest's stalled body is answered 408 within its body budget", async () => {
    const ingestPort = Number(new URL(ingest.url).port);
    const r = await rawExchange(
      ingestPort,
      [
        'POST /v1/collect HTTP/1.1\r\nHost: x\r\nX-License-Key: chaos\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"libraryVersion"',
      ],
      20_000,
    );
    expectEnvelope(r.responses[0], 408, 'VALIDATION_ERROR');
    expect(r.closedMs).toBeLessThan(BODY_TIMEOUT_MS + SLACK_MS);
  });

  it('Expect: 100-continue gets no 100 on an unknown path or without a key, and a 100 when the request is accepted', async () => {
    const expect100 = 'Expect: 100-continue\r\n';
    const notFound = await rawExchange(port, [`POST /no/such/path HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n${expect100}\r\n`], 5000);
    expect(notFound.responses.map((r) => r.status)).toEqual([404]);
    expect(notFound.firstByteMs).toBeLessThan(1000);
    expect(notFound.closedMs, 'closed: the client may be sending the body').toBeLessThan(1000);

    const noKey = await rawExchange(
      port,
      [`POST /v1/convert HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=folio\r\nContent-Length: 10\r\n${expect100}\r\n`],
      5000,
    );
    expect(noKey.responses.map((r) => r.status)).toEqual([401]);
    expect(noKey.closedMs).toBeLessThan(1000);

    const badKey = await rawExchange(
      port,
      [
        `POST /v1/verify HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer folio_sk_nope\r\nContent-Type: multipart/form-data; boundary=folio\r\nContent-Length: 10\r\n${expect100}\r\n`,
      ],
      5000,
    );
    expect(badKey.responses.map((r) => r.status)).toEqual([401]);

    // Accepted: the 100 comes, then the body is sent and answered.
    const part = '--folio\r\nContent-Disposition: form-data; name="file"; filename="a.md"\r\n\r\n# Hello\r\n--folio--\r\n';
    const ok = await rawExchange(port, [multipartHead('/v1/convert?to=docx', part.length, expect100), 1000, part], 30_000, 'answer');
    expect(ok.responses.map((r) => r.status)).toEqual([100, 200]);
    expect(ok.firstByteMs, 'the 100 came before the body was sent').toBeLessThan(1000);
  });

  it(`${IDLE_CONNECTIONS} idle connections are held while health answers; beyond MAX_CONNECTIONS the server makes room`, async (ctx) => {
    const limit = openFileLimit() ?? 0;
    // This process holds one descriptor per connection, the server one each up to its cap, plus their own files.
    if (limit < MAX_CONNECTIONS + 1500) {
      ctx.skip(`the descriptor limit here (ulimit -n = ${limit}) is below the ${MAX_CONNECTIONS + 1500} this check needs`);
      return;
    }
    const sockets: net.Socket[] = [];
    const open = (n: number) =>
      Promise.all(
        Array.from({ length: n }, () => {
          const s = net.connect(port, '127.0.0.1');
          s.on('error', () => undefined);
          sockets.push(s);
          return new Promise<void>((resolve) => {
            // One request each, then idle (a kept-alive connection, as browsers and agents leave them).
            s.once('connect', () => s.write('GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n'));
            s.once('data', () => resolve());
            s.once('close', () => resolve());
          });
        }),
      );
    const health = async () => {
      const t0 = Date.now();
      const r = await fetch(`${api.url}/v1/health`, { signal: AbortSignal.timeout(5000) });
      await r.arrayBuffer();
      return { status: r.status, ms: Date.now() - t0 };
    };
    const liveSockets = () => sockets.filter((s) => !s.destroyed && s.readyState === 'open').length;
    const serverDescriptors = () => fs.readdirSync(`/proc/${api.pid}/fd`).length;
    try {
      for (let i = 0; i < IDLE_CONNECTIONS; i += 500) await open(500);
      await new Promise((r) => setTimeout(r, 500));
      expect(liveSockets()).toBe(IDLE_CONNECTIONS);
      for (let i = 0; i < 5; i++) {
        const h = await health();
        expect(h.status).toBe(200);
        expect(h.ms).toBeLessThan(1000);
      }
      // 1,000 more: 500 over the cap. The server stays under its cap (plus its own files, pipes and threads)
      // and closes idle connections to let new clients in, so health keeps answering.
      await open(1000);
      await new Promise((r) => setTimeout(r, 1500));
      expect(serverDescriptors()).toBeLessThan(MAX_CONNECTIONS + 300);
      const after = await health();
      expect(after.status).toBe(200);
      expect(after.ms).toBeLessThan(1000);
      expect(api.alive()).toBe(true);
    } finally {
      for (const s of sockets) s.destroy();
    }
  }, 60_000);
});
