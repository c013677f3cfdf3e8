/** The annotate module: template fields listed and filled (DOCX, or PDF through the office pool). */
import type { TaskNamesOf } from '../engines/tasks.js';
import type { Module } from '../http/capability.js';

export default {
  id: 'annotate',
  tag: { name: 'annotate', description: 'Fill DOCX templates' },
  tasks: {
    file: new URL('./tasks.js', import.meta.url).href,
    names: ['annotate.fill', 'annotate.fields'] satisfies TaskNamesOf<typeof import('./tasks.js')>,
  },
  routes: () => import('./routes.js').then((m) => m.annotateRoutes),
} satisfies Module;
