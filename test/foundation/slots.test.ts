/**
 * A key's 10 in-flight slots come back when the answer is sent or the connection closes, whichever comes
 * first, exactly once. Clients abandon requests at every stage over raw sockets (while authentication is
 * awaited, before the body, mid-upload, while the engine works, after the answer started); afterwards all 10
 * slots are free: 10 concurrent requests are admitted and the 11th gets 429 with Retry-After. Run against a
 * controllable app (in-process and Redis limiters) and against the real API.
 */
import net from 'node:net';
import { Readable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import type { FastifyInstance } from 'fastify';
import { buildApiApp, MAX_IN_FLIGHT_PER_KEY } from '../../src/http/app.js';
import { LocalInFlightLimiter, RedisInFlightLimiter, type InFlightLimiter } from '../../src/http/in-flight.js';
import { generateApiKey } from '../../src/auth/keys.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { REDIS_URL, redisReachable } from '../support/redis.js';

const redisUp = await redisReachable('the Redis variant of the slot tests');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

interface RawClient {
  socket: net.Socket;
  /** Everything the server sent, as it arrives. */
  received(): string;
  /** Resolves with the whole answer when the server closes the connection. */
  closed: Promise<string>;
}

/** Opens a connection and writes `head` (request line and headers) plus `body`: possibly not all of it. */
function rawRequest(baseUrl: string, head: string, body: Buffer | string = ''): Promise<RawClient> {
  const u = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(u.port), u.hostname, () => {
      socket.write(head);
      if (body.length > 0) socket.write(body);
      resolve({ socket, received: () => Buffer.concat(chunks).toString('latin1'), closed });
    });
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    const closed = new Promise<string>((r) => socket.on('close', () => r(Buffer.concat(chunks).toString('latin1'))));
    socket.once('error', reject);
  });
}

const statusOf = (answer: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);

// ---------------------------------------------------------------------------------------------------------
// A controllable app: the "engine" is a promise the test resolves, the answer a stream the test ends.

