/**
 * One office worker process as the pool sees it: its private directory (profile, LibreOffice's temp files and
 * the documents passed to it), its fork with an environment that carries none of the API's secrets, its stop
 * (SIGKILL: LibreOffice's own shutdown can hang), and the removal of its directory however it exits.
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WORKER_DIR_ENV, WORKER_INSTALL_ENV } from './protocol.js';

export type WorkerState = 'starting' | 'idle' | 'busy' | 'stopping';

/** Why the pool stops a worker: its conversion ran out of time or memory or was abandoned; recycling; shutdown. */
export type StopReason = 'timeout' | 'memory' | 'abandoned' | 'unreachable' | 'recycle' | 'close' | 'start-timeout';

export interface OfficeWorker {
  seq: number;
  child: ChildProcess;
  dir: string;
  /** Where documents pass between the pool and the worker (protocol.ts); the worker creates it (0700) at boot. */
  ioDir: string;
  state: WorkerState;
  conversions: number;
  rss: number;
  stopReason?: StopReason;
  startTimer?: NodeJS.Timeout;
}

/** The worker entry next to this module: worker.js when compiled, worker.ts (run through tsx) from source. */
function workerEntry(): { file: string; execArgv: string[] } {
  const here = fileURLToPath(import.meta.url);
  const ext = path.extname(here);
  const file = path.join(path.dirname(here), `worker${ext}`);
  return { file, execArgv: ext === '.ts' ? ['--import', 'tsx'] : [] };
}

/**
 * Directories of workers not yet reaped. If the API process exits without closing the pool (uncaught
 * error, process.exit), its workers die with the IPC channel; this removes what they leave behind.
 */
const liveWorkerDirs = new Set<string>();
process.once('exit', () => {
  for (const dir of liveWorkerDirs) removeWorkerDir(dir);
});

/** Synchronously: an asynchronous removal could be cut short by the API process exiting right after close(). */
export function removeWorkerDir(dir: string): void {
  liveWorkerDirs.delete(dir);
  try {
    fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  } catch {
    // Nothing more to do: a later start uses a new directory.
  }
}

function pickEnv(env: NodeJS.ProcessEnv, names: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of names) if (env[n] !== undefined) out[n] = env[n]!;
  return out;
}

/** /dev/shm when writable (documents then pass through memory, not a disk), else the OS temp dir. */
export function defaultTempRoot(): string {
  try {
    fs.accessSync('/dev/shm', fs.constants.W_OK);
    return '/dev/shm';
  } catch {
    return os.tmpdir();
  }
}

/** Forks one worker in a new private directory under `tempRoot` (state 'starting' until it says 'ready'). */
export function forkWorker(seq: number, o: { tempRoot: string; installPath?: string }): OfficeWorker {
  const dir = fs.mkdtempSync(path.join(o.tempRoot, 'folio-office-'));
  fs.chmodSync(dir, 0o700);
  liveWorkerDirs.add(dir);
  const entry = workerEntry();
  const child = fork(entry.file, [], {
    execArgv: entry.execArgv,
    serialization: 'advanced',
    // LibreOffice writes diagnostics that may quote document content: never forward them.
    stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    env: {
      // Only what LibreOffice needs: the API's secrets (database URL, signing password, admin token)
      // stay out of a process that parses untrusted documents.
      ...pickEnv(process.env, ['PATH', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'FONTCONFIG_PATH', 'FONTCONFIG_FILE']),
      HOME: dir,
      TMPDIR: dir,
      [WORKER_DIR_ENV]: dir,
      ...(o.installPath ? { [WORKER_INSTALL_ENV]: o.installPath } : {}),
      // Belt and braces with the profile's proxy settings: LibreOffice's HTTP stack also reads these.
      http_proxy: 'http://127.0.0.1:9',
      https_proxy: 'http://127.0.0.1:9',
      HTTP_PROXY: 'http://127.0.0.1:9',
      HTTPS_PROXY: 'http://127.0.0.1:9',
      no_proxy: '',
      NO_PROXY: '',
      SAL_USE_VCLPLUGIN: 'svp',
    },
  });
  return { seq, child, dir, ioDir: path.join(dir, 'io'), state: 'starting', conversions: 0, rss: 0 };
}

/** Kills a worker (SIGKILL) and resolves when it has exited; the first reason given is the one kept. */
export function stopWorker(worker: OfficeWorker, reason: StopReason): Promise<void> {
  worker.stopReason ??= reason;
  worker.state = 'stopping';
  if (worker.child.exitCode !== null || worker.child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    worker.child.once('exit', () => resolve());
    worker.child.kill('SIGKILL');
  });
}
