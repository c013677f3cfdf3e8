/**
 * Pieces of the multi-instance test (issue 14): Folio API and ingest processes started from the compiled
 * build (as test/adversarial does), a Redis database claimed on the machine's server, a private
 * redis-server that the test can stop and start again, and a "slow document" HTTP server whose answers the
 * test releases when it chooses (so a request holds its in-flight slot exactly as long as the test needs).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { PDFDocument, StandardFonts } from '@cantoo/pdf-lib';
import { ROOT, freePort, serverEntry } from '../adversarial/server.js';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it returns a value other than undefined, or throws after `timeoutMs`. */
export async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

let entry: { args: string[]; label: string } | undefined;

/** The compiled server (dist/ when fresh, else the sources compiled into a private folder); computed once. */
export function folioEntry(): { args: string[]; label: string } {
  entry ??= serverEntry();
  return entry;
}

export type Mode = 'api' | 'ingest';

/** One Folio process (`main.js api` or `main.js ingest`) in its own process group, with its whole log kept. */
export class Replica {
  private log = '';
  private exited: { code: number | null; signal: string | null } | undefined;
  private readonly exitWaiters: Array<() => void> = [];

  private constructor(
    readonly name: string,
    readonly mode: Mode,
    readonly child: ChildProcess,
    readonly url: string,
    readonly dataDir: string,
  ) {
    const keep = (d: Buffer) => {
      this.log += d.toString();
      if (this.log.length > 2_000_000) this.log = this.log.slice(-1_000_000);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    child.on('exit', (code, signal) => {
      this.exited = { code, signal };
      this.exitWaiters.splice(0).forEach((w) => w());
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  static async start(name: string, mode: Mode, env: Record<string, string>, startTimeoutMs = 180_000): Promise<Replica> {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `folio-replica-${name}-`));
    const port = await freePort();
    const portEnv = mode === 'api' ? { PORT: String(port) } : { INGEST_PORT: String(port) };
    const child = spawn(process.execPath, [...folioEntry().args, mode], {
      cwd: ROOT,
      detached: true, // its own process group: LibreOffice workers die with it
      env: { ...process.env, HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...portEnv, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const r = new Replica(name, mode, child, `http://127.0.0.1:${port}`, dataDir);
    process.once('exit', () => r.kill());
    try {
      await until(`${name} (${mode}) to answer`, startTimeoutMs, async () => {
        if (r.exited) throw new Error(`${name} exited during start-up (${JSON.stringify(r.exited)}): ${r.log.slice(-4000)}`);
        const res =
          mode === 'api'
            ? await fetch(`${r.url}/v1/health`, { signal: AbortSignal.timeout(3000) })
            : await fetch(`${r.url}/v1/collect`, { method: 'OPTIONS', signal: AbortSignal.timeout(3000) });
        await res.arrayBuffer();
        return res.status === (mode === 'api' ? 200 : 204) ? true : undefined;
      }).catch((e: Error) => {
        if (r.exited) throw new Error(`${name} exited during start-up (${JSON.stringify(r.exited)}): ${r.log.slice(-4000)}`);
        throw e;
      });
    } catch (e) {
      r.kill();
      throw e;
    }
    return r;
  }

  alive(): boolean {
    return this.exited === undefined;
  }

  exitInfo() {
    return this.exited;
  }

  logText(): string {
    return this.log;
  }

  /** Parsed pino lines at `minLevel` or above (40 = warn). */
  logLines(minLevel = 40): Array<Record<string, unknown> & { level: number; msg?: string }> {
    const out: Array<Record<string, unknown> & { level: number; msg?: string }> = [];
    for (const line of this.log.split('\n')) {
      if (!line.startsWith('{')) continue;
      try {
        const j = JSON.parse(line) as Record<string, unknown> & { level: number; msg?: string };
        if (typeof j.level === 'number' && j.level >= minLevel) out.push(j);
      } catch {
        /* a partial line */
      }
    }
    return out;
  }

  /** SIGKILL to the whole process group. */
  kill(): void {
    try {
      process.kill(-this.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }

  waitExit(timeoutMs: number): Promise<boolean> {
    if (this.exited) return Promise.resolve(true);
    return new Promise((resolve) => {
      const t = setTimeout(() => resolve(false), timeoutMs);
      this.exitWaiters.push(() => {
        clearTimeout(t);
        resolve(true);
      });
    });
  }

  /** SIGTERM (drain), SIGKILL to the group after `graceMs`; removes the data folder. */
  async stop(graceMs = 8000): Promise<void> {
    if (this.alive()) {
      try {
        process.kill(this.pid, 'SIGTERM');
      } catch {
        /* gone */
      }
      await this.waitExit(graceMs);
    }
    this.kill();
    fs.rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** Whether something accepts TCP connections at host:port within 1.5 s. */
export function tcpReachable(host: string, port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const s = net.connect(port, host);
    s.setTimeout(1500);
    s.once('connect', () => {
      s.end();
      resolve(true);
    });
    s.once('error', () => resolve(false));
    s.once('timeout', () => {
      s.destroy();
      resolve(false);
    });
  });
}

/** The key that marks a database index of the machine's Redis as taken by a run (its value: the run id). */
export const CLAIM_KEY = 'folio-replicas-test:claim';

/** Every key of the database `url` names (SCAN, not KEYS). */
export async function redisKeys(url: string): Promise<string[]> {
  const c = new Redis(url, { maxRetriesPerRequest: 1 });
  c.on('error', () => undefined);
  try {
    const out: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await c.scan(cursor, 'COUNT', 1000);
      out.push(...batch);
      cursor = next;
    } while (cursor !== '0');
    return out;
  } finally {
    c.disconnect();
  }
}

/**
 * A database index of the machine's Redis that no one else uses during the run: the first of 1–15 (in a
 * random order; 0 is what the other suites use) that is empty and where our claim key could be set with NX.
 * `release()` deletes the keys under `keyPrefix` (the REDIS_KEY_PREFIX the servers were given) and the claim.
 */
export async function claimRedisDb(
  baseUrl: string,
  runId: string,
  keyPrefix: string,
): Promise<{ url: string; db: number; release(): Promise<void> }> {
  const order = Array.from({ length: 15 }, (_, i) => i + 1).sort(() => Math.random() - 0.5);
  for (const db of order) {
    const r = new Redis(`${baseUrl.replace(/\/\d*$/, '')}/${db}`, { maxRetriesPerRequest: 1, lazyConnect: true });
    r.on('error', () => undefined);
    try {
      await r.connect();
      if ((await r.dbsize()) !== 0) continue;
      if ((await r.set(CLAIM_KEY, runId, 'EX', 1800, 'NX')) !== 'OK') continue;
      if ((await r.dbsize()) !== 1) {
        await r.del(CLAIM_KEY);
        continue;
      }
      return {
        url: `${baseUrl.replace(/\/\d*$/, '')}/${db}`,
        db,
        async release() {
          const c = new Redis(`${baseUrl.replace(/\/\d*$/, '')}/${db}`, { maxRetriesPerRequest: 1 });
          c.on('error', () => undefined);
          try {
            if ((await c.get(CLAIM_KEY)) !== runId) return;
            const ours = (await redisKeys(`${baseUrl.replace(/\/\d*$/, '')}/${db}`)).filter((k) => k.startsWith(keyPrefix));
            for (let i = 0; i < ours.length; i += 500) await c.del(...ours.slice(i, i + 500));
            await c.del(CLAIM_KEY);
          } finally {
            c.disconnect();
          }
        },
      };
    } catch {
      /* try the next one */
    } finally {
      r.disconnect();
    }
  }
  throw new Error('no free Redis database index (1–15) on the machine Redis');
}

export const REDIS_SERVER_BIN = process.env.FOLIO_TEST_REDIS_SERVER ?? '/usr/bin/redis-server';

/** A private redis-server (no persistence) on a fixed port, that can be stopped and started again. */
export class OwnRedis {
  private child: ChildProcess | undefined;
  log = '';
  private constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<OwnRedis> {
    const r = new OwnRedis(await freePort());
    await r.up();
    process.once('exit', () => r.child?.kill('SIGKILL'));
    return r;
  }

  async up(): Promise<void> {
    const child = spawn(REDIS_SERVER_BIN, ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    child.stdout!.on('data', (d: Buffer) => (this.log = (this.log + d.toString()).slice(-8000)));
    child.stderr!.on('data', (d: Buffer) => (this.log = (this.log + d.toString()).slice(-8000)));
    await until(`redis-server on port ${this.port}`, 15_000, async () => {
      if (child.exitCode !== null) throw new Error(`redis-server exited: ${this.log}`);
      const c = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      c.on('error', () => undefined); // refused while the server starts: the probe just fails
      try {
        await c.connect();
        return (await c.ping()) === 'PONG' ? true : undefined;
      } finally {
        c.disconnect();
      }
    });
  }

  /** SIGTERM, and waits until the process is gone. */
  async down(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGTERM');
    await Promise.race([gone, sleep(10_000).then(() => child.kill('SIGKILL'))]);
    await gone;
  }
}

/** A one-page PDF (a few KB): readable, unsigned, so /v1/verify answers 200 NO_SIGNATURE_FOUND. */
export async function smallPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  doc.addPage([595, 842]).drawText('Folio replicas test', { x: 50, y: 780, size: 14, font });
  return new Uint8Array(await doc.save({ useObjectStreams: false }));
}

/**
 * An HTTP server on 127.0.0.1 that answers GET /doc.pdf with `body`, but only when the test calls
 * `release()` (or after `maxHoldMs`, so nothing waits for ever). A document request with
 * `document: {url}` pointing here holds its in-flight slot until then, without costing any CPU.
 */
export class HeldDocumentServer {
  /** Requests received and not yet answered. */
  waiting = 0;
  received = 0;
  private readonly held: Array<() => void> = [];
  private gateOpen = false;

  private constructor(
    private readonly server: http.Server,
    readonly port: number,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/doc.pdf`;
  }

  get hostPort(): string {
    return `127.0.0.1:${this.port}`;
  }

  static async start(body: Uint8Array, maxHoldMs = 14_000): Promise<HeldDocumentServer> {
    const box: { self?: HeldDocumentServer } = {};
    const server = http.createServer((req, res) => {
      const s = box.self!;
      s.received++;
      s.waiting++;
      let done = false;
      const answer = () => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        s.waiting--;
        res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': body.length });
        res.end(body);
      };
      const timer = setTimeout(answer, maxHoldMs);
      req.resume();
      if (s.gateOpen) answer();
      else s.held.push(answer);
    });
    server.keepAliveTimeout = 1000;
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    box.self = new HeldDocumentServer(server, (server.address() as net.AddressInfo).port);
    return box.self;
  }

  /** From now on requests are held until the next `release()`. */
  hold(): void {
    this.gateOpen = false;
  }

  /** Answers every held request; with `open`, later requests are answered at once. */
  release(open = false): void {
    this.gateOpen = open;
    this.held.splice(0).forEach((a) => a());
  }

  close(): Promise<void> {
    this.release(true);
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}
