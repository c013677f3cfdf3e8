/**
 * What the client uploads, and how it is sent so that a retry can send it again:
 * - bytes (`Uint8Array`, `ArrayBuffer`) and `Blob`/`File` (browsers and Node): held as a Blob, sent in a
 *   multipart FormData; every attempt re-reads the same Blob.
 * - `{ path }` (Node only): `fs.openAsBlob` (Node ≥ 19.8) gives a Blob backed by the file that is read lazily,
 *   in chunks, while the request is sent, and read again only if the request is retried: the file is never
 *   loaded into memory and never read twice for one attempt. `node:fs` is imported dynamically on this path
 *   only (through a computed specifier), so browser bundles contain no Node import.
 * - `{ stream }` (a web `ReadableStream` or any async iterable of bytes, e.g. a Node `Readable`): sent as a
 *   streamed multipart body (with `Content-Length` when `size` is given). A stream can be read once, so such
 *   an upload is not retried once any of it has been read; pass a path or a Blob to get retries. Streamed
 *   request bodies need Node or a browser that supports them (Chromium over HTTP/2); in browsers pass a Blob.
 */
import { FolioClientError } from './errors.js';
import type { BodySource } from './transport.js';

/** A file on disk (Node). */
export interface PathSource {
  path: string;
  /** Sent as the upload's file name (default: the path's base name). */
  filename?: string;
  contentType?: string;
}

/** A one-shot stream of bytes. Not retried once read (see the README). */
export interface StreamSource {
  stream: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;
  /** Byte length, when known: sent as Content-Length. */
  size?: number;
  filename?: string;
  contentType?: string;
}

/** Anything the client can upload. */
export type FileInput = Uint8Array | ArrayBuffer | Blob | PathSource | StreamSource;

interface NodeFs {
  openAsBlob?: (path: string, options?: { type?: string }) => Promise<Blob>;
  createReadStream(path: string): AsyncIterable<Uint8Array>;
  promises: { stat(path: string): Promise<{ size: number; isFile(): boolean }> };
}

/** `node:fs`, loaded only when a path is uploaded. The specifier is computed so no bundler follows it. */
async function nodeFs(): Promise<NodeFs> {
  const specifier = ['node', 'fs'].join(':');
  try {
    return (await import(/* @vite-ignore */ /* webpackIgnore: true */ specifier)) as NodeFs;
  } catch {
    throw new FolioClientError('UNSUPPORTED_ENVIRONMENT', 'Uploading from a path needs Node (node:fs); in a browser pass a Blob or File');
  }
}

export function isPathSource(v: unknown): v is PathSource {
  return typeof v === 'object' && v !== null && typeof (v as PathSource).path === 'string' && !(v instanceof Uint8Array);
}

export function isStreamSource(v: unknown): v is StreamSource {
  return typeof v === 'object' && v !== null && 'stream' in v && typeof (v as { stream: unknown }).stream === 'object';
}

function isBlob(v: unknown): v is Blob {
  return typeof Blob !== 'undefined' && v instanceof Blob;
}

export function baseName(p: string): string {
  return p.split(/[\\/]/).filter(Boolean).pop() ?? p;
}

/** An upload ready to send: a Blob (re-readable) or a one-shot stream. */
export type PreparedFile =
  { kind: 'blob'; blob: Blob; name?: string } | { kind: 'stream'; source: StreamSource; name?: string; reopen?: () => AsyncIterable<Uint8Array> };

/** Turns a FileInput into a Blob where that costs no copy of the file, or keeps the stream. */
export async function prepareFile(input: FileInput): Promise<PreparedFile> {
  if (input instanceof Uint8Array) return { kind: 'blob', blob: new Blob([input as BlobPart]) };
  if (input instanceof ArrayBuffer) return { kind: 'blob', blob: new Blob([input]) };
  if (isBlob(input)) return { kind: 'blob', blob: input, name: typeof File !== 'undefined' && input instanceof File ? input.name : undefined };
  if (isPathSource(input)) {
    const fs = await nodeFs();
    const st = await fs.promises.stat(input.path);
    if (!st.isFile()) throw new FolioClientError('INVALID_INPUT', `${input.path} is not a file`);
    const name = input.filename ?? baseName(input.path);
    if (typeof fs.openAsBlob === 'function') {
      return { kind: 'blob', blob: await fs.openAsBlob(input.path, input.contentType ? { type: input.contentType } : undefined), name };
    }
    // Older runtimes: a fresh read stream per attempt, so a retry reads the file again from the start.
    const source = { stream: fs.createReadStream(input.path), size: st.size, contentType: input.contentType };
    return { kind: 'stream', source, name, reopen: () => fs.createReadStream(input.path) };
  }
  if (isStreamSource(input)) return { kind: 'stream', source: input, name: input.filename };
  throw new FolioClientError('INVALID_INPUT', 'Expected a Uint8Array, ArrayBuffer, Blob, { path } or { stream }');
}

