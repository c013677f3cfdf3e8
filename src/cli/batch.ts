/**
 * Runs one job per document with bounded concurrency, shows progress (a bar with counts, throughput and ETA
 * on a terminal; one plain line per document otherwise), keeps going past documents that fail, and ends
 * with a summary naming every failure.
 */
import cliProgress from 'cli-progress';
import { formatDuration, formatError } from './output.js';
import { isSkipped } from './output-files.js';

export interface BatchItem {
  /** How the document is named in progress lines and the summary. */
  label: string;
}

export interface BatchOutcome {
  /** What to print after the label on success (e.g. `→ out/a.pdf`). */
  note?: string;
}

export interface BatchFailure {
  label: string;
  error: string;
}

export interface BatchSummary {
  total: number;
  ok: number;
  failed: BatchFailure[];
  /** Documents not written because their output path is not allowed (exists, a link, outside --out). */
  skipped: BatchFailure[];
  ms: number;
}

export interface BatchOptions {
  jobs: number;
  /** Verb for the summary line ("converted"). */
  verb: string;
  /** Force plain lines (non-TTY) or the bar; default: the bar when stderr is a terminal. */
  tty?: boolean;
  quiet?: boolean;
  /** Where plain lines go (default stdout) and the bar (default stderr). */
  out?: NodeJS.WritableStream;
  barStream?: NodeJS.WriteStream;
}

export async function runBatch<T extends BatchItem>(items: T[], work: (item: T) => Promise<BatchOutcome>, opts: BatchOptions): Promise<BatchSummary> {
  const out = opts.out ?? process.stdout;
  const barStream = opts.barStream ?? process.stderr;
  const tty = opts.tty ?? (barStream.isTTY === true && process.env.CI === undefined);
  const started = performance.now();
  const failed: BatchFailure[] = [];
  const skipped: BatchFailure[] = [];
  let done = 0;
  let ok = 0;

  let multibar: cliProgress.MultiBar | undefined;
  let bar: cliProgress.SingleBar | undefined;
  if (tty && !opts.quiet) {
    multibar = new cliProgress.MultiBar(
      {
        stream: barStream,
        format: ' {bar} {value}/{total} | {rate} docs/s | ETA {etaText} | {failedCount} failed | {current}',
        barCompleteChar: '█',
        barIncompleteChar: '░',
        hideCursor: true,
        etaBuffer: 20,
        fps: 8,
        clearOnComplete: false,
        autopadding: true,
      },
      cliProgress.Presets.shades_classic,
    );
    bar = multibar.create(items.length, 0, { rate: '0.0', etaText: '…', failedCount: 0, current: 'starting' });
  }
  const width = String(items.length).length;
  const line = (text: string) => {
    if (opts.quiet) return;
    if (multibar) multibar.log(`${text}\n`);
    else out.write(`${text}\n`);
  };

  const finish = (item: T, error: unknown, outcome?: BatchOutcome) => {
    done++;
    const counter = `[${String(done).padStart(width)}/${items.length}]`;
    if (error === undefined) {
      ok++;
      if (!multibar) line(`${counter} ok    ${item.label}${outcome?.note ? ` ${outcome.note}` : ''}`);
    } else if (isSkipped(error)) {
      const message = formatError(error);
      skipped.push({ label: item.label, error: message });
      line(`${multibar ? '' : `${counter} `}SKIP  ${item.label}: ${message}`);
    } else {
      const message = formatError(error);
      failed.push({ label: item.label, error: message });
      line(`${multibar ? '' : `${counter} `}FAIL  ${item.label}: ${message}`);
    }
    if (bar) {
      const seconds = (performance.now() - started) / 1000;
      const rate = done / Math.max(seconds, 0.001);
      bar.update(done, {
        rate: rate.toFixed(2),
        etaText: done === items.length ? 'done' : formatDuration(((items.length - done) / rate) * 1000),
        failedCount: failed.length + skipped.length,
        current: item.label.slice(-40),
      });
    }
  };

  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++]!;
      try {
        const outcome = await work(item);
        finish(item, undefined, outcome);
      } catch (e) {
        finish(item, e ?? new Error('failed'));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(opts.jobs, items.length)) }, worker));
  multibar?.stop();
  return { total: items.length, ok, failed, skipped, ms: performance.now() - started };
}

/** The closing lines: counts, time and throughput, then each failure and each skipped document on its own line. */
export function printSummary(summary: BatchSummary, verb: string, stream: NodeJS.WritableStream = process.stderr): void {
  const rate = summary.total / Math.max(summary.ms / 1000, 0.001);
  const head = `${verb} ${summary.ok} of ${summary.total} document${summary.total === 1 ? '' : 's'} in ${formatDuration(summary.ms)} (${rate.toFixed(2)} docs/s)`;
  const skipped = summary.skipped ?? [];
  if (summary.failed.length === 0 && skipped.length === 0) {
    stream.write(`${head}\n`);
    return;
  }
  const parts = [summary.failed.length ? `${summary.failed.length} failed` : '', skipped.length ? `${skipped.length} skipped (not written)` : ''];
  stream.write(`${head}; ${parts.filter(Boolean).join(', ')}:\n`);
  for (const f of summary.failed) stream.write(`  ${f.label}: ${f.error}\n`);
  for (const f of skipped) stream.write(`  skipped ${f.label}: ${f.error}\n`);
}
