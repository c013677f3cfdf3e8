/**
 * A supervised pool of office worker processes, each holding one LibreOfficeKit instance (worker.ts).
 *
 * LOK is not thread-safe, can be booted once per process, and may crash or hang on hostile input, so the
 * pool gives each worker one conversion at a time (conversion.ts: time budget, memory ceiling, the client
 * leaving — each stops the worker) and owns its whole life (worker-process.ts): warm start, crash detection
 * (the request fails, never hangs), respawn with back-off, recycling after N conversions or above an RSS
 * ceiling. Requests wait in the shared admission (src/budget/queue.ts): FIFO, bounded (503 with Retry-After
 * beyond), one conversion budget of waiting at most (503), the request's deadline (504), the client leaving
 * (503). The same admission bounds page renders (src/preview's pdftoppm): a render takes one of the
 * OFFICE_WORKERS turns (acquireRenderSlot), so conversions and renders together never run more native
 * processes than that. Workers receive the caller's bytes as they are and validate and prepare them
 * themselves, so no package reading runs on the API's event loop.
 */
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { AdmissionQueue } from '../budget/index.js';
import { FolioError } from '../errors.js';
import { Conversion, type ConversionHost } from './conversion.js';
import { disposeSofficeTemplates } from './soffice.js';
import type { WorkerMessage } from './protocol.js';
import type { DocxToPdfOptions, DocxToPdfRun, OfficeEngine, OfficeEngineStatus } from './types.js';
import { defaultTempRoot, forkWorker, removeWorkerDir, stopWorker, type OfficeWorker } from './worker-process.js';

export { readRss } from './rss.js';
export type { ConversionEvent, MemoryExceededEvent } from './conversion.js';

export interface OfficePoolOptions {
  /** Worker processes (OFFICE_WORKERS). */
  workers: number;
  /** Conversions that may wait for a worker (OFFICE_QUEUE_SIZE); beyond: 503. */
  queueSize: number;
  /** Time budget of one conversion once a worker has it (OFFICE_TIMEOUT_MS). */
  timeoutMs: number;
  /** A worker is replaced after this many conversions (default 200). */
  maxConversionsPerWorker?: number;
  /** A worker is replaced once its resident memory exceeds this after a conversion (default 450 MB). */
  maxRssBytes?: number;
  /**
   * Resident-memory ceiling of a worker during one conversion (OFFICE_MEMORY_MB; default 1536 MB). Above it
   * the worker is killed, the conversion answers 422 UNPROCESSABLE_DOCUMENT and the worker is replaced.
   */
  maxJobRssBytes?: number;
  /** How often a busy worker's resident memory is sampled (default 200 ms). */
  memoryPollMs?: number;
  /** LibreOffice's program directory (default /usr/lib/libreoffice/program). */
  installPath?: string;
  /** Parent of the workers' private directories (default /dev/shm when writable, else the OS temp dir). */
  tempRoot?: string;
  /** Boot + warm-up budget of a worker (default 90 s). */
  startTimeoutMs?: number;
  logger?: Logger;
}

export interface OfficePoolStatus extends OfficeEngineStatus {
  starting: number;
  restarts: number;
  conversions: number;
  version?: string;
  /** Resident memory of each live worker, bytes (as last reported, or sampled during a conversion). */
  workerRss: number[];
  /** Page renders running (each holds one of the workers' turns). */
  renders: number;
}

const DEFAULT_MAX_CONVERSIONS = 200;
const DEFAULT_MAX_RSS = 450 * 1024 * 1024;
const DEFAULT_MAX_JOB_RSS = 1536 * 1024 * 1024;
const DEFAULT_MEMORY_POLL_MS = 200;
/** After this many consecutive failed starts, requests are refused at once instead of queued. */
const BROKEN_AFTER_START_FAILURES = 3;

const unavailable = () => new FolioError('SERVICE_UNAVAILABLE', 'The conversion engine is unavailable', { retryAfter: 30 });

export class OfficePool extends EventEmitter implements OfficeEngine {
  private readonly workers = new Set<OfficeWorker>();
  /** The conversion each busy worker holds. */
  private readonly running = new Map<OfficeWorker, Conversion>();
  private readonly admission: AdmissionQueue;
  /** Page renders holding a turn. */
  private renders = 0;
  private readonly maxConversions: number;
  private readonly maxRss: number;
  /** What a running conversion asks of the pool (conversion.ts). */
  private readonly host: ConversionHost;
  private readonly logger?: Logger;
  private nextJobId = 1;
  private nextWorkerSeq = 1;
  private consecutiveStartFailures = 0;
  private restarts = 0;
  private conversions = 0;
  private closed = false;
  private version?: string;
  private readonly readyWaiters: Array<() => void> = [];
  private readonly respawnTimers = new Set<NodeJS.Timeout>();

