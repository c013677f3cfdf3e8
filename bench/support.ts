/** Shared by the benchmarks: a bench server run as a child process that reports itself as one JSON line on stderr. */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import path from 'node:path';
import type { Readable } from 'node:stream';

export const ROOT = path.resolve(import.meta.dirname, '..');

/**
 * Starts `node --import tsx <script> [...args]` (script relative to the repository root) and resolves with the
 * first stderr line that starts with `{`, parsed; rejects if the child exits before printing one.
 */
export async function startBenchServer<T>(
  script: string,
  args: string[] = [],
): Promise<{ child: ChildProcessByStdio<null, null, Readable>; info: T }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, script), ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const info = await new Promise<T>((resolve, reject) => {
    let buf = '';
    child.stderr.on('data', (d) => {
      buf += d;
      const line = buf.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line) as T);
    });
    child.on('exit', (c) => reject(new Error(`bench server exited ${c}: ${buf}`)));
  });
  return { child, info };
}
