/**
 * A supervised pool of office worker processes, each holding one LibreOfficeKit instance (worker.ts).
 *
 * LOK is not thread-safe, can be booted once per process, and may crash or hang on hostile input, so the
 * pool gives each worker one conversion at a time and owns its whole life: warm start, a time budget per
 * conversion (then SIGKILL and 504), a resident-memory ceiling per conversion (sampled from /proc while
 * the worker is busy; above it SIGKILL and 422), crash detection (the request fails, never hangs), respawn
 * with back-off, recycling after N conversions or above an RSS ceiling, and a bounded FIFO queue (503 with
 * Retry-After beyond it). The same admission bounds page renders (src/preview's pdftoppm): a render takes one
 * of the OFFICE_WORKERS turns (acquireRenderSlot), so conversions and renders together never run more native
 * processes than that. Workers receive the caller's bytes as they are and validate and prepare them
 * themselves, so no package reading runs on the API's event loop. Each worker's private directory (profile and document I/O) is removed when the
 * process exits, whatever the cause.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import type { Deadline } from '../budget/index.js';
import { FolioError } from '../errors.js';
import { declarePdfa1b, pdfFilterOptions } from './pdf-options.js';
import { convertWithSoffice, disposeSofficeTemplates, type SofficeJob } from './soffice.js';
import { readRss } from './rss.js';
import { WORKER_DIR_ENV, WORKER_INSTALL_ENV, type ConvertRequest, type WorkerMessage } from './protocol.js';
import type { DocxToPdfOptions, DocxToPdfRun, OfficeEngine, OfficeEngineStatus } from './types.js';

export { readRss } from './rss.js';

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

interface Job {
  /** Arrival order, shared with render slot waiters: the earliest waiter of either kind goes first. */
  seq: number;
  docx: Uint8Array;
  options: DocxToPdfOptions;
  /** The request's one deadline: the conversion's budget is capped by what is left of it. */
  deadline?: Deadline;
  /** DocxToPdfRun.warnings: the worker's warnings are added to it on success. */
  warnings?: string[];
  resolve(pdf: Uint8Array): void;
  reject(e: Error): void;
  /** Leaves the queue: it waited longer than a conversion's budget, or its client went away. */
  dequeue?: () => void;
}

/** A page render waiting for its turn (acquireRenderSlot). */
interface SlotWaiter {
  seq: number;
  grant(): void;
  reject(e: Error): void;
}

type WorkerState = 'starting' | 'idle' | 'busy' | 'stopping';

interface Worker {
  seq: number;
  child: ChildProcess;
  dir: string;
  state: WorkerState;
  conversions: number;
  rss: number;
  job?: Job & {
    id: number;
    timer: NodeJS.Timeout;
    /** This conversion's time budget (OFFICE_TIMEOUT_MS capped by the request's deadline). */
    budgetMs: number;
    memoryTimer?: NodeJS.Timeout;
    settled: boolean;
    startedAt: number;
    peakRss: number;
    /** The soffice process converting this job after LOK refused it (soffice.ts); the worker waits for it. */
    fallback?: SofficeJob;
  };
  /** Why the pool is stopping this worker, when it is. */
  stopReason?: 'timeout' | 'memory' | 'recycle' | 'close' | 'start-timeout';
  startTimer?: NodeJS.Timeout;
}

const DEFAULT_MAX_CONVERSIONS = 200;
const DEFAULT_MAX_RSS = 450 * 1024 * 1024;
const DEFAULT_MAX_JOB_RSS = 1536 * 1024 * 1024;
const DEFAULT_MEMORY_POLL_MS = 200;
/** After this many consecutive failed starts, requests are refused at once instead of queued. */
const BROKEN_AFTER_START_FAILURES = 3;

/** The worker entry next to this module: worker.js when compiled, worker.ts (run through tsx) from source. */
function workerEntry(): { file: string; execArgv: string[] } {
  const here = fileURLToPath(import.meta.url);
  const ext = path.extname(here);
  const file = path.join(path.dirname(here), `worker${ext}`);
  return { file, execArgv: ext === '.ts' ? ['--import', 'tsx'] : [] };
}

/**
 * Directories of workers not yet reaped. If the API process exits without closing the pool (uncaught
 * error, process.exit), its workers die with the IPC channel; this removes what they leave behind.
 */
