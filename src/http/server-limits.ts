/**
 * Time and connection budgets of one Node HTTP server (the API's and the ingest's): how long a client may
 * take to send its headers and its body, how long an idle keep-alive connection stays open, how many
 * connections are open at once, and how long a non-document exchange may take as a whole. Every timeout
 * answers 408 (503 when the client had sent everything and the server was the slow one) in the error
 * envelope while an answer is still possible, and closes the connection.
 *
 * Node gives the headers timeout, the whole-request receive timeout, the keep-alive timeout and the
 * connection cap; what it lacks is written here (no library does it for a plain http.Server):
 * - a body rate watchdog, after Apache's mod_reqtimeout: a body must start within `bodyTimeoutMs`, then
 *   keep up `bodyMinBytesPerSecond` on average, and never stall for `bodyTimeoutMs`. Node's
 *   `requestTimeout` alone would hold a stalled 1-byte body as long as a 25 MB one being sent honestly.
 * - a whole-exchange timeout for every route that is not a document endpoint (those have their own
 *   wall-time budget, REQUEST_TIMEOUT_MS, src/budget/).
 * - `100 Continue` only when the application starts reading the body: Node sends it on arrival, before
 *   routing and authentication, so a client would send a 25 MB body to a 404 or a missing key.
 * - the envelope for a request without `Host` and for an unknown `Expect` (Node answers both with an empty body).
 * Both checks run on one sweep per server (no timer, listener or object per request; one 'close' listener
 * per connection): each connection notes its current request on its socket, and the sweep looks at every
 * connection every `sweepMs` (a quarter of the shortest budget, at most a second).
 */
import fs from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { rawErrorEnvelope } from './envelope.js';
import { noteConnection, paceDiscard } from './body-discard.js';
import type { ErrorCode } from '../errors.js';
import type { Config } from '../config/index.js';

export interface ServerLimits {
  /** From a connection's (or a request's) first byte to the end of its headers (Node `headersTimeout`). */
  headersTimeoutMs: number;
  /** The longest a body may take to start, and the longest it may stall once started. */
  bodyTimeoutMs: number;
  /** Average body rate a client must keep up after `bodyTimeoutMs` (bytes per second). */
  bodyMinBytesPerSecond: number;
  /** Receiving one whole request, headers and body, whatever its rate (Node `requestTimeout`). */
  receiveTimeoutMs: number;
  /** An idle keep-alive connection is closed after this (Node `keepAliveTimeout`). */
  keepAliveTimeoutMs: number;
  /** A non-document exchange (request in, answer out) is answered 408/503 after this; 0 turns it off. */
  exchangeTimeoutMs: number;
  /** Connections open at once; beyond it new connections are closed on arrival (Node `maxConnections`). */
  maxConnections: number;
}

/** The soft limit on open file descriptors of this process (`ulimit -n`), from /proc; undefined when unknown. */
export function openFileLimit(procLimits = '/proc/self/limits'): number | undefined {
  try {
    const m = /^Max open files\s+(\d+|unlimited)\s/m.exec(fs.readFileSync(procLimits, 'utf8'));
    if (!m) return undefined;
    return m[1] === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(m[1]);
  } catch {
    return undefined;
  }
}

/** Descriptors kept for everything but client sockets: LibreOffice pipes, worker threads, files, PostgreSQL, Redis, SMTP, logs. */
const RESERVED_MIN = 512;
const RESERVED_SHARE = 0.1;
/** The cap when nothing else bounds it: an idle keep-alive connection costs the API about 5 KB (3,000: +15 MB RSS). */
const DEFAULT_MAX_CONNECTIONS = 10_000;

/**
 * The connection cap each server gets: the configured one (MAX_CONNECTIONS) or 10,000, and never more
 * than its share of the descriptors left after a reserve (10 %, at least 512) when `servers` share one
 * process (`main.js all`): reaching the descriptor limit would fail every file, pipe and database
 * connection of the process too, not only new clients.
 */
export function connectionCap(configured: number | undefined, fdLimit: number | undefined, servers = 1): number {
  const wanted = configured ?? DEFAULT_MAX_CONNECTIONS;
  if (fdLimit === undefined) return wanted;
  const usable = fdLimit - Math.max(RESERVED_MIN, Math.floor(fdLimit * RESERVED_SHARE));
  return Math.max(16, Math.min(wanted, Math.floor(usable / servers)));
}

/**
 * Marks a request the exchange timeout must not answer: its route has its own wall-time budget (document
 * endpoints), or its outcome must reach the client whatever it takes (an API key shown only once).
 */
export function exemptFromExchangeTimeout(req: IncomingMessage): void {
  (req as IncomingMessage & { [EXEMPT]?: boolean })[EXEMPT] = true;
}

const EXEMPT = Symbol('folio.exchangeExempt');
const EXCHANGE = Symbol('folio.exchange');

/**
 * The request a connection is exchanging now, kept on its socket and reused for the connection's next
 * request: no object per request, and nothing retained once the sweep sees it answered. (A pipelined
 * request replaces the one before it here; both stay under Node's headers and receive timeouts.)
 */
