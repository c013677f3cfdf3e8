/**
 * Uploads through @folio/client in Node, against a hash-echo server in a child process (it answers the
 * SHA-256 and size of the multipart `file` part it received):
 * - `{ path }` of a 20 MB file arrives intact, and the file is read once: this process's `rchar` (bytes read
 *   through read syscalls, /proc/self/io) grows by about one file size, not two (the server's reads are in
 *   another process, so they do not count).
 * - after a 503 + Retry-After, the retried upload re-sends the same bytes (same hash both times), for a path,
 *   bytes and a Blob.
 * - a one-shot `{ stream }` arrives intact (with Content-Length from `size`), and is not retried after a 503.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FolioClient, FolioUnavailableError, type RetryEvent } from '../../packages/client/src/index.js';
import { echoServer, okJson, scriptedServer, type EchoServer } from './local-server.js';

const MB = 1024 * 1024;
const SIZE = 20 * MB;
let dir: string;
let file: string;
let fileHash: string;

interface Echo {
  sha256: string;
  size: number;
  index: number;
  contentLength: string | null;
}

function rchar(): number | undefined {
  try {
    return Number(/^rchar: (\d+)$/m.exec(fs.readFileSync('/proc/self/io', 'utf8'))?.[1]);
  } catch {
    return undefined;
  }
}

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-client-upload-'));
  file = path.join(dir, 'big.docx');
  const bytes = crypto.randomBytes(SIZE);
  fs.writeFileSync(file, bytes);
  fileHash = crypto.createHash('sha256').update(bytes).digest('hex');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const echoes: EchoServer[] = [];
afterEach(async () => {
  await Promise.all(echoes.splice(0).map((e) => e.close()));
});
async function echo(fail503 = 0): Promise<EchoServer> {
  const e = await echoServer(fail503);
  echoes.push(e);
  return e;
}
const parse = (bytes: Uint8Array) => JSON.parse(new TextDecoder().decode(bytes)) as Echo;

describe('upload from a path (Node)', () => {
  it('sends a 20 MB file intact, reading it from disk once and without holding it in memory', async () => {
    const e = await echo();
    const client = new FolioClient({ baseUrl: e.url, apiKey: 'k', retry: false });
    const rss0 = process.memoryUsage().rss;
    const read0 = rchar();
    const res = await client.convert({ path: file }, { to: 'pdf' });
    const read1 = rchar();
    const rssGrowth = process.memoryUsage().rss - rss0;
    const echoed = parse(res.bytes);
    expect(echoed.sha256).toBe(fileHash);
    expect(echoed.size).toBe(SIZE);
    // The length is known up front (a file-backed Blob), so the server can refuse an oversized upload early.
    expect(Number(echoed.contentLength)).toBeGreaterThan(SIZE);
    if (read0 !== undefined && read1 !== undefined) {
      const read = read1 - read0;
      console.info(`[upload] rchar +${(read / MB).toFixed(1)} MB, RSS +${(rssGrowth / MB).toFixed(1)} MB for a ${SIZE / MB} MB file`);
      expect(read).toBeGreaterThanOrEqual(SIZE); // it was read (so the counter sees the reads) …
      expect(read).toBeLessThan(1.5 * SIZE); // … once
    }
    // RSS is only logged: without a forced GC it counts the already-sent chunks that are garbage but not yet
    // collected, so it is no measure of how often the file was read.
  }, 60_000);

  it('retries after a 503 + Retry-After and re-sends the same bytes', async () => {
    const e = await echo(1);
    const events: RetryEvent[] = [];
    const client = new FolioClient({ baseUrl: e.url, apiKey: 'k', retry: { baseDelayMs: 10 }, onRetry: (ev) => events.push(ev) });
    const res = await client.convert({ path: file, filename: 'report.docx' });
    const echoed = parse(res.bytes);
    expect(echoed.index).toBe(1);
    expect(echoed.sha256).toBe(fileHash);
    expect(events).toHaveLength(1);
    const first = events[0]!.error;
    expect(first).toBeInstanceOf(FolioUnavailableError);
    expect(first.retryAfter).toBe(1);
    expect(events[0]!.delayMs).toBeGreaterThanOrEqual(1000);
    // The refused attempt carried the same bytes (its hash is in the 503's details).
    expect(first.details).toEqual([{ field: 'sha256', issue: fileHash }]);
  }, 60_000);

  it('retries bytes and Blobs the same way', async () => {
    const bytes = new Uint8Array(crypto.randomBytes(256 * 1024));
    const hash = crypto.createHash('sha256').update(bytes).digest('hex');
    for (const input of [bytes, new Blob([bytes])]) {
      const e = await echo(1);
      const events: RetryEvent[] = [];
      const client = new FolioClient({ baseUrl: e.url, apiKey: 'k', retry: { baseDelayMs: 10 }, onRetry: (ev) => events.push(ev) });
      const echoed = parse((await client.convert(input, { from: 'md' })).bytes);
      expect(echoed).toMatchObject({ index: 1, sha256: hash, size: bytes.length });
      expect(events[0]!.error.details).toEqual([{ field: 'sha256', issue: hash }]);
    }
  }, 60_000);

  it('verify uploads a path as multipart (no base64)', async () => {
    const e = await echo();
    const client = new FolioClient({ baseUrl: e.url, apiKey: 'k' });
    const echoed = (await client.verify({ path: file })) as unknown as Echo;
    expect(echoed.sha256).toBe(fileHash);
  }, 60_000);
});

describe('upload from a stream', () => {
  it('streams a Node Readable with its size as Content-Length', async () => {
    const e = await echo();
    const client = new FolioClient({ baseUrl: e.url, apiKey: 'k' });
    const res = await client.convert({ stream: fs.createReadStream(file), size: SIZE, filename: 'big.docx' });
    const echoed = parse(res.bytes);
    expect(echoed.sha256).toBe(fileHash);
    expect(Number(echoed.contentLength)).toBeGreaterThan(SIZE);
  }, 60_000);

  it('streams a web ReadableStream of unknown size', async () => {
    const e = await echo();
    const client = new FolioClient({ baseUrl: e.url, apiKey: 'k' });
    const data = new TextEncoder().encode('# Title\n\nText\n');
    const stream = Readable.toWeb(Readable.from([data.subarray(0, 4), data.subarray(4)])) as ReadableStream<Uint8Array>;
    const echoed = parse((await client.convert({ stream, filename: 'a.md' })).bytes);
    expect(echoed.sha256).toBe(crypto.createHash('sha256').update(data).digest('hex'));
  });

  it('does not retry a one-shot stream after a 503 (it cannot be sent again)', async () => {
    const e = await echo(1);
    const client = new FolioClient({ baseUrl: e.url, apiKey: 'k', retry: { baseDelayMs: 10 } });
    const err = (await client.convert({ stream: fs.createReadStream(file), size: SIZE }).catch((x: unknown) => x)) as FolioUnavailableError;
    expect(err).toBeInstanceOf(FolioUnavailableError);
    expect(err.attempts).toBe(1);
    expect(err.details).toEqual([{ field: 'sha256', issue: fileHash }]);
  }, 60_000);
});

describe('documents in JSON bodies (annotate, annotateFields, sign)', () => {
  it('reads a { path } or { stream } once and sends it as base64; { url } and { base64 } go as they are', async () => {
    const small = path.join(dir, 'template.docx');
    const bytes = crypto.randomBytes(50_000);
    fs.writeFileSync(small, bytes);
    const s = await scriptedServer((_req, res) => okJson(res, { fields: [], document: { base64: '', contentType: 'x' }, report: {} }));
    try {
      const client = new FolioClient({ baseUrl: s.url, apiKey: 'k' });
      await client.annotateFields({ path: small });
      await client.annotate({ stream: fs.createReadStream(small) }, [{ id: 'name', type: 'text', value: 'Ada' }], { to: 'pdf' });
      await client.sign({ document: { url: 'https://example.com/a.pdf' }, signer: { name: 'Ada', email: 'a@example.org' }, auditTrail: [] });
      const bodies = s.arrivals.map((a) => JSON.parse(a.body.toString()) as { document: unknown });
      expect(bodies[0]!.document).toEqual({ base64: bytes.toString('base64') });
      expect(bodies[1]!.document).toEqual({ base64: bytes.toString('base64') });
      expect(bodies[2]!.document).toEqual({ url: 'https://example.com/a.pdf' });
      expect(s.arrivals[1]!.url).toBe('/v1/annotate?to=pdf');
      expect(s.arrivals.every((a) => a.headers['content-type'] === 'application/json')).toBe(true);
    } finally {
      await s.close();
    }
  });
});
