/**
 * The real Folio API as a separate child process (so a frozen or crashed server cannot take the test runner
 * with it, and so its pid and RSS can be read from /proc), an API key obtained the way a client gets one
 * (register → code from the .eml outbox → verify), and a /v1/health poller on its own worker thread (so the
 * latency it measures is the server's, not the test thread's while it builds a 20 MB input).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import type { Answer, RequestSpec } from './generators.js';

export const ROOT = path.resolve(import.meta.dirname, '../..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/** VmRSS of a pid in bytes, or undefined when it is gone. */
export function rssOf(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** utime + stime of a process (all its threads), in seconds; 0 once it is gone. */
export function cpuOf(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return 0;
  }
}

/** CPU seconds of a process and every descendant. */
export const treeCpu = (pid: number): number => cpuOf(pid) + descendants(pid).reduce((s, d) => s + cpuOf(d.pid), 0);

/** RSS in bytes of a process and every descendant (LibreOffice workers, native children). */
export const treeRss = (pid: number): number => (rssOf(pid) ?? 0) + descendants(pid).reduce((s, d) => s + d.rss, 0);

/** Every descendant process of `pid` (LibreOffice workers and their helpers), with name and RSS. */
export function descendants(pid: number): Array<{ pid: number; name: string; rss: number }> {
  const children = new Map<number, number[]>();
  const names = new Map<number, string>();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const ppid = Number(stat.slice(close + 2).split(' ')[1]);
      names.set(Number(d), stat.slice(stat.indexOf('(') + 1, close));
      (children.get(ppid) ?? children.set(ppid, []).get(ppid)!).push(Number(d));
    } catch {
      /* the process ended while we looked */
    }
  }
  const out: Array<{ pid: number; name: string; rss: number }> = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      out.push({ pid: c, name: names.get(c) ?? '?', rss: rssOf(c) ?? 0 });
      walk(c);
    }
  };
  walk(pid);
  return out;
}

export const MB = 1024 * 1024;

function newestMtime(dir: string): number {
  let newest = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestMtime(p) : fs.statSync(p).mtimeMs);
  }
  return newest;
}

/**
 * What to run: the compiled build, as `npm start` does. From source (tsx) every engine worker thread
 * registers its own TypeScript loader and esbuild child, so a replaced worker costs seconds of CPU and leaves
 * an esbuild zombie behind; that would be measured as the server's cost. dist/ is used when it is newer than
 * every source file (`npm test` builds it first); otherwise the sources are compiled into a private folder
 * (dist/ may belong to someone else's build); FOLIO_ADV_FROM=source forces tsx.
 */
export function serverEntry(): { args: string[]; label: string } {
  const source = { args: ['--import', 'tsx', path.join(ROOT, 'src/main.ts')], label: 'source (tsx)' };
  if (process.env.FOLIO_ADV_FROM === 'source') return source;
  const srcNewest = newestMtime(path.join(ROOT, 'src'));
  const dist = path.join(ROOT, 'dist/src/main.js');
  if (fs.existsSync(dist) && fs.existsSync(path.join(ROOT, 'dist/src/engines/worker.js')) && newestMtime(path.join(ROOT, 'dist/src')) >= srcNewest) {
    return { args: [dist], label: 'dist/ (fresh build)' };
  }
  const out = path.join(ROOT, 'node_modules/.cache/folio-adversarial');
  const main = path.join(out, 'src/main.js');
  if (!(fs.existsSync(main) && newestMtime(path.join(out, 'src')) >= srcNewest)) {
    fs.rmSync(out, { recursive: true, force: true });
    // Type errors in someone's half-finished file still emit JavaScript; only a missing entry falls back.
    spawnSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(ROOT, 'tsconfig.json'), '--outDir', out], {
      cwd: ROOT,
      stdio: 'ignore',
    });
  }
  return fs.existsSync(main) ? { args: [main], label: 'compiled sources (tsc)' } : source;
}

/** The budgets the server runs with in the adversarial suite and the soak benchmark. */
export interface ServerLimits {
  engineTimeoutMs: number;
  officeTimeoutMs: number;
  /** Engine worker threads (default 2). */
  engineWorkers?: number;
  /** ENGINE_QUEUE_SIZE; the server's default when absent. */
  engineQueueSize?: number;
}

/**
 * The environment for `FolioProcess.start`: one LibreOffice worker with a 1 GB ceiling, engine threads with
 * 512 MB each, and the given budgets.
 */
export function serverEnv(limits: ServerLimits): Record<string, string> {
  const env: Record<string, string> = {
    OFFICE_WORKERS: '1',
    OFFICE_TIMEOUT_MS: String(limits.officeTimeoutMs),
    OFFICE_MEMORY_MB: '1024',
    ENGINE_WORKERS: String(limits.engineWorkers ?? 2),
    ENGINE_TIMEOUT_MS: String(limits.engineTimeoutMs),
    ENGINE_MEMORY_MB: '512',
  };
  if (limits.engineQueueSize !== undefined) env.ENGINE_QUEUE_SIZE = String(limits.engineQueueSize);
  return env;
}