interface Exchange {
  req?: IncomingMessage & { [EXEMPT]?: boolean; _dumped?: boolean };
  res?: ServerResponse & { _sent100?: boolean };
  arrived: number;
  hasBody: boolean;
  /** When the body may start arriving (headers in, or 100 Continue sent); undefined while it may not. */
  bodyFrom?: number;
  /** socket.bytesRead when the body clock started, and at the last sweep. */
  bytesAtStart: number;
  lastBytes: number;
  lastProgress: number;
  lastSweep: number;
}
type LimitedSocket = Socket & { [EXCHANGE]?: Exchange };

export interface AppliedLimits extends ServerLimits {
  fdLimit?: number;
}

/**
 * Applies `limits` to `server` before it listens. The server's 'request' listeners (Fastify's handler) are
 * wrapped, not replaced: every request passes the Host check and is noted on its socket, then goes to them
 * unchanged.
 */
export function applyServerLimits(
  server: Server,
  limits: ServerLimits,
  fdLimit = openFileLimit(),
  /** Requests the exchange timeout must not answer (asked only once one is past it). */
  exempt?: (req: IncomingMessage) => boolean,
): AppliedLimits {
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.receiveTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.maxConnections = limits.maxConnections;
  // Node checks headers and request timeouts every 30 s by default, so a 10 s timeout fired after up to
  // 40 s; read when the server starts listening.
  const shortest = Math.min(limits.headersTimeoutMs, limits.receiveTimeoutMs, limits.bodyTimeoutMs, limits.exchangeTimeoutMs || Infinity);
  const sweepMs = Math.max(50, Math.min(1000, Math.floor(shortest / 4)));
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = sweepMs;
  // The missing Host is answered below, with the envelope.
  (server as Server & { requireHostHeader: boolean }).requireHostHeader = false;

  // At the cap Node closes each new connection on arrival ('drop'); a new client is worth more than an idle
  // kept-alive connection (or one that has sent nothing yet), so those are closed to make room — at most
  // once a second, so a flood of new connections does not become a loop of closing.
  let lastMakeRoom = 0;
  server.on('drop', () => {
    const now = Date.now();
    if (now - lastMakeRoom < 1000) return;
    lastMakeRoom = now;
    server.closeIdleConnections();
  });

  const sockets = new Set<LimitedSocket>();
  server.on('connection', (socket: LimitedSocket) => {
    // Bodies being discarded give way while connections are being accepted (body-discard.ts).
    noteConnection();
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  const handlers = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  server.removeAllListeners('request');
  const dispatch = (req: IncomingMessage, res: ServerResponse) => {
    for (const handler of handlers) handler.call(server, req, res);
  };

  const admit = (req: IncomingMessage, res: ServerResponse): Exchange | undefined => {
    // An unread body (a refused upload) is discarded in turn with the others, not all at once: reading them
    // all would starve the accept of new connections (body-discard.ts).
    paceDiscard(req);
    if (req.httpVersionMajor === 1 && req.httpVersionMinor === 1 && req.headers.host === undefined) {
      // RFC 9112 §3.2: a 1.1 request without Host is answered 400.
      answer(res, 400, 'VALIDATION_ERROR', 'An HTTP/1.1 request needs a Host header');
      return undefined;
    }
    const now = Date.now();
    const socket = req.socket as LimitedSocket;
    const bytes = socket.bytesRead;
    const hasBody = req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';
    let x = socket[EXCHANGE];
    if (x === undefined) {
      x = { req, res, arrived: now, hasBody, bodyFrom: undefined, bytesAtStart: bytes, lastBytes: bytes, lastProgress: now, lastSweep: now };
      socket[EXCHANGE] = x;
    } else {
      x.req = req;
      x.res = res;
      x.arrived = x.lastProgress = x.lastSweep = now;
      x.hasBody = hasBody;
      x.bodyFrom = undefined;
      x.bytesAtStart = x.lastBytes = bytes;
    }
    return x;
  };

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const x = admit(req, res);
    if (!x) return;
    x.bodyFrom = x.arrived;
    dispatch(req, res);
  });

  // `Expect: 100-continue`: Node emits this instead of 'request' (and sends no 100) because a listener
  // exists. The 100 is written when the application first reads the body, which Fastify does only after
  // routing, the auth hook, the in-flight slot and validation; a 404, 401 or 429 is answered without it, and
  // Node then closes the connection (the client may already be sending the body).
  server.on('checkContinue', (req: IncomingMessage & { _dumped?: boolean }, res: ServerResponse & { _sent100?: boolean }) => {
    const x = admit(req, res);
    if (!x) return;
    const r = req as IncomingMessage & { _read: (n: number) => void };
    const read = r._read;
    r._read = function (this: IncomingMessage, n: number) {
      r._read = read;
      // Node drains an unread body itself after a final answer (`_dump`): no 100 for that.
      if (!res.headersSent && !res._sent100 && !req._dumped) {
        res.writeContinue();
        if (x.req === req) {
          const now = Date.now();
          x.bodyFrom = x.lastProgress = x.lastSweep = now;
          x.bytesAtStart = x.lastBytes = req.socket.bytesRead;
        }
      }
      read.call(this, n);
    };
    dispatch(req, res);
  });

  // Any other expectation cannot be met (RFC 9110 §10.1.1): 417, in the envelope.
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => {
    answer(res, 417, 'VALIDATION_ERROR', 'Only "Expect: 100-continue" is supported');
  });

  const sweep = setInterval(() => {
    const now = Date.now();
    for (const socket of sockets) {
      const x = socket[EXCHANGE];
      const req = x?.req;
      const res = x?.res;
      if (!x || !req || !res) continue;
      const bodyDone = !x.hasBody || req.complete;
      if (res.writableFinished && bodyDone) {
        // Answered and read: nothing to watch, nothing kept alive for it.
        x.req = x.res = undefined;
        continue;
      }
      if (!bodyDone && x.bodyFrom !== undefined && bodyTooSlow(x, req, now, limits)) {
        const rule = `a body must start within ${limits.bodyTimeoutMs} ms, never stall that long, and then average ${limits.bodyMinBytesPerSecond} bytes/s`;
        timedOut(x, req, res, 408, 'VALIDATION_ERROR', `The request body arrived too slowly (${rule})`);
        continue;
      }
      if (limits.exchangeTimeoutMs > 0 && !req[EXEMPT] && !res.headersSent && now - x.arrived > limits.exchangeTimeoutMs && !exempt?.(req)) {
        if (bodyDone) {
          timedOut(x, req, res, 503, 'SERVICE_UNAVAILABLE', `The server did not answer within ${limits.exchangeTimeoutMs} ms; retry later`);
        } else {
          timedOut(x, req, res, 408, 'VALIDATION_ERROR', `The request was not received within ${limits.exchangeTimeoutMs} ms`);
        }
      }
    }
  }, sweepMs).unref();
  server.once('close', () => clearInterval(sweep));

  const timedOut = (x: Exchange, req: IncomingMessage, res: ServerResponse, status: number, code: ErrorCode, message: string) => {
    x.req = x.res = undefined;
    if (res.headersSent) {
      // An answer is already out (e.g. a 401 before the body was read): only the connection is left to end.
      req.socket.destroy();
      return;
    }
    answer(res, status, code, message);
  };

  return { ...limits, fdLimit };
}

