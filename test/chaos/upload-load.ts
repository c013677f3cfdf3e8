/**
 * A burst of large uploads against a running API, shared by the chaos test (test/chaos/uploads.test.ts) and
 * the capacity benchmark (bench/pressure.ts). The load generator must not be what runs out of memory: every
 * upload writes the same document buffer (multipart: a small head and tail around it; JSON: one body
 * buffer of the base64 text), so 100 concurrent 24 MB uploads cost this process 24–32 MB, not 2.4 GB. Node's
 * `http.request` is used rather than fetch so the body is written from that buffer without a copy and a
 * connection reset is told apart from an answer.
 */
import http from 'node:http';
import { MB, descendants, rssOf } from '../adversarial/server.js';

export type BodyKind = 'multipart' | 'json';

/** Kept-alive connections, as fetch and @folio/client use them (a server discards a refused body on them). */
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

/**
 * An unsigned PDF of about `size` bytes whose bulk is one stream object of filler: a document verify reads
 * as it is (200, no signatures), so an upload of it is an honest one. The filler is not random (the bytes
 * do not matter to the reader, and random bytes would only slow the build down).
 */
export function bigPdf(size: number): Buffer {
  const head = '%PDF-1.7\n%\xe2\xe3\xcf\xd3\n';
  const fillerLength = Math.max(0, size - 600);
  const objects: string[] = [
    '1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n',
    '2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n',
    '3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>\nendobj\n',
  ];
  const parts: Buffer[] = [Buffer.from(head, 'latin1')];
  const offsets: number[] = [];
  let at = parts[0]!.length;
  for (const o of objects) {
    offsets.push(at);
    const b = Buffer.from(o, 'latin1');
    parts.push(b);
    at += b.length;
  }
  offsets.push(at);
  const streamHead = Buffer.from(`4 0 obj\n<< /Length ${fillerLength} >>\nstream\n`, 'latin1');
  const filler = Buffer.alloc(fillerLength, '% filler line of an honest large PDF upload\n');
  const streamTail = Buffer.from('\nendstream\nendobj\n', 'latin1');
  parts.push(streamHead, filler, streamTail);
  at += streamHead.length + filler.length + streamTail.length;
  const xref = [`xref\n0 5\n0000000000 65535 f \n`, ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`)].join('');
  parts.push(Buffer.from(`${xref}trailer\n<< /Size 5 /Root 1 0 R >>\nstartxref\n${at}\n%%EOF\n`, 'latin1'));
  return Buffer.concat(parts);
}

/** A request body that is written as a few buffers (the document itself never copied), with its headers. */
export interface PreparedBody {
  kind: BodyKind;
  contentType: string;
  pieces: Buffer[];
  length: number;
}

export function prepareBody(kind: BodyKind, document: Buffer, fileName = 'large.pdf'): PreparedBody {
  if (kind === 'json') {
    // The JSON body is its own buffer (the base64 text is 4/3 of the document); built once, sent by all.
    const body = Buffer.from(`{"document":{"base64":"${document.toString('base64')}"}}`, 'latin1');
    return { kind, contentType: 'application/json', pieces: [body], length: body.length };
  }
  const boundary = '----folio-chaos-boundary-7f3a9c';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\nContent-Type: application/pdf\r\n\r\n`,
    'latin1',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`, 'latin1');
  return {
    kind,
    contentType: `multipart/form-data; boundary=${boundary}`,
    pieces: [head, document, tail],
    length: head.length + document.length + tail.length,
  };
}

export interface UploadResult {
  status: number;
  retryAfter?: string;
  /** The error code of an envelope answer. */
  code?: string;
  ms: number;
  /** No HTTP answer: the socket error (ECONNRESET, EPIPE, timeout). */
  error?: string;
}

/**
 * One POST of a prepared body. A server that answers early (503 before reading the body) and closes may
 * make the write fail with EPIPE/ECONNRESET after the answer arrived: the answer counts, as a client that
 * reads responses while sending would see it.
 */
export interface UploadOptions {
  timeoutMs?: number;
  /** No Content-Length: the body goes out in 1 MB chunks. */
  chunked?: boolean;
  /** `Connection: close` on a connection of its own, instead of a kept-alive one. */
  close?: boolean;
}

export function upload(baseUrl: string, path: string, apiKey: string, body: PreparedBody, options: UploadOptions = {}): Promise<UploadResult> {
  const { timeoutMs = 120_000, chunked = false, close = false } = options;
  const url = new URL(path, baseUrl);
  const t0 = performance.now();
  return new Promise((resolve) => {
    let answered: UploadResult | undefined;
    let settled = false;
    const settle = (r: UploadResult) => {
      if (settled) return;
      settled = true;
      resolve(r);
    };
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method: 'POST',
        agent: close ? false : agent,
        // Chunked: no Content-Length, so the server counts the body as it arrives.
        headers: {
          authorization: `Bearer ${apiKey}`,
          'content-type': body.contentType,
          ...(chunked ? {} : { 'content-length': String(body.length) }),
        },
      },
      (res) => {
        // The status and Retry-After count from the moment they arrive: a server that answers before reading
        // the body may close the connection before the rest of the answer is read.
        const early = res.headers['retry-after'];
        answered = { status: res.statusCode ?? 0, ...(early !== undefined ? { retryAfter: String(early) } : {}), ms: performance.now() - t0 };
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          // Only the start of an answer is kept: enough for the envelope's code.
          if (size < 4096) chunks.push(c);
          size += c.length;
        });
        res.on('end', () => {
          let code: string | undefined;
          try {
            code = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { code?: string }).code;
          } catch {
            /* not an envelope (a 200 answer) or cut */
          }
          const retryAfter = res.headers['retry-after'];
          answered = {
            status: res.statusCode ?? 0,
            ...(retryAfter !== undefined ? { retryAfter: String(retryAfter) } : {}),
            ...(code ? { code } : {}),
            ms: performance.now() - t0,
          };
          settle(answered);
        });
        res.on('error', (e) => settle(answered ?? { status: 0, error: (e as NodeJS.ErrnoException).code ?? e.message, ms: performance.now() - t0 }));
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error('timeout')));
    req.on('error', (e) => {
      // An answer already read wins over the write error that follows an early answer.
      setTimeout(() => settle(answered ?? { status: 0, error: (e as NodeJS.ErrnoException).code ?? e.message, ms: performance.now() - t0 }), 50);
    });
    // Chunked bodies go out in 1 MB chunks, as a streaming client sends them.
    for (const piece of body.pieces) {
      if (!chunked) req.write(piece);
      else for (let i = 0; i < piece.length; i += MB) req.write(piece.subarray(i, i + MB));
    }
    req.end();
  });
}

/** RSS of a process and all its descendants (the API, its LibreOffice workers and their helpers). */
export function treeRss(pid: number): number {
  return (rssOf(pid) ?? 0) + descendants(pid).reduce((sum, d) => sum + d.rss, 0);
}

export interface BurstOptions {
  baseUrl: string;
  path: string;
  /** One key per client; each sends `perKey` uploads at once. */
  keys: string[];
  perKey: number;
  body: PreparedBody;
  /** The process whose tree RSS is sampled (every 50 ms) during the burst. */
  pid: number;
  timeoutMs?: number;
}

export interface BurstResult {
  results: UploadResult[];
  /** Highest tree RSS seen during the burst, in bytes. */
  peakRss: number;
  /** Highest RSS of the API process alone. */
  peakMainRss: number;
  ms: number;
}

/** Every upload of the burst at once (keys × perKey), RSS sampled throughout. */
export async function burst(o: BurstOptions): Promise<BurstResult> {
  let peakRss = 0;
  let peakMainRss = 0;
  const sample = () => {
    peakRss = Math.max(peakRss, treeRss(o.pid));
    peakMainRss = Math.max(peakMainRss, rssOf(o.pid) ?? 0);
  };
  sample();
  const timer = setInterval(sample, 50);
  const t0 = performance.now();
  try {
    const results = await Promise.all(
      o.keys.flatMap((key) => Array.from({ length: o.perKey }, () => upload(o.baseUrl, o.path, key, o.body, { timeoutMs: o.timeoutMs }))),
    );
    sample();
    return { results, peakRss, peakMainRss, ms: performance.now() - t0 };
  } finally {
    clearInterval(timer);
  }
}

/** Answers by status (0 = no answer), e.g. `{ 200: 40, 503: 60 }`. */
export function statusCounts(results: UploadResult[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of results) {
    const k = r.status === 0 ? `no answer (${r.error})` : String(r.status);
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

/**
 * Waits until the process tree's RSS is at most `target` bytes (sampled every 500 ms) or `withinMs` passed;
 * answers the RSS and the time it took.
 */
export async function settleRss(pid: number, target: number, withinMs: number): Promise<{ rss: number; ms: number }> {
  const t0 = performance.now();
  let rss = treeRss(pid);
  while (rss > target && performance.now() - t0 < withinMs) {
    await new Promise((r) => setTimeout(r, 500));
    rss = treeRss(pid);
  }
  return { rss, ms: performance.now() - t0 };
}
