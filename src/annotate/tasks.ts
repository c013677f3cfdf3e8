/** Annotate's engine tasks (run on engine threads, src/engines/worker.ts): fill a template, list its fields. */
import type { TaskHandlers } from '../engines/tasks.js';
import { SafeFetcher } from '../fetch/safe-fetch.js';
import { annotateDocx, listTemplateFields, type AnnotateField, type AnnotateReport, type FieldDescription } from './index.js';

declare module '../engines/tasks.js' {
  interface EngineTasks {
    'annotate.fill': {
      input: { template: Uint8Array; fields: AnnotateField[]; strict: boolean; flatten: boolean };
      output: { docx: Uint8Array; report: AnnotateReport };
    };
    'annotate.fields': {
      input: { template: Uint8Array };
      output: Array<FieldDescription & { occurrences: number }>;
    };
  }
}

/** Image URLs in field values are fetched through one SSRF-safe fetcher per thread (URL_FETCH_ALLOWLIST). */
let fetcher: SafeFetcher | undefined;

export const handlers = {
  'annotate.fill': async ({ template, fields, strict, flatten }, { data }) => {
    fetcher ??= new SafeFetcher({ allowlist: data.urlFetchAllowlist });
    const result = await annotateDocx(template, fields, { strict, flatten, fetcher });
    return { docx: result.docx, report: result.report };
  },
  'annotate.fields': ({ template }) => listTemplateFields(template),
} satisfies TaskHandlers<'annotate.fill' | 'annotate.fields'>;
