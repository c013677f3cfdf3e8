/**
 * The key host thread: owns a remote key (PKCS#11 today; a KMS adapter the same way) and signs digests for
 * every thread of the process (`channel.ts`). It does for every adapter what `RemoteKey` leaves out:
 *
 * - start-up: open the key, make a test signature over random data and verify it with the certificate's
 *   public key (a certificate of another key is refused here, naming SIGNING_CERT_CHAIN), then say `ready`,
 *   or `failed` with the setting to name;
 * - each signature bounded in time (a hung HSM answers 503, never holds a request forever);
 * - health: `degraded` with the reason as soon as an operation or the idle probe fails, requests answered
 *   503 + Retry-After at once while it lasts;
 * - recovery: wait until no operation is in flight, reset the key (PKCS#11: C_Finalize), open it again and
 *   repeat the test signature (the key that comes back must be the certified one), with back-off.
 *
 * A thread of its own rather than the main thread: PKCS#11 calls other than C_Sign are synchronous and, with a
 * network HSM, a C_OpenSession or C_Login during a reconnect can take seconds; here they block no request.
 */
import crypto from 'node:crypto';
import { BroadcastChannel, parentPort, workerData } from 'node:worker_threads';
import type { SignMessage, SignReply } from './channel.js';
import { KeySetupError, KeyUnavailableError, publicReason, type RemoteKey, type RemoteKeySpec } from './remote-key.js';
import { NODE_DIGEST, type SignatureAlgorithm } from './types.js';

export interface KeyHostData {
  spec: RemoteKeySpec;
  /** The signer certificate (DER): its public key checks the test signatures. */
  certificateDer: Uint8Array;
  algorithm: SignatureAlgorithm;
  /** The BroadcastChannel the host serves. */
  channel: string;
  /** Longest a signature may take before the key counts as unavailable. */
  operationTimeoutMs: number;
  /** How often an idle, healthy key is probed. */
  probeMs: number;
  /** The setting a key that cannot be reached at start-up is reported under (PKCS#11: the module). */
  unavailableVariable: string;
  /** The setting a certificate of another key is reported under. */
  certificateVariable: string;
}

export type HostMessage =
  { type: 'ready' } | { type: 'failed'; variable: string; message: string } | { type: 'state'; status: 'healthy' | 'degraded'; reason?: string };

/** The adapters, by name: a KMS adapter is one more entry (docs/operations.md, "Remote signers"). */
async function createKey(spec: RemoteKeySpec): Promise<RemoteKey> {
  switch (spec.adapter) {
    case 'pkcs11': {
      const { Pkcs11Key } = await import('./pkcs11-key.js');
      return new Pkcs11Key(spec.options as ConstructorParameters<typeof Pkcs11Key>[0]);
    }
  }
}

const RETRY_AFTER_S = 5;
const MAX_BACKOFF_MS = 15_000;

class KeyHost {
  private state: 'starting' | 'healthy' | 'degraded' | 'closed' = 'starting';
  private reason?: string;
  private inFlight = 0;
  private recovering = false;
  private probeTimer?: NodeJS.Timeout;
  private readonly publicKey: crypto.KeyObject;
  private readonly requests: BroadcastChannel;

  constructor(
    private readonly key: RemoteKey,
    private readonly data: KeyHostData,
    private readonly post: (m: HostMessage) => void,
  ) {
    this.publicKey = new crypto.X509Certificate(data.certificateDer).publicKey;
    this.requests = new BroadcastChannel(data.channel);
    this.requests.onmessage = (event) => void this.serve((event as unknown as { data: SignMessage }).data);
  }

  async start(): Promise<void> {
    try {
      await this.key.open();
      await this.testSignature();
    } catch (e) {
      this.post({ type: 'failed', ...this.setupFailure(e) });
      await this.close();
      return;
    }
    this.setState('healthy');
    this.post({ type: 'ready' });
    this.probeTimer = setInterval(() => void this.probe(), this.data.probeMs);
  }

  async close(): Promise<void> {
    this.state = 'closed';
    clearInterval(this.probeTimer);
    this.requests.close();
    await this.key.close();
  }