const liveWorkerDirs = new Set<string>();
process.once('exit', () => {
  for (const dir of liveWorkerDirs) removeWorkerDir(dir);
});

function removeWorkerDir(dir: string): void {
  liveWorkerDirs.delete(dir);
  try {
    fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  } catch {
    // Nothing more to do: a later start uses a new directory.
  }
}

function pickEnv(env: NodeJS.ProcessEnv, names: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of names) if (env[n] !== undefined) out[n] = env[n]!;
  return out;
}

function defaultTempRoot(): string {
  try {
    fs.accessSync('/dev/shm', fs.constants.W_OK);
    return '/dev/shm';
  } catch {
    return os.tmpdir();
  }
}

/** Emitted as 'conversion' after each successful conversion: the worker's own load + export time. */
export interface ConversionEvent {
  millis: number;
  rss: number;
  /** Highest resident memory sampled while the worker had this job (0 where /proc is unavailable). */
  peakRss: number;
}

/** Emitted as 'memory-exceeded' when a conversion is stopped at the memory ceiling. */
export interface MemoryExceededEvent {
  rss: number;
  limit: number;
  millis: number;
}

export class OfficePool extends EventEmitter implements OfficeEngine {
  private readonly workers = new Set<Worker>();
  private readonly queue: Job[] = [];
  private readonly slotQueue: SlotWaiter[] = [];
  private activeSlots = 0;
  private nextSeq = 1;
  private readonly maxConversions: number;
  private readonly maxRss: number;
  private readonly maxJobRss: number;
  private readonly memoryPollMs: number;
  private readonly tempRoot: string;
  private readonly entry = workerEntry();
  private nextJobId = 1;
  private nextWorkerSeq = 1;
  private consecutiveStartFailures = 0;
  private restarts = 0;
  private conversions = 0;
  private closed = false;
  private version?: string;
  /** Mean conversion time, for Retry-After estimates. */
  private meanMillis = 1000;
  private readonly readyWaiters: Array<() => void> = [];
  private readonly respawnTimers = new Set<NodeJS.Timeout>();

