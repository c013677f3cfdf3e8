/**
 * Convert's engine tasks (run on engine threads, src/engines/worker.ts): Markdown/HTML → DOCX and DOCX →
 * Markdown/HTML, and the thread's warm-up on the built-in documents. Engine threads load this file when they
 * start (the convert module's `preload`), the common path of the API.
 */
import { wholeBuffer, type PageSize, type TaskFile, type TaskHandlers } from '../engines/tasks.js';
import { warmUpHtml, warmUpMarkdown } from '../engines/warm-up.js';
import { docxToText, htmlToDocx, htmlToDocxWithWarnings, markdownToDocx, markdownToDocxWithWarnings } from './index.js';
import { decodeText } from './text.js';

declare module '../engines/tasks.js' {
  interface EngineTasks {
    /** Markdown or HTML (bytes as uploaded) → DOCX, with what it could not keep as it was (`X-Folio-Warnings`). */
    'convert.toDocx': {
      input: { from: 'md' | 'html'; bytes: Uint8Array; pageSize: PageSize };
      output: { docx: Uint8Array; warnings: string[] };
    };
    /**
     * DOCX → Markdown or HTML (src/docx/read and the writers in src/convert), with what could not be kept: UTF-8
     * bytes counted against `outputMaxBytes` while written (OUTPUT_MAX_MB; default: DEFAULT_OUTPUT_MAX_BYTES),
     * transferred back (`transfer` below), never one string on the main thread.
     */
    'convert.fromDocx': {
      input: { to: 'md' | 'html'; bytes: Uint8Array; images: 'inline' | 'drop'; outputMaxBytes?: number };
      output: { bytes: Uint8Array; warnings: string[] };
    };
  }
}

type ConvertTask = 'convert.toDocx' | 'convert.fromDocx';

export const handlers = {
  'convert.toDocx': ({ from, bytes, pageSize }) => {
    const text = decodeText(bytes);
    return from === 'md' ? markdownToDocxWithWarnings(text, { pageSize }) : htmlToDocxWithWarnings(text, { pageSize });
  },
  'convert.fromDocx': ({ to, bytes, images, outputMaxBytes }) => docxToText(bytes, to, { images, outputMaxBytes }),
} satisfies TaskHandlers<ConvertTask>;

/** The writers give the answer a buffer of its own (src/convert/output-sink.ts): moved, not copied. */
export const transfer: TaskFile<ConvertTask>['transfer'] = {
  'convert.fromDocx': ({ bytes }) => wholeBuffer(bytes),
};

/** Warm-up conversions at thread start, and the wall-time cap on them (see warmUp). */
const WARM_UP_ROUNDS = 30;
const WARM_UP_MS = 5000;

/**
 * Converts the built-in warm-up documents (src/engines/warm-up.ts) until V8 has compiled the Markdown/HTML →
 * DOCX path: WARM_UP_ROUNDS rounds, or fewer when they take longer than WARM_UP_MS of wall time (a loaded
 * host). Runs before the thread counts as ready, so it is never inside a job's budget; a failure here only
 * leaves the thread cold.
 */
export function warmUp(): void {
  const t0 = performance.now();
  try {
    for (let i = 0; i < WARM_UP_ROUNDS && performance.now() - t0 < WARM_UP_MS; i++) {
      markdownToDocx(warmUpMarkdown(i), { pageSize: i % 2 ? 'Letter' : 'A4' });
      htmlToDocx(warmUpHtml(i), { pageSize: 'A4' });
    }
  } catch {
    /* a cold thread still works */
  }
}
