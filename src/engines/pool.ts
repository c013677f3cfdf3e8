/**
 * The engine pool: every CPU-bound engine call (md/html→docx, annotate and field discovery, sign, verify)
 * runs on a piscina worker thread, never on the event loop that parses requests and answers health checks.
 *
 * Each job has a time budget: past it the job's thread is terminated (piscina aborts a running task by
 * terminating its worker), the caller gets 504 CONVERSION_TIMEOUT and piscina starts a replacement. Each
 * thread has a V8 heap ceiling (resourceLimits): a document that needs more kills only its thread, and the
 * caller gets 422 UNPROCESSABLE_DOCUMENT. A job whose client went away is aborted too, so abandoned work
 * frees its thread. Waiting for a thread is the shared admission (src/budget/queue.ts): FIFO, bounded (503 with a
 * Retry-After estimate beyond), left on abort (503) or at the deadline (504).
 *
 * Memory outside the V8 heap (ArrayBuffers: ZIP and PDF inflation) is not covered by resourceLimits; the
 * parsers bound it themselves (src/docx, src/pdf).
 */
import { randomUUID } from 'node:crypto';
import { BroadcastChannel, Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { Logger } from 'pino';
import { FolioError } from '../errors.js';
import { AdmissionQueue, Semaphore, abandonedError, type Deadline } from '../budget/index.js';
import type { EngineJob, EngineTasks, EngineWorkerData, JobOutcome, TaskName } from './tasks.js';
import { NativeRunner } from '../native/runner.js';

/**
 * How long a job may wait for its thread to load (a new thread's start and warm-up, or the job kind's engine
 * modules on their first use) before the pool gives up on it (beyond its own budget).
 */
const STARTUP_ALLOWANCE_MS = 30_000;

export interface EnginePoolOptions {
  /** Worker threads, all started up front (ENGINE_WORKERS). */
  workers: number;
  /** Jobs that may wait for a thread (ENGINE_QUEUE_SIZE); beyond: 503. */
  queueSize: number;
  /** Time budget of one job from the moment its thread starts it, in milliseconds (ENGINE_TIMEOUT_MS). */
  timeoutMs: number;
  /** V8 old-generation ceiling of one thread, in MB (ENGINE_MEMORY_MB). */
  memoryMb: number;
  workerData: Omit<EngineWorkerData, 'startChannel' | 'nativeChannel'>;
  logger?: Logger;
  /** The Node flags the threads start from (default: this process's own, see engineExecArgv). */
  execArgv?: readonly string[];
}

export interface EnginePoolStatus {
  status: 'healthy' | 'degraded' | 'unhealthy';
  workers: number;
  busy: number;
  queued: number;
  completed: number;
  timeouts: number;
  memoryExceeded: number;
}

export interface RunOptions {
  /** Aborts the job (and terminates its thread if it is running), e.g. when the client disconnected. */
  signal?: AbortSignal;
  /**
   * The request's one time budget: waiting for a thread spends it, and the job's own budget is
   * `deadline.cap(ENGINE_TIMEOUT_MS)`; spent → 504 and the thread is terminated.
   */
  deadline?: Deadline;
  /**
   * Buffers of the input moved to the thread instead of copied (the caller no longer reads them): a 32 MB
   * JSON body handed to the body thread is then in memory once, not twice (issue 24).
   */
  transfer?: ArrayBuffer[];
}

/** The worker entry next to this module: worker.js when compiled; from source a tsx bootstrap. */
function workerFilename(): string {
  const fromSource = import.meta.url.endsWith('.ts');
  return new URL(fromSource ? './worker-from-source.mjs' : './worker.js', import.meta.url).href;
}

/**
 * The engine threads' Node flags: the API's own, less its heap size (resourceLimits applies), and with require(esm)
 * off. piscina loads the task file with require() first and falls back to import(); since Node 20.19 require() of
 * an ES module is on by default, and on Node 20 requiring our entry (an ES module with top-level await) can abort
 * the whole process (`FATAL ERROR: v8::Module::IsGraphAsync must be used on an instantiated module`, seen in CI).
 * With require(esm) off, require() refuses the file at once (ERR_REQUIRE_ESM) and piscina imports it. The flag
 * keeps its legacy name on Node 22, 24 and 26.
 */
export function engineExecArgv(parent: readonly string[] = process.execArgv): string[] {
  const argv = parent.filter((a) => !a.startsWith('--max-old-space-size'));
  const requireEsmOn = (process.features as { require_module?: boolean }).require_module === true;
  if (requireEsmOn && process.allowedNodeEnvironmentFlags.has('--no-experimental-require-module')) argv.push('--no-experimental-require-module');
  return argv;
}

/** Whether worker threads start with these flags (a thread is started and stopped at once to find out). */
function workersAccept(argv: string[]): boolean {
  try {
    void new Worker('', { eval: true, execArgv: argv }).terminate();
    return true;
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_WORKER_INVALID_EXEC_ARGV') return false;
    throw e;
  }
}

/**
 * The flags of `argv` that worker threads accept, in order: V8 options (--stack-trace-limit, --trace-gc) and
 * process-wide ones (--title) are refused by threads, and one of them used to stop the service at start-up
 * (piscina's first thread threw). A flag with its value in the next entry (--import tsx) is kept as a pair.
 */
export function workerExecArgv(argv: readonly string[]): { kept: string[]; dropped: string[] } {
  const kept: string[] = [];
  const dropped: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    if (workersAccept([...kept, flag])) kept.push(flag);
    else if (i + 1 < argv.length && workersAccept([...kept, flag, argv[i + 1]!])) kept.push(flag, argv[++i]!);
    else dropped.push(flag);
  }
  return { kept, dropped };
}

