/**
 * Unread bodies are discarded a few at a time (src/http/body-discard.ts), on a plain Node server with the
 * API's server limits applied: six 16 MB uploads answered 503 without their body being read. Asserted:
 * never more than DISCARDS_AT_ONCE bodies are read for discarding at once, the others wait their turn (so
 * the pacing is what ran, not Node's own discard), and every body is still read to its end — each client
 * reads its 503 and finishes sending, none is reset — and the kept-alive connections serve a request after.
 * The accept-starvation this prevents is measured from outside in test/chaos/uploads.test.ts.
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DISCARDS_AT_ONCE, discardStatus, noteConnection } from '../../src/http/body-discard.js';
import { applyServerLimits, limitsFromConfig } from '../../src/http/server-limits.js';
import { loadConfig } from '../../src/modules/config.js';

const BODY = Buffer.alloc(16 * 1024 * 1024, 'x');
const CLIENTS = 6;

let server: http.Server;
let base: URL;
let maxActive = 0;
let maxWaiting = 0;
let sampling = true;
const bodyBytesSeen: number[] = [];
const refused: http.IncomingMessage[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.method === 'GET') return res.end('ok');
    // Refused before a byte of the body is read, as admission.ts refuses: Node discards the body after this.
    refused.push(req);
    res.writeHead(503, { 'content-type': 'text/plain', 'retry-after': '1' });
    res.end('busy');
    // Bytes read from this connection (a new one per upload): the headers and the whole body once discarded.
    req.once('end', () => bodyBytesSeen.push(req.socket.bytesRead));
  });
  applyServerLimits(server, limitsFromConfig(loadConfig({}), 60_000, 1));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  // Sampled on every turn of the loop, so a moment with too many discards cannot slip between samples.
  const sample = () => {
    const s = discardStatus();
    maxActive = Math.max(maxActive, s.active);
    maxWaiting = Math.max(maxWaiting, s.waiting);
    if (sampling) setImmediate(sample);
  };
  sample();
});

afterAll(async () => {
  sampling = false;
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

function post(agent: http.Agent): Promise<{ status: number; sent: boolean; error?: string }> {
  return new Promise((resolve) => {
    let status = 0;
    const req = http.request({
      host: base.hostname,
      port: base.port,
      method: 'POST',
      path: '/upload',
      agent,
      headers: { 'content-length': String(BODY.length) },
    });
    req.on('response', (res) => {
      status = res.statusCode ?? 0;
      res.resume();
    });
    // 'close' after the whole body went out and the answer came: the connection stays for the next request.
    req.on('close', () => resolve({ status, sent: req.writableFinished }));
    req.on('error', (e) => resolve({ status, sent: false, error: (e as NodeJS.ErrnoException).code ?? e.message }));
    req.end(BODY);
  });
}

describe('discarding unread bodies', () => {
  it(`reads at most ${DISCARDS_AT_ONCE} refused bodies at once, and every one to its end`, { timeout: 60_000 }, async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
    const results = await Promise.all(Array.from({ length: CLIENTS }, () => post(agent)));
    for (const r of results) {
      expect(r.error, 'no reset').toBeUndefined();
      expect(r.status).toBe(503);
      expect(r.sent, 'the whole body was sent').toBe(true);
    }
    // Every discard finished: each body was read to its end by the server.
    await expect.poll(() => bodyBytesSeen.length, { timeout: 30_000 }).toBe(CLIENTS);
    for (const n of bodyBytesSeen) expect(n).toBeGreaterThanOrEqual(BODY.length);
    expect(maxActive).toBeLessThanOrEqual(DISCARDS_AT_ONCE);
    expect(maxWaiting, 'some bodies waited for their turn').toBeGreaterThan(0);
    expect(discardStatus()).toEqual({ active: 0, waiting: 0 });
    // The kept-alive connections serve the next request.
    const again = await new Promise<number>((resolve) =>
      http.get({ host: base.hostname, port: base.port, path: '/', agent }, (res) => (res.resume(), resolve(res.statusCode ?? 0))),
    );
    expect(again).toBe(200);
    agent.destroy();
  });

  it('takes the turn from bodies that trickle, so an honest one behind them is discarded', { timeout: 30_000 }, async () => {
    // Two clients announce 10 MB and send 1 KB every 50 ms (above the minimum body rate): refused, their
    // bodies take both turns and would hold them for minutes.
    const tricklers = [0, 1].map(() => {
      const socket = net.connect(Number(base.port), base.hostname);
      socket.write(`POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000\r\n\r\n`);
      const timer = setInterval(() => socket.write(Buffer.alloc(1024, 'y')), 50);
      socket.on('error', () => undefined);
      socket.resume();
      return { socket, timer };
    });
    try {
      await expect.poll(() => discardStatus().active, { timeout: 10_000 }).toBe(DISCARDS_AT_ONCE);
      const agent = new http.Agent({ keepAlive: true });
      const honest = await post(agent);
      agent.destroy();
      expect(honest.error, 'no reset').toBeUndefined();
      expect(honest.status).toBe(503);
      expect(honest.sent, 'the honest body was read to its end').toBe(true);
      for (const t of tricklers) expect(t.socket.destroyed, 'the tricklers are still sending').toBe(false);

      // Accept first: a new connection pauses the bodies being discarded; they resume after it, and a
      // stream of connections (one every 5 ms, for 1.5 s) does not keep them paused.
      const discarding = refused.filter((r) => !r.complete && !r.destroyed && r.readableFlowing === true);
      expect(discarding.length).toBeGreaterThan(0);
      noteConnection();
      for (const r of discarding) expect(r.readableFlowing).toBe(false);
      await expect.poll(() => discarding.every((r) => r.readableFlowing === true), { timeout: 5_000 }).toBe(true);
      let flowingDuringStream = 0;
      const until = Date.now() + 1_500;
      while (Date.now() < until) {
        noteConnection();
        if (discarding.some((r) => r.readableFlowing === true)) flowingDuringStream++;
        await new Promise((r) => setTimeout(r, 5));
      }
      expect(flowingDuringStream, 'discards resumed during a stream of connections').toBeGreaterThan(0);
    } finally {
      for (const t of tricklers) {
        clearInterval(t.timer);
        t.socket.destroy();
      }
    }
  });
});
