/**
 * Every module of Folio: the one list the API app (routes, OpenAPI tags, /v1/health: src/api.ts,
 * src/services.ts), the engine threads (src/modules/engine.ts), the CLI and the configuration
 * (src/modules/config.ts) are assembled from. Provisioning runs in this order and routes register in it.
 *
 * A new capability is its folder — `module.ts` (src/http/capability.ts `Module`), its routes, its engine tasks
 * in `tasks.ts` — and one line here.
 */
import type { ModuleSettings } from '../config/index.js';
import type { TaskName } from '../engines/tasks.js';
import type { Module } from '../http/capability.js';
import office from './office.js';
import httpBody from './http-body.js';
import auth from '../auth/module.js';
import convert from '../convert/module.js';
import sign from '../sign/module.js';
import annotate from '../annotate/module.js';
import verify from '../verify/module.js';
import merge from '../merge/module.js';
import preview from '../preview/module.js';
import telemetry from '../telemetry/module.js';

export const MODULES = [office, httpBody, auth, convert, sign, annotate, verify, merge, preview, telemetry] as const satisfies readonly Module[];

// The list and the types the modules declare agree: every task declared in `EngineTasks` is served by a
// listed module, and every settings schema joined into `Config` is read by `loadConfig` (a module left out
// of the list fails to compile instead of failing at run time).
type Listed = (typeof MODULES)[number];
type ServedTasks = Listed extends infer M ? (M extends { tasks: { names: ReadonlyArray<infer N> } } ? N : never) : never;
type ReadSettings = Listed extends infer M ? (M extends { settings: infer S } ? S : never) : never;
type Unserved = Exclude<TaskName, ServedTasks>;
type Unread = Exclude<ModuleSettings[Exclude<keyof ModuleSettings, 'core'>], ReadSettings>;
type Agrees<T extends true> = T;
export type ModulesAgree = Agrees<[Unserved, Unread] extends [never, never] ? true : { tasksWithoutModule: Unserved; settingsNotRead: Unread }>;