/** piscina with `options`; if threads refuse some of the flags, without those (named in a warning). */
function startPiscina(options: ConstructorParameters<typeof Piscina>[0] & { execArgv: string[] }, logger?: Logger): Piscina {
  try {
    return new Piscina(options);
  } catch (e) {
    if ((e as { code?: string }).code !== 'ERR_WORKER_INVALID_EXEC_ARGV') throw e;
    const { kept, dropped } = workerExecArgv(options.execArgv);
    logger?.warn({ dropped }, 'Node flags that worker threads refuse are not given to the engine threads');
    return new Piscina({ ...options, execArgv: kept });
  }
}

const QUEUE_FULL = 'Too many documents are waiting to be processed; retry later';

export class EnginePool {
  private readonly pool: Piscina;
  /**
   * Jobs on a thread (at most `workers`), and jobs waiting for one (at most `queueSize`, FIFO). The pool keeps
   * its own queue (src/budget/queue.ts) rather than piscina's so that each job's time budget covers its own
   * work only.
   */
  private readonly threads: Semaphore;
  private closed = false;
  private timeouts = 0;
  private memoryExceeded = 0;
  private nextJobId = 1;
  /** Jobs handed to piscina whose thread has not announced them yet: job id → start of its budget. */
  private readonly awaitingStart = new Map<number, () => void>();
  private readonly startChannel: BroadcastChannel;
  /** Starts and reaps the native children the threads' jobs need, and kills them when their job ends. */
  private readonly native = new NativeRunner();

  constructor(private readonly opts: EnginePoolOptions) {
    const queue = new AdmissionQueue({ queueSize: opts.queueSize, slots: opts.workers, initialJobMs: 200, weight: 0.1 });
    this.threads = new Semaphore(opts.workers, queue);
    const channelName = `folio-engine-start-${randomUUID()}`;
    this.startChannel = new BroadcastChannel(channelName);
    this.startChannel.unref();
    this.startChannel.onmessage = (event) => {
      const id = (event as unknown as { data: number }).data;
      this.awaitingStart.get(id)?.();
    };
    this.pool = startPiscina(
      {
        filename: workerFilename(),
        minThreads: opts.workers,
        maxThreads: opts.workers,
        // Admission is ours (this.threads); piscina only ever holds the jobs of free threads.
        maxQueue: opts.workers,
        // Threads stay warm: start-up (module loading) costs more than most jobs.
        idleTimeout: Number.MAX_SAFE_INTEGER,
        concurrentTasksPerWorker: 1,
        // Between jobs a thread waits on its message port, not in Atomics.wait (piscina's default, which stops
        // the thread's event loop): its timers then run while it is idle, and the full GC it schedules after a
        // burst (idle-gc.ts) frees the jobs' copies instead of keeping them until the next job (issue 24).
        atomics: 'disabled',
        resourceLimits: {
          maxOldGenerationSizeMb: opts.memoryMb,
          maxYoungGenerationSizeMb: Math.min(64, Math.max(8, Math.floor(opts.memoryMb / 16))),
          stackSizeMb: 8,
        },
        workerData: { ...opts.workerData, startChannel: channelName, nativeChannel: this.native.channelName } satisfies EngineWorkerData,
        execArgv: engineExecArgv(opts.execArgv),
        env: process.env,
      },
      opts.logger,
    );
    // A thread that dies outside a job (it cannot with our handler, but piscina reports it here) is logged;
    // piscina replaces it to keep minThreads.
    this.pool.on('error', (e: Error) => opts.logger?.error({ err: e }, 'engine worker failed outside a job'));
  }

