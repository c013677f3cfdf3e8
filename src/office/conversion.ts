/**
 * One DOCX → PDF conversion on the worker the pool's admission gave it. The document reaches the worker as a
 * file in its private io directory and the PDF comes back the same way (protocol.ts). The conversion ends
 * once, at whichever comes first:
 *
 * - the worker's answer: the PDF, the document refused before LibreOffice saw it (the validation's FolioError),
 *   LibreOffice unable to load or export it (422), or the soffice fallback's result; the worker is free again;
 * - its time budget, OFFICE_TIMEOUT_MS capped by what is left of the request's deadline (504);
 * - its memory ceiling, sampled from /proc while it runs (422): a hostile document grows LibreOffice's native
 *   heap to gigabytes within seconds, long before the time budget ends, and starves the other workers;
 * - its client leaving (503): nobody will read the PDF, and the worker is needed by the requests queued
 *   behind it (issue 26: an abandoned conversion used to keep its worker to the end);
 * - the worker dying (a crash is the document's doing: 422; a kill from outside: 500; shutdown: 503).
 *
 * Every end but the answer stops the worker (SIGKILL through the pool, which respawns it): LOK cannot be
 * interrupted mid-conversion, its process can.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { abandonedError, type Deadline } from '../budget/index.js';
import { FolioError } from '../errors.js';
import { declarePdfa1b, pdfFilterOptions } from './pdf-options.js';
import type { ConvertRequest, WorkerMessage } from './protocol.js';
import { watchRss } from './rss.js';
import { convertWithSoffice, type SofficeJob } from './soffice.js';
import type { DocxToPdfOptions } from './types.js';
import type { OfficeWorker, StopReason } from './worker-process.js';

/** Emitted by the pool as 'conversion' after each successful conversion: the worker's own load + export time. */
export interface ConversionEvent {
  millis: number;
  rss: number;
  /** Highest resident memory sampled while the worker had this job (0 where /proc is unavailable). */
  peakRss: number;
}

/** Emitted by the pool as 'memory-exceeded' when a conversion is stopped at the memory ceiling. */
export interface MemoryExceededEvent {
  rss: number;
  limit: number;
  millis: number;
}

export interface ConversionRequest {
  docx: Uint8Array;
  options: DocxToPdfOptions;
  /** The client went away: the conversion is stopped at once, queued or running. */
  signal?: AbortSignal;
  /** The request's one deadline: the conversion's budget is capped by what is left of it. */
  deadline?: Deadline;
  /** DocxToPdfRun.warnings: the worker's warnings are added to it on success. */
  warnings?: string[];
}

/** What a conversion needs from its pool. */
export interface ConversionHost {
  readonly limits: {
    timeoutMs: number;
    maxJobRss: number;
    memoryPollMs: number;
    tempRoot: string;
    installPath?: string;
  };
  readonly logger?: Logger;
  /** The worker must go (it is killed and, once it has exited, replaced). */
  stop(worker: OfficeWorker, reason: StopReason): void;
  /**
   * The worker answered and is done with this conversion: free it, or recycle it. `counted`: LibreOffice saw
   * the document (a refused one is not a conversion); `internal`: the worker's own defect, recycle it.
   */
  answered(worker: OfficeWorker, outcome: { counted: boolean; internal: boolean }): void;
  converted(event: ConversionEvent): void;
  memoryExceeded(event: MemoryExceededEvent): void;
}

const LOAD_FAILED = 'LibreOffice could not read this document (corrupt or unsupported content)';
const SAVE_FAILED = 'LibreOffice could not export this document as PDF';

export class Conversion {
  readonly result: Promise<Uint8Array>;
  private resolve!: (pdf: Uint8Array) => void;
  private reject!: (e: Error) => void;
  private settled = false;
  private readonly startedAt = performance.now();
  private readonly budgetMs: number;
  private peakRss = 0;
  private timer?: NodeJS.Timeout;
  private stopMemory?: () => void;
  private fallback?: SofficeJob;
  private readonly input: string;
  private readonly output: string;
  private readonly onAbort = () => this.end('abandoned', abandonedError());

