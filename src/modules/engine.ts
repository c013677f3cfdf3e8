/**
 * The engine threads' side of the modules: which tasks file serves each task, which files an engine thread
 * loads at start, and the plain data the modules' tasks need there (src/engines/tasks.ts `TaskData`). The
 * thread itself (src/engines/worker.ts) knows no module: it imports the files named here.
 */
import type { EngineTasks, TaskData, TaskFile, TaskName } from '../engines/tasks.js';
import type { Module, ProvisionContext } from '../http/capability.js';
import { MODULES } from './index.js';

/** Task → tasks file, and the files to preload, from the modules' descriptors. */
export function engineTasks(modules: readonly Module[] = MODULES): Pick<TaskData, 'taskFiles' | 'preloadFiles'> {
  const taskFiles: Record<string, string> = {};
  const preloadFiles: string[] = [];
  for (const m of modules) {
    if (!m.tasks) continue;
    for (const name of m.tasks.names) {
      if (taskFiles[name] !== undefined) throw new Error(`engine task ${name} is served by two modules (${m.id} and another)`);
      taskFiles[name] = m.tasks.file;
    }
    if (m.tasks.preload) preloadFiles.push(m.tasks.file);
  }
  return { taskFiles, preloadFiles };
}

/** Everything the engine threads are given by the modules: their tasks and their data. */
export function engineWorkerData(ctx: ProvisionContext, modules: readonly Module[] = MODULES): TaskData {
  return Object.assign(
    { ...engineTasks(modules), urlFetchAllowlist: ctx.config.urlFetchAllowlist },
    ...modules.map((m) => m.workerData?.(ctx) ?? {}),
  ) as TaskData;
}

/**
 * Runs one task on this thread, with the handler an engine thread would run (the CLI's single-document
 * commands: starting threads that each load the engines costs more than the one call).
 */
export async function runTaskHere<N extends TaskName>(task: N, input: EngineTasks[N]['input'], data: TaskData): Promise<EngineTasks[N]['output']> {
  const file = data.taskFiles[task];
  if (!file) throw new Error(`no module serves the engine task ${task}`);
  const { handlers } = (await import(file)) as TaskFile;
  const handler = handlers[task] as ((input: unknown, context: { data: TaskData }) => unknown) | undefined;
  if (!handler) throw new Error(`${file} has no handler for ${task}`);
  return (await handler(input, { data })) as EngineTasks[N]['output'];
}
