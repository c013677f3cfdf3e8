/** The merge module: PDF and DOCX inputs in order → one PDF (DOCX through the office pool). */
import type { TaskNamesOf } from '../engines/tasks.js';
import type { Module } from '../http/capability.js';

export default {
  id: 'merge',
  tag: { name: 'merge', description: 'PDF and DOCX documents merged into one PDF' },
  tasks: {
    file: new URL('./tasks.js', import.meta.url).href,
    names: ['merge.pdfs'] satisfies TaskNamesOf<typeof import('./tasks.js')>,
  },
  routes: () => import('./routes.js').then((m) => m.mergeRoutes),
} satisfies Module;