export interface SendResult extends Answer {
  ms: number;
  retryAfter: string | null;
  /** Set when there was no HTTP answer (aborted at the deadline, connection reset, …). */
  error?: string;
}

export class FolioProcess {
  private log = '';
  private exited: { code: number | null; signal: string | null } | undefined;

  private constructor(
    readonly child: ChildProcess,
    readonly url: string,
    readonly dataDir: string,
    readonly metricsUrl: string,
    /** What runs: the compiled build or the sources. */
    readonly entry: string,
  ) {
    const keep = (d: Buffer) => {
      this.log = (this.log + d.toString()).slice(-8000);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    child.on('exit', (code, signal) => (this.exited = { code, signal }));
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Starts `node --import tsx src/main.ts api` and waits until /v1/health answers 200. */
  static async start(env: Record<string, string>, startTimeoutMs = 120_000): Promise<FolioProcess> {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-adv-'));
    const port = await freePort();
    const entry = serverEntry();
    const metricsPort = await freePort();
    const child = spawn(process.execPath, [...entry.args, 'api'], {
      cwd: ROOT,
      // Its own process group, so the LibreOffice workers die with it when we kill the group.
      detached: true,
      env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), METRICS_PORT: String(metricsPort), DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const p = new FolioProcess(child, `http://127.0.0.1:${port}`, dataDir, `http://127.0.0.1:${metricsPort}/metrics`, entry.label);
    // The server runs in its own process group; do not leave it behind if this process exits first.
    process.once('exit', () => p.kill());
    const deadline = Date.now() + startTimeoutMs;
    for (;;) {
      if (p.exited) throw new Error(`Folio exited during start-up (${JSON.stringify(p.exited)}): ${p.log}`);
      if (Date.now() > deadline) {
        p.kill();
        throw new Error(`Folio did not answer /v1/health within ${startTimeoutMs} ms: ${p.log}`);
      }
      const r = await fetch(`${p.url}/v1/health`, { signal: AbortSignal.timeout(2000) }).catch(() => undefined);
      if (r?.status === 200) {
        const h = (await r.json()) as { status: string };
        // Wait for the office pool too (degraded while its worker starts), up to a point.
        if (h.status === 'healthy' || Date.now() > deadline - startTimeoutMs / 2) return p;
      }
      await sleep(250);
    }
  }

  alive(): boolean {
    if (this.exited) return false;
    try {
      process.kill(this.pid, 0);
      return true;
    } catch {
      return false;
    }
  }

  exitInfo() {
    return this.exited;
  }

  logTail(): string {
    return this.log;
  }

  rss(): number | undefined {
    return rssOf(this.pid);
  }

  /**
   * The longest event-loop delay (ms) since the previous call, from the server's own Prometheus metrics
   * (prom-client's monitorEventLoopDelay histogram, reset at every scrape). It tells a blocked event loop
   * apart from a main thread that was merely waiting for a CPU on a busy machine.
   */
  async loopDelayMax(): Promise<number> {
    return ((await this.metrics()).nodejs_eventloop_lag_max_seconds ?? NaN) * 1000;
  }

  /** The server's unlabelled Prometheus samples (name → value); empty when /metrics does not answer. */
  async metrics(): Promise<Record<string, number>> {
    const text = await fetch(this.metricsUrl, { signal: AbortSignal.timeout(3000) }).then(
      (r) => r.text(),
      () => '',
    );
    const out: Record<string, number> = {};
    for (const m of text.matchAll(/^([a-z_]+) (\S+)$/gm)) out[m[1]!] = Number(m[2]);
    return out;
  }

  /** SIGKILL to the whole process group (the server and its LibreOffice workers). */
  kill(): void {
    try {
      process.kill(-this.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }

  /** SIGTERM (drain), then SIGKILL to the group after `graceMs`; removes the data folder. */
  async stop(graceMs = 5000): Promise<void> {
    if (this.alive()) {
      try {
        process.kill(this.pid, 'SIGTERM');
      } catch {
        /* gone */
      }
      const deadline = Date.now() + graceMs;
      while (this.alive() && Date.now() < deadline) await sleep(100);
    }
    this.kill();
    fs.rmSync(this.dataDir, { recursive: true, force: true });
  }

  /** A fresh API key through the public flow: register, read the code from the outbox, verify. */
  async newKey(): Promise<string> {
    const email = `adv-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}@example.com`;
    const reg = await fetch(`${this.url}/v1/auth/register?email=${encodeURIComponent(email)}`);
    if (reg.status !== 200) throw new Error(`register answered ${reg.status}: ${await reg.text()}`);
    const outbox = path.join(this.dataDir, 'outbox');
    const deadline = Date.now() + 10_000;
    let code: string | undefined;
    while (!code) {
      if (Date.now() > deadline) throw new Error(`no verification mail for ${email} in ${outbox}`);
      for (const f of fs.existsSync(outbox) ? fs.readdirSync(outbox) : []) {
        const text = fs.readFileSync(path.join(outbox, f), 'utf8');
        if (text.includes(email)) code = /verification code is (\d{6})/.exec(text.replace(/=\r?\n/g, ''))?.[1];
      }
      if (!code) await sleep(100);
    }
    const ver = await fetch(`${this.url}/v1/auth/verify?email=${encodeURIComponent(email)}&code=${code}`);
    if (ver.status !== 200) throw new Error(`verify answered ${ver.status}: ${await ver.text()}`);
    return ((await ver.json()) as { apiKey: string }).apiKey;
  }

  /** Sends one request; never throws: no answer within `deadlineMs` is `{ status: 0, error }`. */
  async send(spec: RequestSpec, apiKey: string, deadlineMs: number): Promise<SendResult> {
    const headers: Record<string, string> = { authorization: `Bearer ${apiKey}` };
    let body: BodyInit | undefined;
    if (spec.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = spec.json;
    } else if (spec.file) {
      const fd = new FormData();
      fd.append('file', new Blob([new Uint8Array(spec.file.bytes)]), spec.file.name); // a copy: Blob wants an ArrayBuffer-backed view
      body = fd;
    }
    const t0 = performance.now();
    try {
      const r = await fetch(this.url + spec.path, { method: spec.method, headers, body, signal: AbortSignal.timeout(deadlineMs) });
      const buf = Buffer.from(await r.arrayBuffer());
      return {
        status: r.status,
        body: buf,
        contentType: r.headers.get('content-type') ?? '',
        retryAfter: r.headers.get('retry-after'),
        ms: performance.now() - t0,
      };
    } catch (e) {
      const err = e as Error & { cause?: Error };
      return {
        status: 0,
        body: Buffer.alloc(0),
        contentType: '',
        retryAfter: null,
        ms: performance.now() - t0,
        error: `${err.name}: ${err.cause?.message ?? err.message}`,
      };
    }
  }
}

export interface HealthSample {
  /** Epoch ms when the probe was sent. */
  at: number;
  ms: number;
  status: number;
}

/**
 * GET /v1/health every `everyMs` from a worker thread, each probe with a 2 s deadline (status 0 = no answer).
 * Samples are streamed to this thread every 100 ms. One kept-alive connection, or with `fresh` a new
 * connection per probe (`Connection: close`), as Kubernetes httpGet probes and most load balancers do: that
 * one also waits for the server to accept it.
 */
export class HealthPoller {
  private readonly worker: Worker;
  readonly samples: HealthSample[] = [];

  constructor(url: string, everyMs = 25, options: { fresh?: boolean } = {}) {
    const code = `
      const { parentPort, workerData } = require('node:worker_threads');
      const http = require('node:http');
      let url = new URL(workerData.url);
      let stopped = false;
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const buf = [];
      parentPort.on('message', (m) => { if (m.stop) stopped = true; if (m.url) url = new URL(m.url); });
      const timer = setInterval(() => { if (buf.length) parentPort.postMessage(buf.splice(0)); }, 100);
      function probe() {
        return new Promise((resolve) => {
          const at = Date.now(); const t0 = performance.now();
          let done = false;
          const finish = (status) => { if (!done) { done = true; resolve({ at, ms: performance.now() - t0, status }); } };
          const req = http.get({ host: url.hostname, port: url.port, path: '/v1/health', ...(workerData.fresh ? { agent: false, headers: { connection: 'close' } } : { agent }) }, (res) => {
            res.resume(); res.on('end', () => finish(res.statusCode)); res.on('error', () => finish(0));
          });
          req.setTimeout(2000, () => { req.destroy(); finish(0); });
          req.on('error', () => finish(0));
        });
      }
      (async () => {
        while (!stopped) {
          const s = await probe();
          buf.push(s);
          const wait = workerData.everyMs - s.ms;
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        }
        clearInterval(timer);
        parentPort.postMessage(buf.splice(0));
        agent.destroy();
      })();
    `;
    this.worker = new Worker(code, { eval: true, workerData: { url, everyMs, fresh: options.fresh === true } });
    this.worker.on('message', (batch: HealthSample[]) => {
      for (const s of batch) this.samples.push(s);
    });
    this.worker.unref();
  }

  setUrl(url: string): void {
    this.worker.postMessage({ url });
  }

  /** Samples sent in [from, to] (epoch ms), after letting the worker flush. */
  async window(from: number, to: number): Promise<HealthSample[]> {
    await sleep(250);
    return this.samples.filter((s) => s.at >= from && s.at <= to);
  }

  async stop(): Promise<void> {
    this.worker.postMessage({ stop: true });
    await sleep(300);
    await this.worker.terminate();
  }
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

export function median(values: number[]): number {
  return percentile(values, 50);
}