  private setupFailure(e: unknown): { variable: string; message: string } {
    if (e instanceof KeySetupError) return { variable: e.variable, message: e.message };
    if (e instanceof KeyUnavailableError) return { variable: this.data.unavailableVariable, message: `cannot reach the key: ${e.message}` };
    return { variable: this.data.unavailableVariable, message: `cannot be used: ${e instanceof Error ? e.message : String(e)}` };
  }

  /** Signs random data through the key and verifies it with the certificate: the certificate must be the key's. */
  private async testSignature(): Promise<void> {
    const a = this.data.algorithm;
    const data = crypto.randomBytes(64);
    const digest = crypto.createHash(NODE_DIGEST[a.hash]).update(data).digest();
    const signature = await this.key.signDigest(digest, a);
    const options =
      a.scheme === 'ECDSA'
        ? { key: this.publicKey, dsaEncoding: 'der' as const }
        : a.scheme === 'RSASSA-PSS'
          ? { key: this.publicKey, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: a.saltLength }
          : { key: this.publicKey, padding: crypto.constants.RSA_PKCS1_PADDING };
    if (!crypto.verify(NODE_DIGEST[a.hash], data, options, signature)) {
      throw new KeySetupError(
        this.data.certificateVariable,
        "does not certify the key that signs: a test signature made with the key did not verify with the certificate's public key",
      );
    }
  }

  private async serve(msg: SignMessage): Promise<void> {
    const reply = (r: SignReply) => {
      const out = new BroadcastChannel(msg.replyTo);
      out.postMessage(r);
      out.close();
    };
    if (this.state !== 'healthy') {
      reply({ id: msg.id, ok: false, message: publicReason(this.reason ?? 'the key is not ready'), retryAfter: RETRY_AFTER_S });
      return;
    }
    this.inFlight++;
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new KeyUnavailableError(`no signature within ${this.data.operationTimeoutMs} ms`)),
          this.data.operationTimeoutMs,
        );
      });
      const signing = this.key.signDigest(msg.digest, this.data.algorithm);
      // A timed-out operation stays in flight until the key answers: recovery waits for it.
      signing.then(
        () => this.inFlight--,
        () => this.inFlight--,
      );
      const signature = await Promise.race([signing, timeout]);
      reply({ id: msg.id, ok: true, signature, algorithm: this.data.algorithm });
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      this.fail(message);
      reply({ id: msg.id, ok: false, message: publicReason(message), retryAfter: RETRY_AFTER_S });
    } finally {
      clearTimeout(timer);
    }
  }

  private async probe(): Promise<void> {
    if (this.state !== 'healthy' || this.inFlight > 0) return;
    try {
      await this.key.probe();
    } catch (e) {
      this.fail(e instanceof Error ? e.message : String(e));
    }
  }

  private setState(status: 'healthy' | 'degraded', reason?: string): void {
    this.state = status;
    this.reason = reason;
    this.post({ type: 'state', status, ...(reason !== undefined ? { reason } : {}) });
  }

  private fail(reason: string): void {
    if (this.state !== 'healthy') return;
    this.setState('degraded', reason);
    void this.recover();
  }

  private async recover(): Promise<void> {
    if (this.recovering) return;
    this.recovering = true;
    let delay = 0;
    try {
      while (this.state === 'degraded') {
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(MAX_BACKOFF_MS, Math.max(500, delay * 2));
        // C_Finalize under a running C_Sign is undefined behaviour: wait for the operations in flight to end.
        if (this.inFlight > 0) continue;
        if (this.state !== 'degraded') break;
        try {
          await this.key.reset();
          await this.key.open();
          await this.testSignature();
          this.setState('healthy');
        } catch (e) {
          const reason = e instanceof Error ? e.message : String(e);
          if (reason !== this.reason) this.setState('degraded', reason);
        }
      }
    } finally {
      this.recovering = false;
    }
  }
}

if (parentPort) {
  const port = parentPort;
  const data = workerData as KeyHostData;
  const post = (m: HostMessage) => port.postMessage(m);
  let host: KeyHost | undefined;
  port.on('message', (m: { type: 'close' }) => {
    if (m.type === 'close') void (host?.close() ?? Promise.resolve()).finally(() => process.exit(0));
  });
  try {
    host = new KeyHost(await createKey(data.spec), data, post);
    await host.start();
  } catch (e) {
    post({ type: 'failed', variable: e instanceof KeySetupError ? e.variable : data.unavailableVariable, message: (e as Error).message });
  }
}
