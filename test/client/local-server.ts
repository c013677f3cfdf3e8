/**
 * Small HTTP servers for the @folio/client tests: a scripted server in this process (each request gets the
 * next scripted answer, and what arrived is recorded with its time), and a hash-echo server in a child process
 * (so that the bytes it reads are not counted as this process's reads: see upload.test.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Arrival {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  at: number;
  bodyBytes: number;
  body: Buffer;
}

/** The `file` part of a multipart body (undefined when there is none). */
export function filePart(a: Arrival): Buffer | undefined {
  const b = /boundary=(?:"([^"]+)"|([^;]+))/.exec(a.headers['content-type'] ?? '');
  if (!b) return undefined;
  const boundary = b[1] ?? b[2]!;
  const first = a.body.indexOf(`--${boundary}`);
  if (first < 0) return undefined;
  const start = a.body.indexOf('\r\n\r\n', first) + 4;
  const end = a.body.lastIndexOf(`\r\n--${boundary}--`);
  return end > start ? a.body.subarray(start, end) : undefined;
}

export type Script = (req: http.IncomingMessage, res: http.ServerResponse, index: number) => void;

export interface ScriptedServer {
  url: string;
  arrivals: Arrival[];
  close(): Promise<void>;
}

/** Answers each request with `script(req, res, index)` once its body has been read. */
export async function scriptedServer(script: Script): Promise<ScriptedServer> {
  const arrivals: Arrival[] = [];
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer((req, res) => {
    const at = performance.now();
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      const index = arrivals.length;
      const body = Buffer.concat(chunks);
      arrivals.push({ method: req.method!, url: req.url!, headers: req.headers, at, bodyBytes: body.length, body });
      script(req, res, index);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrivals,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** The contract's error envelope. */
export function envelope(res: http.ServerResponse, status: number, code: string, extra: Record<string, string> = {}, details?: unknown): void {
  const requestId = (res.req.headers['x-request-id'] as string | undefined) ?? 'srv-generated';
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': requestId, ...extra });
  res.end(JSON.stringify({ code, error: http.STATUS_CODES[status], message: `${code} for the test`, requestId, ...(details ? { details } : {}) }));
}

export function okJson(res: http.ServerResponse, body: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': (res.req.headers['x-request-id'] as string) ?? 'x' });
  res.end(JSON.stringify(body));
}

/**
 * A child process that reads each multipart upload, and answers with the SHA-256 and size of its `file` part:
 * `{ sha256, size, index }` (200), or the same as a 503 + `Retry-After: 1` envelope for the first `fail503`
 * requests (the body is read in full first, so the hash tells what that attempt sent).
 */
const ECHO = `
const http = require('node:http');
const crypto = require('node:crypto');
const fail503 = Number(process.argv[1] || 0);
let index = 0;
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (d) => chunks.push(d));
  req.on('end', () => {
    const i = index++;
    const body = Buffer.concat(chunks);
    const b = /boundary=(?:"([^"]+)"|([^;]+))/.exec(req.headers['content-type'] || '');
    let part = Buffer.alloc(0);
    if (b) {
      const boundary = b[1] || b[2];
      const start = body.indexOf('\\r\\n\\r\\n', body.indexOf('--' + boundary)) + 4;
      const end = body.lastIndexOf('\\r\\n--' + boundary + '--');
      part = body.subarray(start, end);
    }
    const result = { sha256: crypto.createHash('sha256').update(part).digest('hex'), size: part.length, index: i, contentLength: req.headers['content-length'] || null };
    const requestId = req.headers['x-request-id'] || 'echo';
    if (i < fail503) {
      res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1', 'x-request-id': requestId });
      res.end(JSON.stringify({ code: 'SERVICE_UNAVAILABLE', error: 'Service Unavailable', message: 'busy', requestId, details: [{ field: 'sha256', issue: result.sha256 }] }));
    } else {
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': requestId });
      res.end(JSON.stringify(result));
    }
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write('PORT ' + server.address().port + '\\n'));
`;

export interface EchoServer {
  url: string;
  child: ChildProcess;
  close(): Promise<void>;
}

export async function echoServer(fail503 = 0): Promise<EchoServer> {
  const child = spawn(process.execPath, ['-e', ECHO, String(fail503)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /PORT (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', (code) => reject(new Error(`echo server exited (${code})`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    close: async () => {
      child.kill('SIGKILL');
      await new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once('exit', r)));
    },
  };
}