  constructor(
    private readonly host: ConversionHost,
    readonly worker: OfficeWorker,
    readonly id: number,
    private readonly req: ConversionRequest,
  ) {
    this.result = new Promise<Uint8Array>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // The caller attaches its handlers once the admission's promise has resolved, a turn later.
    this.result.catch(() => undefined);
    // The conversion's budget: OFFICE_TIMEOUT_MS, or what is left of the request's deadline when less.
    const { timeoutMs } = host.limits;
    this.budgetMs = req.deadline ? Math.max(1, req.deadline.cap(timeoutMs)) : timeoutMs;
    this.input = `in-${id}.docx`;
    this.output = `out-${id}.pdf`;
  }

  /** Hands the document to the worker and starts the budget, the memory ceiling and the client watch. */
  start(): void {
    const { timeoutMs } = this.host.limits;
    const byDeadline = this.budgetMs < timeoutMs;
    this.timer = setTimeout(
      () =>
        this.end(
          'timeout',
          byDeadline && this.req.deadline
            ? this.req.deadline.error('the PDF conversion')
            : new FolioError('CONVERSION_TIMEOUT', `The conversion did not finish within ${Math.round(timeoutMs / 1000)} s`),
        ),
      this.budgetMs,
    );
    this.req.signal?.addEventListener('abort', this.onAbort, { once: true });
    this.watchMemory();
    if (this.req.signal?.aborted) return this.onAbort();
    // Written off the event loop into the worker's io directory (tmpfs when /dev/shm is writable), which
    // LibreOffice loads: no serialised copy of the document in an IPC message (protocol.ts).
    fs.promises.writeFile(path.join(this.worker.ioDir, this.input), this.req.docx, { mode: 0o600 }).then(
      () => {
        if (this.settled) return;
        const message: ConvertRequest = { type: 'convert', id: this.id, input: this.input, output: this.output, options: this.req.options };
        this.worker.child.send(message, (err) => {
          if (err) this.end('unreachable', new FolioError('INTERNAL_ERROR', 'The conversion worker is unreachable', { cause: err }));
        });
      },
      (err: unknown) =>
        this.end('unreachable', new FolioError('INTERNAL_ERROR', 'The document could not be handed to the conversion worker', { cause: err })),
    );
  }

  /** A message of the worker about this conversion (others are ignored: a late answer after a timeout). */
  onMessage(m: Extract<WorkerMessage, { type: 'result' | 'failed' | 'rejected' | 'fallback' }>): void {
    if (m.id !== this.id || this.settled) return;
    this.worker.rss = m.rss;
    if (m.type === 'fallback') return this.runFallback(m);
    this.settle();
    if (m.type === 'result') {
      if (m.warnings?.length) this.req.warnings?.push(...m.warnings);
      void this.collect(m.millis, m.rss);
      return;
    }
    if (m.type === 'rejected') {
      // The worker's validation refused the document: the same error the caller would have had in-process.
      this.reject(new FolioError(m.code, m.message, { status: m.status, details: m.details }));
    } else if (m.stage === 'internal') {
      this.reject(new FolioError('INTERNAL_ERROR', 'The conversion worker failed; retry the request'));
    } else {
      this.reject(new FolioError('UNPROCESSABLE_DOCUMENT', m.stage === 'load' ? LOAD_FAILED : SAVE_FAILED));
    }
    this.release({ counted: m.type !== 'rejected', internal: m.type === 'failed' && m.stage === 'internal' });
  }

  /** The worker exited while this conversion held it (a stop of the pool's own has settled it already). */
  workerExited(reason: StopReason | undefined, signal: NodeJS.Signals | null): void {
    if (this.settled) return;
    this.settle();
    if (reason === 'close') {
      this.reject(new FolioError('SERVICE_UNAVAILABLE', 'The conversion service is shutting down', { retryAfter: 5 }));
    } else if (signal === 'SIGKILL' || signal === 'SIGTERM' || signal === 'SIGINT') {
      // Killed from outside (OOM killer, operator): says nothing about the document.
      this.reject(new FolioError('INTERNAL_ERROR', 'The conversion worker stopped unexpectedly; retry the request'));
    } else {
      // A crash signal, or LibreOffice's own crash handler turning one into an exit code (it exits 1 on
      // SIGSEGV): the document took LibreOffice down.
      this.reject(new FolioError('UNPROCESSABLE_DOCUMENT', 'LibreOffice crashed while converting this document'));
    }
  }

  /** Ends the conversion with `error` and has the worker stopped. */
  private end(reason: StopReason, error: FolioError): void {
    if (this.settled) return;
    this.settle();
    this.reject(error);
    this.host.stop(this.worker, reason);
  }