/**
 * Has the body fallen behind? Progress (bytes read from the socket) resets the stall clock; time during which
 * the application, not the client, holds the body back (data waiting unread in the request's buffer) is
 * not counted against the client.
 */
function bodyTooSlow(entry: Exchange, req: IncomingMessage, now: number, limits: ServerLimits): boolean {
  const bytes = req.socket.bytesRead;
  const sinceLastSweep = now - entry.lastSweep;
  entry.lastSweep = now;
  if (req.readableLength > 0) {
    // Unread data is waiting in the request (Node stops reading the socket when it is full): the clocks stop.
    entry.bodyFrom! += sinceLastSweep;
    entry.lastProgress = now;
  } else if (bytes !== entry.lastBytes) {
    entry.lastProgress = now;
  }
  entry.lastBytes = bytes;
  if (now - entry.lastProgress > limits.bodyTimeoutMs) return true;
  const elapsed = now - entry.bodyFrom!;
  if (elapsed <= limits.bodyTimeoutMs) return false;
  return bytes - entry.bytesAtStart < (limits.bodyMinBytesPerSecond * (elapsed - limits.bodyTimeoutMs)) / 1000;
}

/** A final answer in the envelope, and the connection closed after it (the rest of the request is unread). */
function answer(res: ServerResponse, status: number, code: ErrorCode, message: string): void {
  const { head, body } = rawErrorEnvelope(status, message, code);
  if (code === 'SERVICE_UNAVAILABLE') head['Retry-After'] = '5';
  res.writeHead(status, head);
  res.end(body);
}

/** The settings (src/config) as one server's limits; `receiveTimeoutMs` and the number of servers in the process are the server's own. */
export function limitsFromConfig(
  config: Pick<
    Config,
    'httpHeadersTimeoutMs' | 'httpBodyTimeoutMs' | 'httpBodyMinBytesPerSecond' | 'httpKeepAliveTimeoutMs' | 'httpExchangeTimeoutMs' | 'maxConnections'
  >,
  receiveTimeoutMs: number,
  servers: number,
  fdLimit = openFileLimit(),
): ServerLimits {
  return {
    headersTimeoutMs: config.httpHeadersTimeoutMs,
    bodyTimeoutMs: config.httpBodyTimeoutMs,
    bodyMinBytesPerSecond: config.httpBodyMinBytesPerSecond,
    // Node requires the headers timeout to be at most the request timeout.
    receiveTimeoutMs: Math.max(receiveTimeoutMs, config.httpHeadersTimeoutMs),
    keepAliveTimeoutMs: config.httpKeepAliveTimeoutMs,
    exchangeTimeoutMs: config.httpExchangeTimeoutMs,
    maxConnections: connectionCap(config.maxConnections, fdLimit, servers),
  };
}
