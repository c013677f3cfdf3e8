/**
 * How any thread (an engine thread, the main thread of the API or the CLI) asks the key host thread for a
 * signature: a digest goes out on the host's BroadcastChannel, the signature comes back on the asking
 * signer's own reply channel. Only digests and signatures cross; the key and its sessions stay in the host.
 *
 * As in src/native/remote.ts, the request channel is opened to post and closed again (a thread that kept it
 * open would receive every other thread's requests); each ChannelSigner keeps one reply channel, unreferenced
 * so that it never holds a process open, while a pending request's timer does.
 */
import { randomUUID } from 'node:crypto';
import { BroadcastChannel, threadId } from 'node:worker_threads';
import { FolioError } from '../../errors.js';
import type { Signature, SignatureAlgorithm, SignerThreadData, ThreadableSigner, ToBeSigned } from './types.js';

export interface SignMessage {
  id: number;
  /** The asking signer's reply channel. */
  replyTo: string;
  digest: Uint8Array;
}

export type SignReply =
  | { id: number; ok: true; signature: Uint8Array; algorithm: SignatureAlgorithm }
  /** The key cannot sign now: the request answers 503 with `retryAfter`. */
  | { id: number; ok: false; message: string; retryAfter: number };

/** The 503 every way of not reaching the key ends in: the document is not signed, and the caller may retry. */
export function keyUnavailable(message: string, retryAfter: number): FolioError {
  return new FolioError('SERVICE_UNAVAILABLE', `The document was not signed: the signing key cannot be reached (${message}). Retry later.`, {
    retryAfter,
  });
}

export class ChannelSigner implements ThreadableSigner {
  private replies?: BroadcastChannel;
  private replyName?: string;
  private next = 1;
  private readonly pending = new Map<number, { resolve: (s: Signature) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();

  constructor(
    readonly keyName: string,
    readonly algorithm: SignatureAlgorithm,
    private readonly channel: string,
    /** How long an answer may take: the host's own operation limit plus the way there and back. */
    private readonly timeoutMs: number,
  ) {}

  sign(tbs: ToBeSigned): Promise<Signature> {
    const replyTo = this.replyChannel();
    const id = this.next++;
    return new Promise<Signature>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(keyUnavailable(`no answer from the key host within ${Math.round(this.timeoutMs / 1000)} s`, 5));
      }, this.timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      const out = new BroadcastChannel(this.channel);
      out.postMessage({ id, replyTo, digest: tbs.digest } satisfies SignMessage);
      out.close();
    });
  }

  threadData(): SignerThreadData {
    return { kind: 'channel', keyName: this.keyName, algorithm: this.algorithm, channel: this.channel, timeoutMs: this.timeoutMs };
  }

  /** Stops listening; pending requests fail as unavailable. */
  close(): void {
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(keyUnavailable('the signer was closed', 5));
      this.pending.delete(id);
    }
    this.replies?.close();
    this.replies = undefined;
  }

  private replyChannel(): string {
    if (this.replies && this.replyName) return this.replyName;
    this.replyName = `${this.channel}:reply:${threadId}:${randomUUID()}`;
    const replies = new BroadcastChannel(this.replyName);
    replies.onmessage = (event) => {
      const reply = (event as unknown as { data: SignReply }).data;
      const p = this.pending.get(reply.id);
      if (!p) return; // answered after its timeout
      this.pending.delete(reply.id);
      clearTimeout(p.timer);
      if (reply.ok) p.resolve({ signature: reply.signature, algorithm: reply.algorithm });
      else p.reject(keyUnavailable(reply.message, reply.retryAfter));
    };
    replies.unref();
    this.replies = replies;
    return this.replyName;
  }
}
