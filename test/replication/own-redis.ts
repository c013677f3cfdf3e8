/**
 * A redis-server of a test's own on a free port (not the machine's Redis), to stop, freeze (SIGSTOP) and
 * restart; and the helpers the Redis-loss suites share. `hasRedisServer` is false (with a printed reason)
 * where redis-server is not installed.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';

export const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export class OwnRedis {
  child?: ChildProcess;
  readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-redis-'));
  constructor(readonly port: number) {}
  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }
  async start(): Promise<void> {
    this.child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir], {
      stdio: 'ignore',
    });
    const deadline = Date.now() + 10_000;
    for (;;) {
      const up = await new Promise<boolean>((r) => {
        const s = net.connect(this.port, '127.0.0.1');
        s.once('connect', () => (s.end(), r(true)));
        s.once('error', () => r(false));
      });
      if (up) return;
      if (Date.now() > deadline) throw new Error('redis-server did not start');
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  /** Frees the directory (after stop). */
  cleanup(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
  async stop(): Promise<void> {
    const c = this.child;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await exited;
  }
}

/** Log lines (JSON) captured from a pino logger. */
export function capturingLogger() {
  const lines: Array<{ level: number; msg: string; redis?: string }> = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      cb();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}

export const until = async (cond: () => boolean, ms: number) => {
  const deadline = Date.now() + ms;
  while (!cond() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return cond();
};