  /** Marks the conversion over: no timer, sampling, client watch or fallback outlives it. */
  private settle(): void {
    this.settled = true;
    clearTimeout(this.timer);
    this.stopMemory?.();
    this.req.signal?.removeEventListener('abort', this.onAbort);
    this.fallback?.kill();
  }

  /** Reads the PDF the worker wrote (off the event loop), then gives the worker back. */
  private async collect(millis: number, rss: number): Promise<void> {
    try {
      const file = await fs.promises.readFile(path.join(this.worker.ioDir, this.output));
      const pdf = new Uint8Array(file.buffer, file.byteOffset, file.byteLength);
      this.host.converted({ millis, rss, peakRss: Math.max(this.peakRss, rss) });
      this.resolve(this.req.options.pdfa === '1b' ? declarePdfa1b(pdf) : pdf);
      this.release({ counted: true, internal: false });
    } catch (e) {
      // The worker's directory went away under us (the worker was killed from outside meanwhile).
      this.reject(new FolioError('INTERNAL_ERROR', 'The conversion worker failed; retry the request', { cause: e }));
      this.release({ counted: true, internal: true });
    }
  }

  /** Empties the io directory (the worker no longer reads it) and hands the worker back to the pool. */
  private release(outcome: { counted: boolean; internal: boolean }): void {
    try {
      for (const name of fs.readdirSync(this.worker.ioDir)) fs.rmSync(path.join(this.worker.ioDir, name), { recursive: true, force: true });
    } catch {
      // The worker is gone (its directory with it) or will be recycled.
    }
    this.host.answered(this.worker, outcome);
  }

  private watchMemory(): void {
    const pid = this.worker.child.pid;
    if (pid === undefined) return;
    const { maxJobRss } = this.host.limits;
    this.stopMemory = watchRss(pid, this.host.limits.memoryPollMs, (rss) => {
      if (this.settled) return false;
      if (rss > this.peakRss) this.peakRss = rss;
      this.worker.rss = rss; // status() shows the live figure while a conversion runs
      if (rss <= maxJobRss) return true;
      const millis = performance.now() - this.startedAt;
      const limitMb = Math.round(maxJobRss / 1048576);
      this.host.logger?.warn(
        { worker: this.worker.seq, rssMb: Math.round(rss / 1048576), limitMb, ms: Math.round(millis) },
        'office conversion exceeded its memory ceiling; killing the worker',
      );
      this.host.memoryExceeded({ rss, limit: maxJobRss, millis });
      this.end(
        'memory',
        new FolioError('UNPROCESSABLE_DOCUMENT', `The document is too large to process: the conversion exceeded its memory ceiling of ${limitMb} MB`),
      );
      return false;
    });
  }

  /**
   * LOK refused a document whose comments were asked for: convert the prepared file in one soffice process
   * within what is left of the budget and under the same memory ceiling. The worker stays assigned to the
   * conversion meanwhile, so fallbacks never outnumber the workers.
   */
  private runFallback(m: Extract<WorkerMessage, { type: 'fallback' }>): void {
    const { maxJobRss, tempRoot, installPath } = this.host.limits;
    // A little less than the conversion's own budget, so soffice's timeout answers and the LOK worker is kept.
    const left = this.budgetMs - (performance.now() - this.startedAt) - 250;
    const run = convertWithSoffice(
      { path: path.join(this.worker.ioDir, path.basename(m.docx)) },
      { filterOptions: pdfFilterOptions(this.req.options), timeoutMs: Math.max(1, left), maxRssBytes: maxJobRss, tempRoot, installPath },
    );
    this.fallback = run;
    run.result.then(
      (pdf) => {
        if (this.settled) return;
        this.settle();
        if (m.warnings?.length) this.req.warnings?.push(...m.warnings);
        const millis = performance.now() - this.startedAt;
        this.host.converted({ millis, rss: this.worker.rss, peakRss: Math.max(this.peakRss, this.worker.rss) });
        this.resolve(this.req.options.pdfa === '1b' ? declarePdfa1b(pdf) : pdf);
        this.release({ counted: true, internal: false });
      },
      (e: unknown) => {
        if (this.settled) return;
        this.settle();
        this.reject(e instanceof FolioError ? e : new FolioError('INTERNAL_ERROR', 'The conversion failed; retry the request'));
        this.release({ counted: false, internal: false });
      },
    );
  }
}