  /** Runs one engine job on a worker thread. Rejects with the engine's FolioError, or the pool's own. */
  async run<N extends TaskName>(task: N, input: EngineTasks[N]['input'], options: RunOptions = {}): Promise<EngineTasks[N]['output']> {
    if (this.closed) throw new FolioError('SERVICE_UNAVAILABLE', 'The service is shutting down', { retryAfter: 5 });
    const deadline = options.deadline;
    deadline?.check(task);
    const release = await this.threads.acquire({
      signal: options.signal,
      deadline,
      stage: `waiting for an engine thread (${task})`,
      fullMessage: QUEUE_FULL,
    });
    const jobId = this.nextJobId++;
    const budget = new AbortController();
    // The budget starts when a thread announces the job (see worker.ts): waiting for a free thread, or for a
    // replacement thread to load, is not the document's fault. A thread that never announces it (it cannot
    // start at all) is given up on after the budget plus a start-up allowance.
    let timer = setTimeout(() => budget.abort('start'), this.opts.timeoutMs + STARTUP_ALLOWANCE_MS);
    this.awaitingStart.set(jobId, () => {
      this.awaitingStart.delete(jobId);
      clearTimeout(timer);
      // The job's own ceiling, or what is left of the request's deadline when that is shorter.
      const left = deadline ? deadline.remainingMs() : Infinity;
      const reason = left < this.opts.timeoutMs ? 'deadline' : 'budget';
      timer = setTimeout(() => budget.abort(reason), Math.max(1, Math.min(left, this.opts.timeoutMs)));
    });
    const signals = [budget.signal, options.signal, deadline?.signal].filter((x): x is AbortSignal => x !== undefined);
    const signal = signals.length === 1 ? budget.signal : AbortSignal.any(signals);
    const started = performance.now();
    let outcome: JobOutcome<N>;
    this.native.beginJob(jobId);
    try {
      outcome = (await this.pool.run({ jobId, task, input } satisfies EngineJob<N>, {
        signal,
        ...(options.transfer ? { transferList: options.transfer } : {}),
      })) as JobOutcome<N>;
    } catch (e) {
      if (deadline && (deadline.signal.aborted || budget.signal.reason === 'deadline')) {
        this.timeouts++;
        throw deadline.error(task);
      }
      throw this.poolError(e, budget.signal, task);
    } finally {
      // Done, timed out, aborted or out of its deadline: no native child of the job outlives it.
      this.native.endJob(jobId);
      clearTimeout(timer);
      this.awaitingStart.delete(jobId);
      release();
    }
    this.threads.queue.recordJob(performance.now() - started);
    if (outcome.ok) return outcome.value;
    if (outcome.internal) this.opts.logger?.error({ task, err: outcome.internal }, 'engine job failed');
    const { code, message, status, details, retryAfter } = outcome.error;
    throw new FolioError(code, message, { status, details, retryAfter });
  }

  status(): EnginePoolStatus {
    const workers = this.pool.threads.length;
    const queued = this.threads.queue.waiting;
    const busy = this.threads.busy;
    let status: EnginePoolStatus['status'] = 'healthy';
    if (this.closed || workers === 0) status = 'unhealthy';
    else if (workers < this.opts.workers) status = 'degraded';
    return { status, workers, busy, queued, completed: this.pool.completed, timeouts: this.timeouts, memoryExceeded: this.memoryExceeded };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.threads.queue.close();
    this.startChannel.close();
    await this.pool.destroy();
    this.native.close();
  }

  private poolError(e: unknown, budget: AbortSignal, task: TaskName): FolioError {
    const err = e as NodeJS.ErrnoException;
    if (err?.name === 'AbortError') {
      if (budget.aborted && budget.reason === 'start') {
        this.opts.logger?.error({ task }, 'no engine thread started the job; the pool cannot start threads');
        return new FolioError('SERVICE_UNAVAILABLE', 'The document engine is not available; retry later', { retryAfter: 30 });
      }
      if (budget.aborted) {
        this.timeouts++;
        this.opts.logger?.warn({ task, budgetMs: this.opts.timeoutMs }, 'engine job exceeded its time budget; its worker was replaced');
        return new FolioError('CONVERSION_TIMEOUT', `Processing the document did not finish within ${formatSeconds(this.opts.timeoutMs)}`);
      }
      if (this.closed) return new FolioError('SERVICE_UNAVAILABLE', 'The service is shutting down', { retryAfter: 5 });
      // The client went away; nobody reads this answer, but it must still be an error.
      return abandonedError();
    }
    if (err?.code === 'ERR_WORKER_OUT_OF_MEMORY') {
      this.memoryExceeded++;
      this.opts.logger?.warn({ task, memoryMb: this.opts.memoryMb }, 'engine job exceeded its memory ceiling; its worker was replaced');
      return new FolioError(
        'UNPROCESSABLE_DOCUMENT',
        `The document is too large to process: it needs more than the ${this.opts.memoryMb} MB of memory one document may use`,
      );
    }
    if (/queue is at limit/i.test(err?.message ?? '')) {
      return new FolioError('SERVICE_UNAVAILABLE', QUEUE_FULL, { retryAfter: this.threads.queue.retryAfterSeconds() });
    }
    this.opts.logger?.error({ task, err: e }, 'engine worker failed');
    return new FolioError('INTERNAL_ERROR', 'The document engine failed; retry the request', { cause: e });
  }
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