/** The bytes of an input (for JSON bodies, which carry the document in base64): read once. */
export async function readAll(input: FileInput): Promise<Uint8Array> {
  if (input instanceof Uint8Array) return input;
  if (input instanceof ArrayBuffer) return new Uint8Array(input);
  const prepared = await prepareFile(input);
  if (prepared.kind === 'blob') return new Uint8Array(await prepared.blob.arrayBuffer());
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const c of iterate(prepared.source.stream)) {
    chunks.push(c);
    total += c.length;
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

async function* iterate(stream: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  if (Symbol.asyncIterator in stream) {
    for await (const c of stream as AsyncIterable<Uint8Array>) yield typeof c === 'string' ? new TextEncoder().encode(c) : c;
    return;
  }
  const reader = (stream as ReadableStream<Uint8Array>).getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

function quoted(name: string): string {
  return name.replace(/[\r\n"\\]/g, (c) => (c === '"' ? '%22' : c === '\\' ? '\\\\' : ' '));
}

function boundary(): string {
  const rnd = new Uint8Array(12);
  globalThis.crypto.getRandomValues(rnd);
  return `----FolioClient${Array.from(rnd, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/** The request body for a `file` field: FormData for a Blob (re-readable), a streamed multipart body otherwise. */
export function multipartBody(prepared: PreparedFile, defaultName: string): BodySource {
  const name = prepared.name ?? defaultName;
  if (prepared.kind === 'blob') {
    return {
      replayable: true,
      make() {
        const form = new FormData();
        form.append('file', prepared.blob, name);
        return form;
      },
    };
  }
  const { source } = prepared;
  const reopenable = prepared.reopen;
  let touched = false;
  let used = false;
  const enc = new TextEncoder();
  const make = (): BodyInit => {
    if (used && !reopenable && touched) throw new FolioClientError('INVALID_INPUT', 'A stream upload cannot be sent twice');
    const data = used && reopenable ? reopenable() : source.stream;
    used = true;
    const b = boundary();
    const head = enc.encode(
      `--${b}\r\nContent-Disposition: form-data; name="file"; filename="${quoted(name)}"\r\n` +
        `Content-Type: ${source.contentType ?? 'application/octet-stream'}\r\n\r\n`,
    );
    const tail = enc.encode(`\r\n--${b}--\r\n`);
    const it = iterate(data)[Symbol.asyncIterator]();
    let phase: 'head' | 'body' | 'done' = 'head';
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (phase === 'head') {
          phase = 'body';
          controller.enqueue(head);
          return;
        }
        if (phase === 'body') {
          // From the first read on, the source may be partly consumed (or locked): no longer sendable again.
          touched = true;
          const { done, value } = await it.next();
          if (!done) {
            controller.enqueue(value);
            return;
          }
          phase = 'done';
          controller.enqueue(tail);
          return;
        }
        controller.close();
      },
      async cancel(reason) {
        await it.return?.(reason);
      },
    });
    body.headers = {
      'content-type': `multipart/form-data; boundary=${b}`,
      ...(source.size !== undefined ? { 'content-length': String(head.length + source.size + tail.length) } : {}),
    };
    return stream;
  };
  const body: BodySource = {
    replayable: Boolean(reopenable),
    streaming: true,
    touched: () => touched,
    make,
  };
  return body;
}

/**
 * A multipart body with several files under one field name (merge's repeated `files`) and text fields.
 * Always replayable: Blobs are re-read per attempt; a one-shot stream is read into a Blob first (a merge's
 * inputs are bounded by the server's 25 MB sum, so this holds at most that much).
 */
export async function multipartFilesBody(
  field: string,
  files: Array<{ input: FileInput; name: string }>,
  fields: Record<string, string | undefined> = {},
): Promise<BodySource> {
  const parts: Array<{ blob: Blob; name: string }> = [];
  for (const f of files) {
    const prepared = await prepareFile(f.input);
    const blob = prepared.kind === 'blob' ? prepared.blob : new Blob([(await readAll(f.input)) as BlobPart]);
    parts.push({ blob, name: f.name });
  }
  return {
    replayable: true,
    make() {
      const form = new FormData();
      for (const p of parts) form.append(field, p.blob, p.name);
      for (const [k, v] of Object.entries(fields)) if (v !== undefined) form.append(k, v);
      return form;
    },
  };
}
