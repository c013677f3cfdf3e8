/**
 * Reads a stream (a request body, a multipart file part) into ONE buffer. With a known size (Content-Length)
 * the buffer is allocated once at that size and every chunk is copied into place as it arrives: no list of
 * chunks plus a concatenated copy (2× the body at the end of every upload, and a garbage list of thousands
 * of small buffers), which is what Fastify's `parseAs: 'buffer'` and @fastify/multipart's `toBuffer()` do.
 * Without a size the chunks are collected and joined once at the end, bounded by `limit`.
 *
 * Hand-written because the body must be counted as it arrives (`onBytes`: the in-flight budget of a chunked
 * body, admission.ts) and preallocated from a size only the caller knows; no stream library does both.
 * Listeners rather than async iteration: leaving an async iterator destroys the stream, and destroying a
 * request destroys its socket, so a refused body could not be answered. Here the reader only detaches;
 * Node discards what is left once the answer is sent.
 */
import type { Readable } from 'node:stream';
import { FolioError } from '../errors.js';

export interface ReadBufferOptions {
  /** The announced size (Content-Length), if any: the body must be exactly that long. */
  length?: number;
  /**
   * An upper bound of the size without an exact one (a multipart file part is at most its request's
   * Content-Length): one buffer of that size is filled and the part used is returned; when more than 1 MB
   * of it stays unused the bytes are copied into an exact buffer once.
   */
  capacity?: number;
  /** Largest acceptable size; beyond: 413 FILE_TOO_LARGE, before reading when announced. */
  limit: number;
  /** Called with each chunk's size as it arrives; may throw to stop reading (answered with that error). */
  onBytes?: (n: number) => void;
  /** The 413's message. */
  tooLargeMessage?: string;
  /**
   * A refused body of an announced length up to this is read to its end (and discarded) before the refusal
   * is answered. Fastify closes the connection after a body-parser error; a client still sending would get
   * a reset instead of the answer, which a reset destroys in its socket buffer.
   */
  discardUpTo?: number;
}

/** Unused preallocated bytes beyond which a part is copied into a buffer of its own size. */
const SLACK = 1024 * 1024;

/** ArrayBuffers allocated by readIntoBuffer for one body or part, which nothing else views. */
const exclusive = new WeakSet<ArrayBufferLike>();

export function readIntoBuffer(stream: Readable, opts: ReadBufferOptions): Promise<Buffer> {
  const tooLarge = () =>
    new FolioError('FILE_TOO_LARGE', opts.tooLargeMessage ?? `The request body exceeds the size limit (${Math.round(opts.limit / 1024 / 1024)} MB)`);
  const length = opts.length;
  const discards = length !== undefined && opts.discardUpTo !== undefined && length <= opts.discardUpTo;
  /** Rejects once the rest of a refused body has been discarded (when it is announced and small enough). */
  const refuse = (e: unknown, reject: (e: unknown) => void) => {
    if (!discards || stream.readableEnded || stream.destroyed) return reject(e);
    const settle = () => reject(e);
    stream.on('data', () => undefined);
    stream.once('end', settle);
    stream.once('close', settle);
    stream.once('error', settle);
  };
  if (length !== undefined && length > opts.limit) return new Promise<Buffer>((_resolve, reject) => refuse(tooLarge(), reject));
  return new Promise<Buffer>((resolve, reject) => {
    const size = length ?? (opts.capacity !== undefined ? Math.min(opts.capacity, opts.limit) : undefined);
    // Never from Node's shared pool (small sizes would be): the buffer is this body's alone, so it can be
    // moved to an engine thread (movableBuffers) instead of copied.
    const target = size !== undefined ? Buffer.allocUnsafeSlow(size) : undefined;
    if (target) exclusive.add(target.buffer);
    const chunks: Buffer[] = [];
    let received = 0;
    const detach = () => {
      stream.removeListener('data', onData);
      stream.removeListener('end', onEnd);
      stream.removeListener('error', onError);
      stream.removeListener('close', onClose);
    };
    const fail = (e: unknown) => {
      detach();
      refuse(e, reject);
    };
    const onData = (chunk: Buffer) => {
      const end = received + chunk.length;
      if (end > opts.limit) return fail(tooLarge());
      if (target) {
        if (end > target.length) {
          return fail(
            new FolioError('VALIDATION_ERROR', 'The request body is longer than its Content-Length', {
              details: [{ field: 'body', issue: 'longer than Content-Length' }],
            }),
          );
        }
        chunk.copy(target, received);
      } else chunks.push(chunk);
      received = end;
      try {
        opts.onBytes?.(chunk.length);
      } catch (e) {
        fail(e);
      }
    };
    const onEnd = () => {
      detach();
      if (!target) return resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received));
      if (length === undefined) {
        return resolve(target.length - received > SLACK ? Buffer.from(target.subarray(0, received)) : target.subarray(0, received));
      }
      if (received !== target.length) {
        return reject(
          new FolioError('VALIDATION_ERROR', 'The request body is shorter than its Content-Length', {
            details: [{ field: 'body', issue: 'shorter than Content-Length' }],
          }),
        );
      }
      resolve(target);
    };
    const onError = (e: Error) => fail(e);
    // A request whose client left ends with 'close' and no 'end' (Node 20 also emits an 'aborted' error).
    const onClose = () => fail(new FolioError('VALIDATION_ERROR', 'The client closed the connection before the body was complete'));
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', onError);
    stream.once('close', onClose);
  });
}

/**
 * The ArrayBuffers behind these views that may be moved to another thread (EnginePool.run's `transfer`):
 * each either wholly covered by its view or allocated by readIntoBuffer for that one body or part (a file
 * part read into its request's preallocated buffer leaves a few bytes of framing unused). Never a buffer of
 * Node's shared pool (moving it would detach every other small Buffer in it), never one listed twice.
 * After the move the caller's views are empty: only for bytes the caller no longer reads.
 */
export function movableBuffers(...views: Array<Uint8Array | undefined>): ArrayBuffer[] {
  const out = new Set<ArrayBuffer>();
  for (const v of views) {
    if (!v || !(v.buffer instanceof ArrayBuffer) || v.buffer.byteLength === 0) continue;
    if ((v.byteOffset === 0 && v.byteLength === v.buffer.byteLength) || exclusive.has(v.buffer)) out.add(v.buffer);
  }
  return [...out];
}

/** A Content-Length header as a byte count, or undefined when absent or not a plain non-negative integer. */
export function announcedLength(header: string | string[] | undefined): number | undefined {
  if (typeof header !== 'string' || !/^\d{1,15}$/.test(header)) return undefined;
  return Number(header);
}