describe.each([
  ['in-process', false],
  ['Redis', true],
] as const)('slots are released at every stage of abandonment (%s limiter)', (_name, useRedis) => {
  const apiKey = generateApiKey();
  const keyId = `key_${randomBytes(6).toString('hex')}`;
  let app: FastifyInstance;
  let limiter: InFlightLimiter;
  let url: string;
  /** Handlers that are "working", waiting for the test to let them finish. */
  const working: Array<() => void> = [];
  /** Streams of answers that have started. */
  const streaming: Readable[] = [];
  let authDelayMs = 0;

  beforeAll(async () => {
    if (useRedis && !redisUp) return;
    limiter = useRedis ? new RedisInFlightLimiter(REDIS_URL, MAX_IN_FLIGHT_PER_KEY) : new LocalInFlightLimiter(MAX_IN_FLIGHT_PER_KEY);
    app = await buildApiApp({
      logger: pino({ level: 'silent' }),
      authenticator: {
        authenticate: async (k) => {
          if (authDelayMs > 0) await sleep(authDelayMs);
          return k === apiKey ? { keyId, email: 's@example.com' } : null;
        },
      },
      limiter,
      routes: [
        async (a) => {
          a.post('/t/work', { config: { auth: true, documentEndpoint: true } }, async () => {
            await new Promise<void>((r) => working.push(r));
            return { ok: true };
          });
          a.post('/t/stream', { config: { auth: true, documentEndpoint: true } }, async (_req, reply) => {
            const body = new Readable({ read() {} });
            body.push(Buffer.alloc(64 * 1024, 0x61));
            streaming.push(body);
            return reply.type('application/octet-stream').send(body);
          });
        },
      ],
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    working.splice(0).forEach((r) => r());
    for (const s of streaming.splice(0)) s.push(null);
    await app?.close();
    await limiter?.close();
  });

  const head = (path: string, contentLength: number) =>
    `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${contentLength}\r\n\r\n`;
  const json = JSON.stringify({ payload: 'x'.repeat(100_000) });

  /** 10 concurrent requests are admitted, the 11th is refused with 429 and Retry-After; then all finish. */
  async function expectAllSlotsFree(): Promise<void> {
    expect(await limiter.inFlight(keyId)).toBe(0);
    const before = working.length;
    const ten = Array.from({ length: MAX_IN_FLIGHT_PER_KEY }, () =>
      fetch(`${url}/t/work`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: '{}' }),
    );
    await until('10 admitted requests', () => working.length === before + MAX_IN_FLIGHT_PER_KEY);
    const eleventh = await fetch(`${url}/t/work`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(eleventh.status).toBe(429);
    expect(eleventh.headers.get('retry-after')).toBe('1');
    expect(((await eleventh.json()) as { code: string }).code).toBe('RATE_LIMIT_ERROR');
    working.splice(before).forEach((r) => r());
    for (const res of await Promise.all(ten)) expect(res.status).toBe(200);
    await until('the slots to come back', async () => (await limiter.inFlight(keyId)) === 0);
  }

  it.skipIf(useRedis && !redisUp)('abandoned before the body, mid-upload, while working and after the answer started', async () => {
    const clients: RawClient[] = [];
    // Two of each stage, ten in all: together they hold every slot.
    for (let i = 0; i < 2; i++) clients.push(await rawRequest(url, head('/t/work', json.length))); // no body yet
    for (let i = 0; i < 2; i++) clients.push(await rawRequest(url, head('/t/work', json.length), json.slice(0, json.length / 2)));
    for (let i = 0; i < 3; i++) clients.push(await rawRequest(url, head('/t/work', json.length), json)); // the engine works
    for (let i = 0; i < 3; i++) clients.push(await rawRequest(url, head('/t/stream', json.length), json)); // answer started
    await until('the engine to hold 3 requests', () => working.length === 3);
    await until('3 answers to start', () => streaming.length === 3);
    await until('the answers to reach the clients', () => clients.slice(7).every((c) => c.received().startsWith('HTTP/1.1 200')));
    expect(await limiter.inFlight(keyId)).toBe(MAX_IN_FLIGHT_PER_KEY);
    const probe = await fetch(`${url}/t/work`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(probe.status).toBe(429);

    for (const c of clients) c.socket.destroy();
    await until('every abandoned slot to come back', async () => (await limiter.inFlight(keyId)) === 0);
    await expectAllSlotsFree();

    // The abandoned handlers and streams finishing later must not give a slot back a second time: with 10
    // requests held, the 11th is still refused.
    const before = working.length;
    const ten = Array.from({ length: MAX_IN_FLIGHT_PER_KEY }, () =>
      fetch(`${url}/t/work`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: '{}' }),
    );
    await until('10 more admitted requests', () => working.length === before + MAX_IN_FLIGHT_PER_KEY);
    working.splice(0, 3).forEach((r) => r()); // the three abandoned "engine" jobs finish now
    for (const s of streaming.splice(0)) s.push(null);
    await sleep(100);
    expect(await limiter.inFlight(keyId)).toBe(MAX_IN_FLIGHT_PER_KEY);
    const eleventh = await fetch(`${url}/t/work`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(eleventh.status).toBe(429);
    working.splice(0).forEach((r) => r());
    for (const res of await Promise.all(ten)) expect(res.status).toBe(200);
    await until('the slots to come back', async () => (await limiter.inFlight(keyId)) === 0);
  });

  it.skipIf(useRedis && !redisUp)('a client that leaves while its key is being checked leaves no slot behind', async () => {
    authDelayMs = 150;
    try {
      const clients: RawClient[] = [];
      for (let i = 0; i < MAX_IN_FLIGHT_PER_KEY; i++) clients.push(await rawRequest(url, head('/t/work', 2), '{}'));
      await sleep(20);
      for (const c of clients) c.socket.destroy();
      await sleep(400);
      expect(working.length).toBe(0);
      expect(await limiter.inFlight(keyId)).toBe(0);
    } finally {
      authDelayMs = 0;
    }
    await expectAllSlotsFree();
  });

  it.skipIf(useRedis && !redisUp)('answered requests on kept-alive connections give their slot back once', async () => {
    for (let round = 0; round < 3; round++) await expectAllSlotsFree();
  });
});

// ---------------------------------------------------------------------------------------------------------
// The real API: /v1/convert (md→docx on the engine pool) abandoned at each stage over raw sockets.

describe('the real API frees the slots of abandoned document requests', () => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi();
  });
  afterAll(async () => {
    await t?.close();
  });

  const boundary = 'folio-slots-boundary';
  const multipart = (markdown: string) =>
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.md"\r\nContent-Type: text/markdown\r\n\r\n${markdown}\r\n--${boundary}--\r\n`,
    );
  const head = (contentLength: number) =>
    `POST /v1/convert?from=md&to=docx HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.apiKey}\r\n` +
    `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${contentLength}\r\nConnection: close\r\n\r\n`;
  // Large enough that its .docx answer arrives in several pieces.
  const body = multipart(Array.from({ length: 5_000 }, (_, i) => `Paragraph ${i} with *some* **emphasis** and text.\n`).join('\n'));
  // For the four abandoned while converting: large enough that the engine is still at work when they are
  // abandoned (5,000 paragraphs convert in well under the half second the test waits before probing).
  const slowBody = multipart(Array.from({ length: 60_000 }, (_, i) => `Paragraph ${i} with *some* **emphasis** and text.\n`).join('\n'));

  /**
   * A document request that fails at once after admission (a form without its file: 400): 429 only when every
   * slot is held. Its content type is right, since a wrong one is refused (415) before admission.
   */
  const probe = async () =>
    (
      await fetch(`${t.url}/v1/convert?from=md&to=docx`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
        body: `--${boundary}--\r\n`,
      })
    ).status;

  it('abandoned before the body, mid-upload, while converting and while the answer arrives: all 10 slots come back', async () => {
    const clients: RawClient[] = [];
    for (let i = 0; i < 3; i++) clients.push(await rawRequest(t.url, head(body.length)));
    for (let i = 0; i < 3; i++) clients.push(await rawRequest(t.url, head(body.length), body.subarray(0, body.length >> 1)));
    for (let i = 0; i < 4; i++) clients.push(await rawRequest(t.url, head(slowBody.length), slowBody));
    // Let them be admitted before probing, so that a probe never takes a slot one of them needs.
    await sleep(500);
    for (const c of clients) expect(c.received()).not.toMatch(/^HTTP\/1\.1 429/);
    // The first six hold their slot for as long as they keep the connection: every slot is taken.
    await until('every slot to be held', async () => (await probe()) === 429);
    // The last four: abandoned while the engine converts or while the answer streams in, whichever it is.
    for (const c of clients.slice(6)) c.socket.destroy();
    for (const c of clients.slice(0, 6)) c.socket.destroy();

    // All 10 free: 10 requests held before their body are admitted, the 11th is refused with Retry-After.
    await until('the slots to come back', async () => (await probe()) !== 429);
    const held: RawClient[] = [];
    for (let i = 0; i < MAX_IN_FLIGHT_PER_KEY; i++) held.push(await rawRequest(t.url, head(body.length)));
    await sleep(500);
    await until('the 10 new requests to be admitted', async () => (await probe()) === 429);
    const eleventh = await fetch(`${t.url}/v1/convert?from=md&to=docx`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: multipart('# eleventh'),
    });
    expect(eleventh.status).toBe(429);
    expect(eleventh.headers.get('retry-after')).toBe('1');
    // The ten finish their upload and are answered.
    for (const c of held) c.socket.write(body);
    const answers = await Promise.all(held.map((c) => c.closed.then(statusOf)));
    expect(answers).toEqual(Array(MAX_IN_FLIGHT_PER_KEY).fill(200));
    await until('the slots to come back after the answers', async () => (await probe()) !== 429);
  });
});
