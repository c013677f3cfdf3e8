/**
 * Native work (poppler's pdftoppm, resvg) run where stopping it really stops it: a child process with its own
 * kernel limits, SIGKILLed at its time limit. Terminating a worker thread does not stop native code — the
 * thread's JavaScript ends, the Rust or C++ underneath keeps a core busy and holds the process open, which
 * is why neither a thread pool nor an AbortSignal is a budget for it.
 *
 * Each job runs as `prlimit --as --cpu -- setpriv --pdeathsig KILL -- <command>` (util-linux, present on
 * every Debian/Ubuntu image; without them the command runs plainly and only the wall-clock kill remains):
 * - RLIMIT_AS caps the address space, so an allocation the document asks for fails inside the child (the
 *   renderer reports it and exits) instead of growing the machine's memory;
 * - RLIMIT_CPU ends a child that somehow outlived its parent's timer (SIGXCPU, then SIGKILL one second on);
 * - the parent-death signal is tied to the *thread* that started the child: when that thread ends, or the
 *   server process dies, the kernel SIGKILLs the child at once. Engine threads do not spawn here themselves:
 *   a thread's child killed that way is never reaped (zombie until the server exits), so their children are
 *   started by the main thread's runner (runner.ts) and killed when the pool ends their job.
 *
 * Bytes go through stdin/stdout (no temporary files); stdout is capped while it is read. Written by hand: no
 * library runs a process under rlimits with a parent-death signal; the two tools are util-linux's own.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface BoundedRunOptions {
  /** Bytes written to the child's stdin (then closed). */
  input: Uint8Array;
  /** Wall-clock limit: the child is SIGKILLed when it passes (result.stopped = 'timeout'). */
  timeoutMs: number;
  /** RLIMIT_CPU in seconds (default: the wall-clock limit rounded up, plus one). */
  cpuSeconds?: number;
  /** RLIMIT_AS in bytes; absent: no address-space cap. */
  addressSpaceBytes?: number;
  /** stdout beyond this many bytes: killed (result.stopped = 'output'). */
  maxOutputBytes: number;
  /** Aborted (client gone, request deadline spent): killed (result.stopped = 'aborted'). */
  signal?: AbortSignal;
  /** The child's whole environment (default: PATH only: no secret of the API reaches a parser of documents). */
  env?: Record<string, string>;
}

export interface BoundedRunResult {
  stdout: Buffer;
  /** The first 4 KB of stderr (diagnostics; may quote the document, so never logged as they are). */
  stderr: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Why the parent killed it, when it did. */
  stopped?: 'timeout' | 'output' | 'aborted';
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(':')) {
    const p = path.join(dir || '.', name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      // next directory
    }
  }
  return undefined;
}

let wrappers: { prlimit?: string; setpriv?: string } | undefined;
/** prlimit and setpriv when this machine has them (looked up once). */
export function limitTools(): { prlimit?: string; setpriv?: string } {
  return (wrappers ??= { prlimit: onPath('prlimit'), setpriv: onPath('setpriv') });
}

/** The argv that runs `command args` under the limits (the wrappers exec, so the pid is the command's). */
export function boundedArgv(command: string, args: string[], limits: { cpuSeconds: number; addressSpaceBytes?: number }): string[] {
  const tools = limitTools();
  const argv: string[] = [];
  if (tools.prlimit) {
    argv.push(tools.prlimit, `--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 1}`);
    if (limits.addressSpaceBytes !== undefined) argv.push(`--as=${limits.addressSpaceBytes}`);
    argv.push('--');
  }
  if (tools.setpriv) argv.push(tools.setpriv, '--pdeathsig', 'KILL', '--');
  argv.push(command, ...args);
  return argv;
}

/**
 * Runs one native job. Resolves with what the child did (the caller turns exit status and stderr into its
 * own answer); rejects only when the command cannot be started at all (ENOENT and the like).
 */
export function runBounded(command: string, args: string[], opts: BoundedRunOptions): Promise<BoundedRunResult> {
  const cpuSeconds = opts.cpuSeconds ?? Math.ceil(opts.timeoutMs / 1000) + 1;
  const [file, ...argv] = boundedArgv(command, args, { cpuSeconds, addressSpaceBytes: opts.addressSpaceBytes });
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) return resolve({ stdout: Buffer.alloc(0), stderr: '', code: null, signal: null, stopped: 'aborted' });
    const child = spawn(file!, argv, {
      stdio: ['pipe', 'pipe', 'pipe'],
      shell: false,
      env: opts.env ?? { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    const chunks: Buffer[] = [];
    let size = 0;
    let stderr = '';
    let stopped: BoundedRunResult['stopped'];
    let startError: Error | undefined;
    const stop = (why: NonNullable<BoundedRunResult['stopped']>) => {
      stopped ??= why;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => stop('timeout'), Math.max(1, opts.timeoutMs));
    const onAbort = () => stop('aborted');
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (d: Buffer) => {
      if (stopped) return;
      size += d.length;
      if (size > opts.maxOutputBytes) stop('output');
      else chunks.push(d);
    });
    child.stderr.on('data', (d: Buffer) => {
      if (stderr.length < 4096) stderr += d.toString('utf8');
    });
    // The child may exit before reading everything (broken input, a limit hit): not an error of ours.
    child.stdin.on('error', () => {});
    child.on('error', (e) => {
      startError = e;
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (startError && code === null && signal === null) return reject(startError);
      resolve({ stdout: Buffer.concat(chunks), stderr, code, signal, stopped });
    });
    child.stdin.end(opts.input);
  });
}
