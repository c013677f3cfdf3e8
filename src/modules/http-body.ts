/**
 * The JSON body parser as a module: its one engine task, `http.parseJson`, runs on the body thread
 * (`Services.bodyPool`, src/services.ts) for bodies of OFF_THREAD_JSON_BYTES or more (src/http/app.ts).
 */
import type { TaskNamesOf } from '../engines/tasks.js';
import type { Module } from '../http/capability.js';

export default {
  id: 'http-body',
  tasks: {
    file: new URL('./http-body-tasks.js', import.meta.url).href,
    names: ['http.parseJson'] satisfies TaskNamesOf<typeof import('./http-body-tasks.js')>,
  },
} satisfies Module;