  constructor(private readonly opts: OfficePoolOptions) {
    super();
    this.maxConversions = opts.maxConversionsPerWorker ?? DEFAULT_MAX_CONVERSIONS;
    this.maxRss = opts.maxRssBytes ?? DEFAULT_MAX_RSS;
    this.logger = opts.logger;
    this.host = {
      limits: {
        timeoutMs: opts.timeoutMs,
        maxJobRss: opts.maxJobRssBytes ?? DEFAULT_MAX_JOB_RSS,
        memoryPollMs: opts.memoryPollMs ?? DEFAULT_MEMORY_POLL_MS,
        tempRoot: opts.tempRoot ?? defaultTempRoot(),
        installPath: opts.installPath,
      },
      logger: opts.logger,
      stop: (worker, reason) => {
        void stopWorker(worker, reason);
        // A stopping worker holds no turn: a render may take it now, a conversion once the replacement is warm.
        this.admission.pump();
      },
      answered: (worker, outcome) => this.answered(worker, outcome),
      converted: (event) => {
        this.admission.recordJob(event.millis);
        this.emit('conversion', event);
      },
      memoryExceeded: (event) => this.emit('memory-exceeded', event),
    };
    this.admission = new AdmissionQueue({ queueSize: opts.queueSize, slots: opts.workers, initialJobMs: 1000, weight: 0.2 });
  }

  /** Starts every worker and waits until all are warm (or until their start failed). */
  async start(): Promise<void> {
    const ready: Promise<boolean>[] = [];
    for (let i = 0; i < this.opts.workers; i++) ready.push(this.spawn());
    const results = await Promise.all(ready);
    if (!results.some(Boolean)) {
      throw new Error('no LibreOffice worker could start (is libreoffice-writer-nogui installed?)');
    }
  }

  async docxToPdf(docx: Uint8Array, options: DocxToPdfOptions = {}, run: DocxToPdfRun = {}): Promise<Uint8Array> {
    if (this.closed) throw new FolioError('SERVICE_UNAVAILABLE', 'The conversion service is shutting down', { retryAfter: 5 });
    if (this.isBroken()) throw unavailable();
    // Validation and preparation (accept/reject of tracked changes, comments) happen in the worker.
    const request = { docx, options, signal: run.signal, deadline: run.deadline, warnings: run.warnings };
    const conversion = await this.admission.take(() => this.claimWorker(request), {
      kind: 'conversion',
      signal: run.signal,
      deadline: run.deadline,
      stage: 'waiting for a conversion worker',
      fullMessage: 'Too many conversions are waiting; retry later',
      // Behind workers held by slow documents a request would otherwise wait for as long as the queue ahead
      // of it takes: after one conversion budget it is answered 503 (its deadline, when sooner, 504).
      maxWaitMs: this.opts.timeoutMs,
      staleMessage: 'Every conversion worker stayed busy; retry later',
    });
    return conversion.result;
  }

