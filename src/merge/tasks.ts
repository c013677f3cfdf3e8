/** Merge's engine task (run on engine threads, src/engines/worker.ts): PDFs in order → one PDF. */
import { wholeBuffer, type TaskFile, type TaskHandlers } from '../engines/tasks.js';
import { mergePdfs, type MergeInput, type MergeOptions, type MergeResult } from './engine.js';

declare module '../engines/tasks.js' {
  interface EngineTasks {
    /** PDFs (DOCX inputs already converted by the office engine) → one PDF, in order (src/merge). */
    'merge.pdfs': {
      input: { inputs: MergeInput[]; options: MergeOptions };
      output: MergeResult;
    };
  }
}

export const handlers = {
  'merge.pdfs': ({ inputs, options }) => mergePdfs(inputs, options),
} satisfies TaskHandlers<'merge.pdfs'>;

/** The merged PDF (up to OUTPUT_MAX_MB) is the writer's own buffer: moved to the main thread, not copied. */
export const transfer: TaskFile<'merge.pdfs'>['transfer'] = {
  'merge.pdfs': ({ pdf }) => wholeBuffer(pdf),
};
