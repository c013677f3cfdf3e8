/**
 * The main thread's handle on the key host thread (`key-host-thread.ts`): starts it, waits for its start-up
 * checks (a failure becomes the one-line ConfigError naming the setting), keeps its health for /v1/health,
 * restarts it if it stops, and closes it on shutdown. Its `signer` is the ChannelSigner every thread uses.
 */
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { ConfigError } from '../../config/index.js';
import { ChannelSigner } from './channel.js';
import type { HostMessage, KeyHostData } from './key-host-thread.js';
import { publicReason, type RemoteKeySpec } from './remote-key.js';
import type { SignatureAlgorithm } from './types.js';

export interface KeyHostOptions {
  spec: RemoteKeySpec;
  keyName: string;
  certificateDer: Uint8Array;
  algorithm: SignatureAlgorithm;
  unavailableVariable: string;
  certificateVariable: string;
  logger: Logger;
  /** Longest one signature may take in the key (default 10 s: a real HSM answers in 5–50 ms). */
  operationTimeoutMs?: number;
  /** How often an idle key is probed (default 5 s). */
  probeMs?: number;
}

/**
 * The host thread's module. Built, it is plain .js. From source (tsx, vitest) it is .ts, and a worker does not
 * inherit the parent's loader, so a small bootstrap registers tsx in the worker first (as the SQLite writer does).
 */
function hostWorker(data: KeyHostData): Worker {
  const options = { workerData: data, resourceLimits: { maxOldGenerationSizeMb: 64 } };
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./key-host-thread.js', import.meta.url), options);
  const require = createRequire(import.meta.url);
  const tsxApi = pathToFileURL(require.resolve('tsx/esm/api').replace(/index\.cjs$/, 'index.mjs')).href;
  const entry = new URL('./key-host-thread.ts', import.meta.url).href;
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); })`;
  return new Worker(bootstrap, { ...options, eval: true });
}

/** A stopped host is restarted after a second; one whose checks fail again, every 15 s (each try is a login: tokens lock after a few bad ones). */
const RESTART_MS = 1000;
const RESTART_AFTER_FAILURE_MS = 15_000;

export class KeyHost {
  readonly signer: ChannelSigner;
  private worker?: Worker;
  private state: { status: 'healthy' | 'degraded'; reason?: string; since: string } = { status: 'healthy', since: new Date().toISOString() };
  private closing = false;
  private restartTimer?: NodeJS.Timeout;
  private lastRestartFailed = false;
  private fullReason?: string;

  private constructor(
    private readonly data: KeyHostData,
    private readonly logger: Logger,
    keyName: string,
  ) {
    // The answer may take the key's own limit plus the hop to the host and back.
    this.signer = new ChannelSigner(keyName, data.algorithm, data.channel, data.operationTimeoutMs + 2000);
  }

  /** Starts the host and waits for its checks; a failure is a ConfigError naming the setting. */
  static async start(o: KeyHostOptions): Promise<KeyHost> {
    const data: KeyHostData = {
      spec: o.spec,
      certificateDer: o.certificateDer,
      algorithm: o.algorithm,
      channel: `folio-key-host:${randomUUID()}`,
      operationTimeoutMs: o.operationTimeoutMs ?? 10_000,
      probeMs: o.probeMs ?? 5000,
      unavailableVariable: o.unavailableVariable,
      certificateVariable: o.certificateVariable,
    };
    const host = new KeyHost(data, o.logger, o.keyName);
    await host.launch(true);
    return host;
  }

  /** For /v1/health: `degraded` (not required: the rest of the service works) while the key cannot be reached. */
  status(): { status: 'healthy' | 'degraded'; reason?: string; since: string } {
    return this.state;
  }

  async close(): Promise<void> {
    this.closing = true;
    clearTimeout(this.restartTimer);
    this.signer.close();
    const worker = this.worker;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ type: 'close' });
    // C_Finalize is quick; a library that hangs in it does not hold shutdown.
    const timer = setTimeout(() => void worker.terminate(), 3000);
    await exited;
    clearTimeout(timer);
  }

  /** The full reason goes to the log; health shows only its code or category (`publicReason`). */
  private setState(status: 'healthy' | 'degraded', reason?: string): void {
    if (status === this.state.status && reason === this.fullReason) return;
    if (status === 'degraded') this.logger.warn({ key: this.signer.keyName, reason }, 'signing key unavailable: /v1/sign answers 503');
    else if (this.state.status === 'degraded') this.logger.info({ key: this.signer.keyName }, 'signing key available again');
    this.fullReason = reason;
    const since = status === this.state.status ? this.state.since : new Date().toISOString();
    this.state = { status, ...(reason !== undefined ? { reason: publicReason(reason) } : {}), since };
  }

  /** Starts the thread; the first time, resolves when it is ready and rejects with its start-up failure. */
  private launch(first: boolean): Promise<void> {
    const worker = hostWorker(this.data);
    this.worker = worker;
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      worker.on('message', (m: HostMessage) => {
        if (m.type === 'ready') {
          settled = true;
          this.lastRestartFailed = false;
          // Once ready, the host never keeps a process (the CLI) alive by itself: a pending signature's timer does.
          worker.unref();
          this.setState('healthy');
          resolve();
        } else if (m.type === 'failed') {
          settled = true;
          if (first) reject(new ConfigError(m.variable, m.message));
          else {
            this.lastRestartFailed = true;
            this.setState('degraded', `${m.variable} ${m.message}`);
          }
          void worker.terminate();
        } else if (m.type === 'state') {
          this.setState(m.status, m.reason);
        }
      });
      worker.on('error', (e) => {
        if (!settled && first) {
          settled = true;
          reject(e);
        }
      });
      worker.on('exit', () => {
        if (this.worker !== worker || this.closing) return;
        if (!settled && first) {
          reject(new Error('the key host thread stopped during start-up'));
          return;
        }
        // It stopped after start-up (or a restart failed its checks): requests answer 503 until it is back.
        if (this.state.status === 'healthy') this.setState('degraded', 'the key host thread stopped');
        const delay = this.lastRestartFailed ? RESTART_AFTER_FAILURE_MS : RESTART_MS;
        this.restartTimer = setTimeout(() => void this.launch(false).catch(() => undefined), delay);
        this.restartTimer.unref();
      });
    });
  }
}