  /**
   * Waits for one of the workers' turns for a native job that is not a conversion (a pdftoppm render) and
   * resolves with its release (call it once, when the job's process has exited). Queued with the conversions,
   * in arrival order, under the same bounds. Needs no LibreOffice worker to be up.
   */
  acquireRenderSlot(run: DocxToPdfRun = {}): Promise<() => void> {
    if (this.closed) return Promise.reject(new FolioError('SERVICE_UNAVAILABLE', 'The service is shutting down', { retryAfter: 5 }));
    const claim = () => {
      if (this.turnsTaken() >= this.opts.workers) return undefined;
      this.renders++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        this.renders--;
        this.admission.pump();
      };
    };
    return this.admission.take(claim, {
      kind: 'render',
      signal: run.signal,
      deadline: run.deadline,
      stage: 'waiting for a render slot',
      fullMessage: 'Too many renders and conversions are waiting; retry later',
      maxWaitMs: this.opts.timeoutMs,
      staleMessage: 'Every render and conversion slot stayed busy; retry later',
    });
  }

  /** A conversion's turn: free while fewer than OFFICE_WORKERS conversions and renders run and a worker is idle. */
  private claimWorker(request: ConstructorParameters<typeof Conversion>[3]): Conversion | undefined {
    if (this.turnsTaken() >= this.opts.workers) return undefined;
    let idle: OfficeWorker | undefined;
    for (const w of this.workers) if (w.state === 'idle') idle ??= w;
    if (!idle) return undefined;
    idle.state = 'busy';
    const conversion = new Conversion(this.host, idle, this.nextJobId++, request);
    this.running.set(idle, conversion);
    conversion.start();
    return conversion;
  }

  private turnsTaken(): number {
    let busy = this.renders;
    for (const w of this.workers) if (w.state === 'busy') busy++;
    return busy;
  }

  status(): OfficePoolStatus {
    let idle = 0;
    let busy = 0;
    let starting = 0;
    const workerRss: number[] = [];
    for (const w of this.workers) {
      if (w.state === 'idle') idle++;
      else if (w.state === 'busy') busy++;
      else if (w.state === 'starting') starting++;
      // A worker being stopped for any reason but shutdown is replaced as soon as it has exited.
      else if (w.state === 'stopping' && w.stopReason !== 'close') starting++;
      if (w.state !== 'starting') workerRss.push(w.rss);
    }
    const live = idle + busy;
    // A worker whose replacement is scheduled (respawn delay, start back-off) is on its way too.
    starting += this.respawnTimers.size;
    let status: OfficeEngineStatus['status'];
    if (this.closed || (live === 0 && (starting === 0 || this.isBroken()))) status = 'unhealthy';
    else if (live < this.opts.workers) status = 'degraded';
    else status = 'healthy';
    return {
      status,
      workers: live,
      busy,
      queued: this.admission.waiting,
      starting,
      restarts: this.restarts,
      conversions: this.conversions,
      version: this.version,
      workerRss,
      renders: this.renders,
    };
  }

  /** Process ids of the live workers (tests kill them to prove supervision). */
  workerPids(): number[] {
    return [...this.workers].filter((w) => w.state !== 'starting' && w.child.pid).map((w) => w.child.pid!);
  }

  /** Resolves once at least one worker is ready (e.g. after a respawn). */
  whenReady(): Promise<void> {
    if ([...this.workers].some((w) => w.state === 'idle' || w.state === 'busy')) return Promise.resolve();
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.respawnTimers) clearTimeout(t);
    this.admission.close();
    await Promise.all([...this.workers].map((w) => stopWorker(w, 'close')));
    disposeSofficeTemplates();
  }

  /** A conversion's worker answered: it takes the next turn, or is recycled. */
  private answered(worker: OfficeWorker, outcome: { counted: boolean; internal: boolean }): void {
    this.running.delete(worker);
    if (outcome.counted) {
      worker.conversions++;
      this.conversions++;
    }
    if (worker.state === 'busy') {
      if (worker.conversions >= this.maxConversions || worker.rss >= this.maxRss || outcome.internal) {
        this.logger?.info(
          { worker: worker.seq, conversions: worker.conversions, rssMb: Math.round(worker.rss / 1048576) },
          'recycling office worker',
        );
        void stopWorker(worker, 'recycle');
      } else {
        worker.state = 'idle';
      }
    }
    this.admission.pump();
  }

  // Supervision: start, exit, respawn.

  private isBroken(): boolean {
    return this.consecutiveStartFailures >= BROKEN_AFTER_START_FAILURES && ![...this.workers].some((w) => w.state === 'idle' || w.state === 'busy');
  }

  /** Forks one worker; resolves true when it is warm, false when its start failed. */
  private spawn(): Promise<boolean> {
    const worker = forkWorker(this.nextWorkerSeq++, this.host.limits);
    const { child } = worker;
    this.workers.add(worker);
    return new Promise<boolean>((resolveStart) => {
      let started = false;
      worker.startTimer = setTimeout(() => {
        this.logger?.error({ worker: worker.seq }, 'office worker did not start in time; killing it');
        void stopWorker(worker, 'start-timeout');
      }, this.opts.startTimeoutMs ?? 90_000);
      child.on('message', (raw: unknown) => {
        const m = raw as WorkerMessage;
        if (m.type === 'ready') {
          clearTimeout(worker.startTimer);
          started = true;
          this.consecutiveStartFailures = 0;
          worker.rss = m.rss;
          this.version = m.version || this.version;
          if (worker.state === 'starting') worker.state = 'idle';
          this.logger?.info({ worker: worker.seq, pid: child.pid, rssMb: Math.round(m.rss / 1048576) }, 'office worker ready');
          for (const w of this.readyWaiters.splice(0)) w();
          resolveStart(true);
          this.admission.pump();
        } else if (m.type === 'init-failed') {
          this.logger?.error({ worker: worker.seq, reason: m.message }, 'office worker failed to start');
        } else {
          this.running.get(worker)?.onMessage(m);
        }
      });
      child.on('error', (e) => this.logger?.error({ err: e, worker: worker.seq }, 'office worker process error'));
      child.on('exit', (code, signal) => {
        clearTimeout(worker.startTimer);
        this.onExit(worker, code, signal, started);
        if (!started) resolveStart(false);
      });
    });
  }

  private onExit(worker: OfficeWorker, code: number | null, signal: NodeJS.Signals | null, started: boolean): void {
    this.workers.delete(worker);
    removeWorkerDir(worker.dir);
    const reason = worker.stopReason;
    this.running.get(worker)?.workerExited(reason, signal);
    this.running.delete(worker);
    if (reason === 'abandoned') this.logger?.info({ worker: worker.seq }, 'office worker stopped: its client went away');
    else if (reason !== 'recycle' && reason !== 'close') {
      this.logger?.warn({ worker: worker.seq, code, signal, reason: reason ?? 'crash' }, 'office worker exited');
    }
    if (this.closed) return;
    if (!started) this.consecutiveStartFailures++;
    this.restarts++;
    // Requests waiting for a worker that cannot start would wait forever: refuse them now.
    if (this.isBroken()) this.admission.failWhere('conversion', unavailable);
    const delay = started ? 0 : Math.min(30_000, 500 * 2 ** Math.min(6, this.consecutiveStartFailures));
    const timer = setTimeout(() => {
      this.respawnTimers.delete(timer);
      if (!this.closed) void this.spawn();
    }, delay);
    this.respawnTimers.add(timer);
    this.admission.pump();
  }
}