  constructor(private readonly opts: OfficePoolOptions) {
    super();
    this.maxConversions = opts.maxConversionsPerWorker ?? DEFAULT_MAX_CONVERSIONS;
    this.maxRss = opts.maxRssBytes ?? DEFAULT_MAX_RSS;
    this.maxJobRss = opts.maxJobRssBytes ?? DEFAULT_MAX_JOB_RSS;
    this.memoryPollMs = opts.memoryPollMs ?? DEFAULT_MEMORY_POLL_MS;
    this.tempRoot = opts.tempRoot ?? defaultTempRoot();
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
    if (this.isBroken()) {
      throw new FolioError('SERVICE_UNAVAILABLE', 'The conversion engine is unavailable', { retryAfter: 30 });
    }
    if (this.waiting() >= this.opts.queueSize) {
      throw new FolioError('SERVICE_UNAVAILABLE', 'Too many conversions are waiting; retry later', { retryAfter: this.retryAfterSeconds() });
    }
    const deadline = run.deadline;
    deadline?.check('waiting for a conversion worker');
    // Validation and preparation (accept/reject of tracked changes, comments) happen in the worker.
    return new Promise<Uint8Array>((resolve, reject) => {
      const job: Job = { seq: this.nextSeq++, docx, options, deadline, warnings: run.warnings, resolve, reject };
      const signal = run.signal;
      // Waiting is bounded too: behind workers held by slow documents, a request would otherwise wait for
      // as long as the queue ahead of it takes. After one conversion budget it is answered 503; a request
      // deadline that ends first answers 504 (the wait drew from it like any stage).
      const timer = setTimeout(() => {
        leave();
        reject(new FolioError('SERVICE_UNAVAILABLE', 'Every conversion worker stayed busy; retry later', { retryAfter: this.retryAfterSeconds() }));
      }, this.opts.timeoutMs);
      const onAbort = () => {
        leave();
        reject(new FolioError('SERVICE_UNAVAILABLE', 'The request was abandoned by the client', { retryAfter: 1 }));
      };
      const onDeadline = () => {
        leave();
        reject(deadline!.error('waiting for a conversion worker'));
      };
      const leave = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        deadline?.signal.removeEventListener('abort', onDeadline);
        const i = this.queue.indexOf(job);
        if (i >= 0) this.queue.splice(i, 1);
      };
      job.dequeue = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        deadline?.signal.removeEventListener('abort', onDeadline);
      };
      if (signal?.aborted) return onAbort();
      if (deadline?.expired) return onDeadline();
      signal?.addEventListener('abort', onAbort, { once: true });
      deadline?.signal.addEventListener('abort', onDeadline, { once: true });
      this.queue.push(job);
      this.dispatch();
    });
  }

  /**
   * Waits for one of the workers' turns for a native job that is not a conversion (a pdftoppm render) and
   * resolves with its release (call it once, when the job's process has exited). Queued with the conversions,
   * in arrival order, under the same bounds: OFFICE_QUEUE_SIZE, one conversion budget of waiting (503), the
   * request's deadline (504), the client leaving (503). Needs no LibreOffice worker to be up.
   */
  acquireRenderSlot(run: DocxToPdfRun = {}): Promise<() => void> {
    if (this.closed) return Promise.reject(new FolioError('SERVICE_UNAVAILABLE', 'The service is shutting down', { retryAfter: 5 }));
    if (this.waiting() >= this.opts.queueSize) {
      return Promise.reject(
        new FolioError('SERVICE_UNAVAILABLE', 'Too many renders and conversions are waiting; retry later', { retryAfter: this.retryAfterSeconds() }),
      );
    }
    const { signal, deadline } = run;
    if (deadline?.expired) return Promise.reject(deadline.error('waiting for a render slot'));
    return new Promise((resolve, reject) => {
      const waiter: SlotWaiter = {
        seq: this.nextSeq++,
        grant: () => {
          leave();
          this.activeSlots++;
          let released = false;
          resolve(() => {
            if (released) return;
            released = true;
            this.activeSlots--;
            this.dispatch();
          });
        },
        reject: (e) => {
          leave();
          reject(e);
        },
      };
      const timer = setTimeout(
        () =>
          waiter.reject(
            new FolioError('SERVICE_UNAVAILABLE', 'Every render and conversion slot stayed busy; retry later', {
              retryAfter: this.retryAfterSeconds(),
            }),
          ),
        this.opts.timeoutMs,
      );
      const onAbort = () => waiter.reject(new FolioError('SERVICE_UNAVAILABLE', 'The request was abandoned by the client', { retryAfter: 1 }));
      const onDeadline = () => waiter.reject(deadline!.error('waiting for a render slot'));
      const leave = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        deadline?.signal.removeEventListener('abort', onDeadline);
        const i = this.slotQueue.indexOf(waiter);
        if (i >= 0) this.slotQueue.splice(i, 1);
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      deadline?.signal.addEventListener('abort', onDeadline, { once: true });
      this.slotQueue.push(waiter);
      this.dispatch();
    });
  }

  /** Conversions and renders waiting for a turn. */
  private waiting(): number {
    return this.queue.length + this.slotQueue.length;
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
      queued: this.waiting(),
      starting,
      restarts: this.restarts,
      conversions: this.conversions,
      version: this.version,
      workerRss,
      renders: this.activeSlots,
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
    for (const job of this.queue.splice(0)) {
      job.reject(new FolioError('SERVICE_UNAVAILABLE', 'The conversion service is shutting down', { retryAfter: 5 }));
    }
    for (const waiter of [...this.slotQueue]) waiter.reject(new FolioError('SERVICE_UNAVAILABLE', 'The service is shutting down', { retryAfter: 5 }));
    const exits = [...this.workers].map((w) => this.stop(w, 'close'));
    await Promise.all(exits);
    disposeSofficeTemplates();
  }

  private isBroken(): boolean {
    return this.consecutiveStartFailures >= BROKEN_AFTER_START_FAILURES && ![...this.workers].some((w) => w.state === 'idle' || w.state === 'busy');
  }

  private retryAfterSeconds(): number {
    const waiting = this.queue.length + this.opts.workers;
    return Math.max(1, Math.ceil((waiting * this.meanMillis) / this.opts.workers / 1000));
  }

  /** Forks one worker; resolves true when it is warm, false when its start failed. */
  private spawn(): Promise<boolean> {
    const dir = fs.mkdtempSync(path.join(this.tempRoot, 'folio-office-'));
    fs.chmodSync(dir, 0o700);
    liveWorkerDirs.add(dir);
    const child = fork(this.entry.file, [], {
      execArgv: this.entry.execArgv,
      serialization: 'advanced',
      // LibreOffice writes diagnostics that may quote document content: never forward them.
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
      env: {
        // Only what LibreOffice needs: the API's secrets (database URL, signing password, admin token)
        // stay out of a process that parses untrusted documents.
        ...pickEnv(process.env, ['PATH', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'FONTCONFIG_PATH', 'FONTCONFIG_FILE']),
        HOME: dir,
        TMPDIR: dir,
        [WORKER_DIR_ENV]: dir,
        ...(this.opts.installPath ? { [WORKER_INSTALL_ENV]: this.opts.installPath } : {}),
        // Belt and braces with the profile's proxy settings: LibreOffice's HTTP stack also reads these.
        http_proxy: 'http://127.0.0.1:9',
        https_proxy: 'http://127.0.0.1:9',
        HTTP_PROXY: 'http://127.0.0.1:9',
        HTTPS_PROXY: 'http://127.0.0.1:9',
        no_proxy: '',
        NO_PROXY: '',
        SAL_USE_VCLPLUGIN: 'svp',
      },
    });
    const worker: Worker = { seq: this.nextWorkerSeq++, child, dir, state: 'starting', conversions: 0, rss: 0 };
    this.workers.add(worker);
    return new Promise<boolean>((resolveStart) => {
      let started = false;
      worker.startTimer = setTimeout(() => {
        this.opts.logger?.error({ worker: worker.seq }, 'office worker did not start in time; killing it');
        void this.stop(worker, 'start-timeout');
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
          this.opts.logger?.info({ worker: worker.seq, pid: child.pid, rssMb: Math.round(m.rss / 1048576) }, 'office worker ready');
          for (const w of this.readyWaiters.splice(0)) w();
          resolveStart(true);
          this.dispatch();
        } else if (m.type === 'init-failed') {
          this.opts.logger?.error({ worker: worker.seq, reason: m.message }, 'office worker failed to start');
        } else if (m.type === 'fallback') {
          this.runFallback(worker, m);
        } else if (m.type === 'result' || m.type === 'failed' || m.type === 'rejected') {
          this.onJobMessage(worker, m);
        }
      });
      child.on('error', (e) => this.opts.logger?.error({ err: e, worker: worker.seq }, 'office worker process error'));
      child.on('exit', (code, signal) => {
        clearTimeout(worker.startTimer);
        this.onExit(worker, code, signal, started);
        if (!started) resolveStart(false);
      });
    });
  }

  /**
   * Hands out turns while fewer than OFFICE_WORKERS conversions and renders run: to the earliest waiter, a
   * conversion when a worker is idle, a render in any case (renders need no LibreOffice worker).
   */
  private dispatch(): void {
    if (this.closed) return;
    for (;;) {
      let busy = this.activeSlots;
      let idle: Worker | undefined;
      for (const w of this.workers) {
        if (w.state === 'busy') busy++;
        else if (w.state === 'idle') idle ??= w;
      }
      if (busy >= this.opts.workers) return;
      const job = idle ? this.queue[0] : undefined;
      const slot = this.slotQueue[0];
      if (job && (!slot || job.seq < slot.seq)) {
        this.queue.shift();
        job.dequeue?.();
        this.assign(idle!, job);
      } else if (slot) {
        slot.grant();
      } else return;
    }
  }

  private assign(worker: Worker, job: Job): void {
    const id = this.nextJobId++;
    worker.state = 'busy';
    // The conversion's budget: OFFICE_TIMEOUT_MS, or what is left of the request's deadline when less.
    const budgetMs = job.deadline ? Math.max(1, job.deadline.cap(this.opts.timeoutMs)) : this.opts.timeoutMs;
    const byDeadline = budgetMs < this.opts.timeoutMs;
    const timer = setTimeout(() => {
      if (!worker.job || worker.job.id !== id) return;
      this.settle(worker, (j) =>
        j.reject(
          byDeadline && j.deadline
            ? j.deadline.error('the PDF conversion')
            : new FolioError('CONVERSION_TIMEOUT', `The conversion did not finish within ${Math.round(this.opts.timeoutMs / 1000)} s`),
        ),
      );
      // Stopped as on any timeout: LOK cannot be interrupted mid-conversion, its process can.
      void this.stop(worker, 'timeout');
    }, budgetMs);
    worker.job = { ...job, id, timer, budgetMs, settled: false, startedAt: performance.now(), peakRss: 0 };
    this.superviseMemory(worker, id);
    const message: ConvertRequest = { type: 'convert', id, docx: job.docx, options: job.options };
    worker.child.send(message, (err) => {
      if (err) {
        this.settle(worker, (j) => j.reject(new FolioError('INTERNAL_ERROR', 'The conversion worker is unreachable', { cause: err })));
        void this.stop(worker, 'recycle');
      }
    });
  }

  /**
   * Samples the busy worker's resident memory until its job settles; above the ceiling the job fails with
   * 422 and the worker is killed (replaced by onExit). A hostile document grows LibreOffice's native heap
   * to gigabytes within seconds, long before the time budget ends, and starves the other workers.
   */
  private superviseMemory(worker: Worker, id: number): void {
    const pid = worker.child.pid;
    if (pid === undefined) return;
    const sample = () => {
      const job = worker.job;
      if (!job || job.id !== id || job.settled) return;
      const rss = readRss(pid);
      if (rss === undefined) return; // No /proc (or the process is gone: its exit settles the job).
      if (rss > job.peakRss) job.peakRss = rss;
      worker.rss = rss; // status() shows the live figure while a conversion runs
      if (rss > this.maxJobRss) {
        const millis = performance.now() - job.startedAt;
        const limitMb = Math.round(this.maxJobRss / 1048576);
        this.opts.logger?.warn(
          { worker: worker.seq, rssMb: Math.round(rss / 1048576), limitMb, ms: Math.round(millis) },
          'office conversion exceeded its memory ceiling; killing the worker',
        );
        this.emit('memory-exceeded', { rss, limit: this.maxJobRss, millis } satisfies MemoryExceededEvent);
        this.settle(worker, (j) =>
          j.reject(
            new FolioError(
              'UNPROCESSABLE_DOCUMENT',
              `The document is too large to process: the conversion exceeded its memory ceiling of ${limitMb} MB`,
            ),
          ),
        );
        void this.stop(worker, 'memory');
        return;
      }
      job.memoryTimer = setTimeout(sample, this.memoryPollMs);
    };
    worker.job!.memoryTimer = setTimeout(sample, this.memoryPollMs);
  }

  /**
   * LOK refused a document whose comments were asked for: convert the prepared bytes in one soffice process
   * within what is left of the job's time budget and under the same memory ceiling. The worker stays
   * assigned to the job meanwhile, so fallbacks never outnumber the workers.
   */
  private runFallback(worker: Worker, m: Extract<WorkerMessage, { type: 'fallback' }>): void {
    const job = worker.job;
    if (!job || job.id !== m.id || job.settled) return;
    worker.rss = m.rss;
    // A little less than the job's own budget, so soffice's timeout answers and the LOK worker is kept.
    const left = job.budgetMs - (performance.now() - job.startedAt) - 250;
    const run = convertWithSoffice(m.docx, {
      filterOptions: pdfFilterOptions(job.options),
      timeoutMs: Math.max(1, left),
      maxRssBytes: this.maxJobRss,
      tempRoot: this.tempRoot,
      installPath: this.opts.installPath,
    });
    job.fallback = run;
    run.result.then(
      (pdf) =>
        this.onJobMessage(worker, {
          type: 'result',
          id: m.id,
          pdf,
          rss: worker.rss,
          millis: performance.now() - job.startedAt,
          warnings: m.warnings,
        }),
      (e: unknown) => {
        const f = e instanceof FolioError ? e : new FolioError('INTERNAL_ERROR', 'The conversion failed; retry the request');
        this.onJobMessage(worker, {
          type: 'rejected',
          id: m.id,
          code: f.code,
          message: f.message,
          status: f.status,
          details: f.details,
          rss: worker.rss,
        });
      },
    );
  }

  /** Settles the worker's current job once (a late message after a timeout is ignored). */
  private settle(worker: Worker, fn: (job: Job) => void): void {
    const job = worker.job;
    if (!job || job.settled) return;
    job.settled = true;
    clearTimeout(job.timer);
    clearTimeout(job.memoryTimer);
    fn(job);
  }

  private onJobMessage(worker: Worker, m: Extract<WorkerMessage, { type: 'result' | 'failed' | 'rejected' }>): void {
    if (!worker.job || worker.job.id !== m.id || worker.job.settled) return;
    worker.rss = m.rss;
    // A refused document never reached LibreOffice: it is not a conversion (for recycling or the status).
    if (m.type !== 'rejected') {
      worker.conversions++;
      this.conversions++;
    }
    if (m.type === 'result') {
      this.meanMillis = this.meanMillis * 0.8 + m.millis * 0.2;
      const peakRss = Math.max(worker.job.peakRss, m.rss);
      this.emit('conversion', { millis: m.millis, rss: m.rss, peakRss } satisfies ConversionEvent);
      if (m.warnings?.length) worker.job.warnings?.push(...m.warnings);
      this.settle(worker, (j) => j.resolve(j.options.pdfa === '1b' ? declarePdfa1b(m.pdf) : m.pdf));
    } else if (m.type === 'rejected') {
      // The worker's validation refused the document: the same error the caller would have had in-process.
      this.settle(worker, (j) => j.reject(new FolioError(m.code, m.message, { status: m.status, details: m.details })));
    } else if (m.stage === 'internal') {
      this.settle(worker, (j) => j.reject(new FolioError('INTERNAL_ERROR', 'The conversion worker failed; retry the request')));
    } else {
      const message =
        m.stage === 'load'
          ? 'LibreOffice could not read this document (corrupt or unsupported content)'
          : 'LibreOffice could not export this document as PDF';
      this.settle(worker, (j) => j.reject(new FolioError('UNPROCESSABLE_DOCUMENT', message)));
    }
    worker.job = undefined;
    if (worker.conversions >= this.maxConversions || worker.rss >= this.maxRss || (m.type === 'failed' && m.stage === 'internal')) {
      this.opts.logger?.info(
        { worker: worker.seq, conversions: worker.conversions, rssMb: Math.round(worker.rss / 1048576) },
        'recycling office worker',
      );
      void this.stop(worker, 'recycle');
    } else {
      worker.state = 'idle';
    }
    this.dispatch();
  }

  /** Kills a worker (SIGKILL: LOK's own shutdown can hang) and resolves when it has exited. */
  private stop(worker: Worker, reason: NonNullable<Worker['stopReason']>): Promise<void> {
    worker.stopReason ??= reason;
    worker.job?.fallback?.kill();
    worker.state = 'stopping';
    if (worker.child.exitCode !== null || worker.child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      worker.child.once('exit', () => resolve());
      worker.child.kill('SIGKILL');
    });
  }

  private onExit(worker: Worker, code: number | null, signal: NodeJS.Signals | null, started: boolean): void {
    this.workers.delete(worker);
    // Synchronously: an asynchronous removal could be cut short by the API process exiting right after close().
    removeWorkerDir(worker.dir);
    const reason = worker.stopReason;
    this.settle(worker, (j) => {
      if (reason === 'close') {
        j.reject(new FolioError('SERVICE_UNAVAILABLE', 'The conversion service is shutting down', { retryAfter: 5 }));
      } else if (signal === 'SIGKILL' || signal === 'SIGTERM' || signal === 'SIGINT') {
        // Killed from outside (OOM killer, operator): says nothing about the document.
        j.reject(new FolioError('INTERNAL_ERROR', 'The conversion worker stopped unexpectedly; retry the request'));
      } else {
        // A crash signal, or LibreOffice's own crash handler turning one into an exit code (it exits 1 on
        // SIGSEGV): the document took LibreOffice down.
        j.reject(new FolioError('UNPROCESSABLE_DOCUMENT', 'LibreOffice crashed while converting this document'));
      }
    });
    worker.job = undefined;
    if (reason !== 'recycle' && reason !== 'close') {
      this.opts.logger?.warn({ worker: worker.seq, code, signal, reason: reason ?? 'crash' }, 'office worker exited');
    }
    if (this.closed) return;
    if (!started) this.consecutiveStartFailures++;
    this.restarts++;
    if (this.isBroken()) {
      // Requests waiting for a worker that cannot start would wait forever: refuse them now.
      for (const job of this.queue.splice(0)) {
        job.reject(new FolioError('SERVICE_UNAVAILABLE', 'The conversion engine is unavailable', { retryAfter: 30 }));
      }
    }
    const delay = started ? 0 : Math.min(30_000, 500 * 2 ** Math.min(6, this.consecutiveStartFailures));
    const timer = setTimeout(() => {
      this.respawnTimers.delete(timer);
      if (!this.closed) void this.spawn();
    }, delay);
    this.respawnTimers.add(timer);
  }
}
