/**
 * The convert module: DOCX → PDF (the office pool), Markdown/HTML → DOCX or PDF, DOCX → Markdown/HTML, and
 * page previews (src/preview, through the preview module's task). Its engine tasks load when an engine
 * thread starts (the API's common path) and warm V8 up there.
 */
import type { TaskNamesOf } from '../engines/tasks.js';
import type { Module } from '../http/capability.js';

export default {
  id: 'convert',
  tag: { name: 'convert', description: 'DOCX → PDF, Markdown/HTML → DOCX or PDF' },
  tasks: {
    file: new URL('./tasks.js', import.meta.url).href,
    names: ['convert.toDocx', 'convert.fromDocx'] satisfies TaskNamesOf<typeof import('./tasks.js')>,
    preload: true,
  },
  routes: () => import('./routes.js').then((m) => m.convertRoutes),
} satisfies Module;
