/** Preview's engine task (run on engine threads, src/engines/worker.ts): page sizes read before poppler runs. */
import type { TaskHandlers } from '../engines/tasks.js';
import { pageSizes } from './page-sizes.js';

declare module '../engines/tasks.js' {
  interface EngineTasks {
    /** The rendered size of preview pages, read before poppler runs (src/preview/page-sizes.ts); null: unknown. */
    'preview.pageSizes': {
      input: { pdf: Uint8Array; pages: number[] };
      output: Array<{ width: number; height: number } | null>;
    };
  }
}

export const handlers = {
  'preview.pageSizes': ({ pdf, pages }) => pageSizes(pdf, pages).map((s) => s ?? null),
} satisfies TaskHandlers<'preview.pageSizes'>;
