/**
 * The main thread's side of native work asked for by engine worker threads: it starts each child (through
 * bounded-child.ts, the one place that spawns), answers with what the child did, and SIGKILLs every child
 * of a job when the pool ends that job — done, timed out, aborted by the client, out of the request's
 * deadline.
 *
 * Why the main thread: a child started from a worker thread is killed with that thread (parent-death signal)
 * but never reaped — libuv reaps only the children of a live loop, and Node has no waitpid — so every
 * terminated job left a zombie until the server exited, and zombies count against the container's pids
 * limit (after which LibreOffice and pdftoppm could no longer be forked). The main loop lives as long as
 * the server and reaps every child it starts.
 */
import { randomUUID } from 'node:crypto';
import { BroadcastChannel } from 'node:worker_threads';
import { runBounded } from './bounded-child.js';
import { replyChannel, type NativeReply, type NativeRequest } from './protocol.js';

export class NativeRunner {
  /** The request channel's name, handed to the worker threads (workerData.nativeChannel). */
  readonly channelName = `folio-native-${randomUUID()}`;
  private readonly channel: BroadcastChannel;
  /** Jobs the pool is running → their children still running (request id → its kill switch). */
  private readonly jobs = new Map<number, Map<string, AbortController>>();
  /** Children started and not yet reaped (their promise settles on 'close', after the exit was collected). */
  private live = 0;
  private closed = false;

  constructor() {
    this.channel = new BroadcastChannel(this.channelName);
    // The channel must not keep a server that is otherwise done from exiting.
    this.channel.unref();
    this.channel.onmessage = (event) => this.receive((event as unknown as { data: NativeRequest }).data);
  }

  /** The pool hands a job to a thread: children may be started for it from now on. */
  beginJob(jobId: number): void {
    if (!this.closed) this.jobs.set(jobId, new Map());
  }

  /** The job is over, however it ended: its children still running are SIGKILLed, and later requests refused. */
  endJob(jobId: number): void {
    const runs = this.jobs.get(jobId);
    this.jobs.delete(jobId);
    for (const run of runs?.values() ?? []) run.abort();
  }

  /** Children started and not yet reaped. */
  running(): number {
    return this.live;
  }

  close(): void {
    this.closed = true;
    for (const jobId of [...this.jobs.keys()]) this.endJob(jobId);
    this.channel.close();
  }

  private receive(msg: NativeRequest): void {
    if (msg.type === 'cancel') {
      for (const runs of this.jobs.values()) runs.get(msg.id)?.abort();
      return;
    }
    const runs = this.jobs.get(msg.jobId);
    if (!runs) {
      // The job ended between the thread's request and its arrival here (terminated thread, message in
      // flight): nothing is started for it.
      this.reply({ id: msg.id, ok: false, error: { code: 'SERVICE_UNAVAILABLE', message: 'The request was abandoned', retryAfter: 1 } });
      return;
    }
    const kill = new AbortController();
    runs.set(msg.id, kill);
    this.live++;
    runBounded(msg.command, msg.args, { ...msg.limits, input: msg.input, signal: kill.signal })
      .then(
        (result) => this.reply({ id: msg.id, ok: true, result }),
        (e: unknown) => this.reply({ id: msg.id, ok: false, error: { message: (e as Error)?.message ?? String(e) } }),
      )
      .finally(() => {
        this.live--;
        runs.delete(msg.id);
      });
  }

  /** Posted on the request's own channel; nobody listens when the thread is gone, and that is fine. */
  private reply(reply: NativeReply): void {
    const out = new BroadcastChannel(replyChannel(this.channelName, reply.id));
    out.postMessage(reply);
    out.close();
  }
}
