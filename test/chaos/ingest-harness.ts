/**
 * What the ingest chaos suite (ingest.test.ts) and its before/after measurement (ingest-measure.ts) share:
 * the compiled ingest of a checkout (this one or /tmp/before) as a child process, on PostgreSQL reached
 * through a TCP proxy this process runs, so a test can cut every database connection at a moment it
 * chooses; and the scenarios themselves, which only talk HTTP to the ingest and SQL to the database.
 *
 * The proxy is hand-written (a few lines of net.Server piping) because cutting is the point: `cut()`
 * destroys every open socket pair at once, as a failing-over database or a dropped NAT entry would.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../adversarial/server.js';

export const ADMIN_TOKEN = 'chaos-admin-token-0123456789abcdef';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface CuttableProxy {
  port: number;
  /** Destroys every proxied connection now (both sides). */
  cut(): void;
  /**
   * The next `times` COMMITs (PostgreSQL simple-query message `COMMIT`) are forwarded to the server and
   * then the connection that sent them is cut before the reply can come back: the server commits, the
   * client cannot know it (the commit-outcome-unknown case).
   */
  cutAfterNextCommit(times?: number): void;
  /**
   * For `ms` from now, every new connection is closed at once (the database is unreachable); a COMMIT
   * trapped meanwhile also cuts every other open connection.
   */
  refuseFor(ms: number): void;
  /** Connections accepted so far. */
  accepted(): number;
  close(): Promise<void>;
}

export async function startProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<CuttableProxy> {
  const open = new Set<net.Socket>();
  let count = 0;
  let commitTraps = 0;
  let refuseUntil = 0;
  // 'Q', int32 length (4 + 7), "COMMIT\0": what pg sends for client.query('COMMIT').
  const COMMIT = Buffer.concat([Buffer.from('Q'), Buffer.from([0, 0, 0, 11]), Buffer.from('COMMIT\0')]);
  const server = net.createServer((client) => {
    if (Date.now() < refuseUntil) {
      client.destroy();
      return;
    }
    count++;
    const upstream = net.connect(targetPort, targetHost);
    for (const s of [client, upstream]) {
      open.add(s);
      s.on('close', () => open.delete(s));
      s.on('error', () => undefined);
    }
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      if (commitTraps > 0 && chunk.includes(COMMIT)) {
        commitTraps--;
        // The client loses its connection now; the server gets time to commit before its side goes too.
        client.destroy();
        setTimeout(() => upstream.destroy(), 300);
        // While refusing, the database is gone for every connection, not only this one.
        if (Date.now() < refuseUntil) for (const other of open) if (other !== upstream) other.destroy();
      }
    });
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    cut() {
      for (const s of open) s.destroy();
    },
    cutAfterNextCommit(times = 1) {
      commitTraps += times;
    },
    refuseFor(ms) {
      refuseUntil = Date.now() + ms;
    },
    accepted: () => count,
    async close() {
      for (const s of open) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

export interface SpawnedIngest {
  url: string;
  child: ChildProcess;
  /** Exit code or signal once the process has ended; undefined while it runs. */
  exited(): string | undefined;
  /** What the process wrote to stderr/stdout (for diagnosing a crash). */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts `node <entry…> ingest` (entry: the compiled main.js of a checkout, or test/adversarial/server.ts's
 * serverEntry()) and waits for its health to answer.
 */
export async function spawnIngest(root: string, env: Record<string, string>, entry = [path.join(root, 'dist/src/main.js')]): Promise<SpawnedIngest> {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-chaos-ingest-'));
  const child = spawn(process.execPath, [...entry, 'ingest'], {
    cwd: root,
    env: { ...process.env, HOST: '127.0.0.1', INGEST_PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'warn', ADMIN_TOKEN, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let exit: string | undefined;
  child.stdout!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
  child.stderr!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
  child.on('exit', (code, signal) => (exit = signal ?? String(code)));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (exit !== undefined) throw new Error(`the ingest exited (${exit}) at start:\n${out}`);
    try {
      const r = await fetch(`${url}/v1/health`);
      if (r.status === 200) break;
    } catch {
      /* not listening yet */
    }
    if (i > 300) throw new Error(`the ingest did not become healthy:\n${out}`);
    await sleep(100);
  }
  return {
    url,
    child,
    exited: () => exit,
    output: () => out,
    async stop() {
      if (exit === undefined) {
        child.kill('SIGTERM');
        await Promise.race([new Promise((r) => child.once('exit', r)), sleep(10_000)]);
        if (exit === undefined) child.kill('SIGKILL');
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export function collectBody(documentIds: string[], browserInfo: Record<string, unknown> = {}) {
  return JSON.stringify({
    libraryVersion: '0.9.0',
    browserInfo: { userAgent: 'chaos/1.0', currentUrl: 'https://app.example.com/doc', hostname: 'app.example.com', ...browserInfo },
    events: documentIds.map((documentId) => ({ timestamp: new Date().toISOString(), documentId, documentCreatedAt: null })),
  });
}

export interface Answer {
  status: number | 'none';
  retryAfter: string | null;
  body: string;
}

export async function post(url: string, licenseKey: string, body: string, timeoutMs = 30_000, headers: Record<string, string> = {}): Promise<Answer> {
  try {
    const r = await fetch(`${url}/v1/collect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-license-key': licenseKey, ...headers },
      body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { status: r.status, retryAfter: r.headers.get('retry-after'), body: await r.text() };
  } catch {
    return { status: 'none', retryAfter: null, body: '' };
  }
}

/** Runs `tasks` with at most `concurrency` of them in flight. */
export async function pool<T>(n: number, concurrency: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, n) }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await task(i);
      }
    }),
  );
  return out;
}

/** The document ids stored for a license key (straight from the database, not through the ingest). */
export async function storedDocuments(databaseUrl: string, licenseKey: string): Promise<Set<string>> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const r = await c.query<{ document_id: string }>('SELECT DISTINCT document_id FROM telemetry_events WHERE license_key = $1', [licenseKey]);
    return new Set(r.rows.map((x) => x.document_id));
  } finally {
    await c.end();
  }
}

/** How many event rows the database holds per document id of a license key (1 each: stored exactly once). */
export async function eventRows(databaseUrl: string, licenseKey: string): Promise<Map<string, number>> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const r = await c.query<{ document_id: string; n: string }>(
      'SELECT document_id, COUNT(*)::text AS n FROM telemetry_events WHERE license_key = $1 GROUP BY document_id',
      [licenseKey],
    );
    return new Map(r.rows.map((x) => [x.document_id, Number(x.n)]));
  } finally {
    await c.end();
  }
}

export interface CutResult {
  alive: boolean;
  requests: number;
  statuses: Record<string, number>;
  unanswered: number;
  /** 2xx answers whose event is not in the database: acknowledged and lost. */
  ackedButMissing: number;
  /** Events in the database whose request was answered with an error (or not at all). */
  storedButNotAcked: number;
  /** Error answers without Retry-After. */
  errorsWithoutRetryAfter: number;
  /** Answers other than 202 and 503. */
  otherStatuses: number;
}

/**
 * `requests` single-event POSTs, `concurrency` in flight, each with its own document id; the database
 * connections are cut `cuts` times while they run (the first once the load is under way).
 */
export async function cutScenario(
  ingest: SpawnedIngest,
  proxy: CuttableProxy,
  databaseUrl: string,
  opts: { requests: number; concurrency: number; cuts: number; licenseKey: string },
): Promise<CutResult> {
  const ids = Array.from({ length: opts.requests }, (_, i) => `cut-${i}-${Math.random().toString(36).slice(2, 10)}`);
  let started = 0;
  const cutting = (async () => {
    for (let c = 0; c < opts.cuts; c++) {
      // Cut when a good share of the load is in flight: after 1/(cuts+1) of the requests have started.
      while (started < ((c + 1) * opts.requests) / (opts.cuts + 1)) await sleep(2);
      proxy.cut();
    }
  })();
  const answers = await pool(opts.requests, opts.concurrency, async (i) => {
    started++;
    return post(ingest.url, opts.licenseKey, collectBody([ids[i]!]));
  });
  await cutting;
  await sleep(500);
  const alive = ingest.exited() === undefined;
  const stored = await storedDocuments(databaseUrl, opts.licenseKey);
  const statuses: Record<string, number> = {};
  let ackedButMissing = 0;
  let storedButNotAcked = 0;
  let errorsWithoutRetryAfter = 0;
  let otherStatuses = 0;
  answers.forEach((a, i) => {
    statuses[String(a.status)] = (statuses[String(a.status)] ?? 0) + 1;
    const ok = typeof a.status === 'number' && a.status >= 200 && a.status < 300;
    if (ok && !stored.has(ids[i]!)) ackedButMissing++;
    if (!ok && stored.has(ids[i]!)) storedButNotAcked++;
    if (typeof a.status === 'number' && a.status >= 500 && !a.retryAfter) errorsWithoutRetryAfter++;
    if (a.status !== 202 && a.status !== 503) otherStatuses++;
  });
  return {
    alive,
    requests: opts.requests,
    statuses,
    unanswered: statuses.none ?? 0,
    ackedButMissing,
    storedButNotAcked,
    errorsWithoutRetryAfter,
    otherStatuses,
  };
}

export interface PoisonResult {
  honestRequests: number;
  honestNon2xx: number;
  honestStatuses: Record<string, number>;
  poisonStatuses: Record<string, number>;
  /** Honest 2xx events missing from the database. */
  honestAckedButMissing: number;
}

/** Four licences send ordinary events while a fifth sender's events carry U+0000 in hostname and userAgent. */
export async function poisonScenario(ingest: SpawnedIngest, databaseUrl: string, opts: { perLicence: number; tag: string }): Promise<PoisonResult> {
  const licences = [1, 2, 3, 4].map((n) => `${opts.tag}-honest-${n}`);
  const honest = licences.flatMap((key) => Array.from({ length: opts.perLicence }, (_, i) => ({ key, id: `${key}-doc-${i}` })));
  const poisonAnswers: Answer[] = [];
  let done = false;
  const poisoner = (async () => {
    let i = 0;
    while (!done) {
      const batch = await Promise.all(
        Array.from({ length: 10 }, () =>
          post(ingest.url, '', collectBody([`poison-${i++}`], { hostname: 'evil\u0000.example', userAgent: 'x\u0000y' })),
        ),
      );
      poisonAnswers.push(...batch);
    }
  })();
  const answers = await pool(honest.length, 40, (i) => post(ingest.url, honest[i]!.key, collectBody([honest[i]!.id])));
  done = true;
  await poisoner;
  const count = (as: Answer[]) => as.reduce<Record<string, number>>((m, a) => ((m[String(a.status)] = (m[String(a.status)] ?? 0) + 1), m), {});
  let missing = 0;
  for (const key of licences) {
    const stored = await storedDocuments(databaseUrl, key);
    answers.forEach((a, i) => {
      if (honest[i]!.key === key && a.status === 202 && !stored.has(honest[i]!.id)) missing++;
    });
  }
  return {
    honestRequests: honest.length,
    honestNon2xx: answers.filter((a) => typeof a.status !== 'number' || a.status < 200 || a.status >= 300).length,
    honestStatuses: count(answers),
    poisonStatuses: count(poisonAnswers),
    honestAckedButMissing: missing,
  };
}

export interface InflationResult {
  seconds: number;
  acceptedDocuments: number;
  acceptedPerSecond: number;
  statuses: Record<string, number>;
  firstRetryAfter: string | null;
}

/** One licence key, requests of 100 never-seen document ids each, as fast as `concurrency` allows for `seconds`. */
export async function inflationScenario(
  ingest: SpawnedIngest,
  opts: { licenseKey: string; seconds: number; concurrency: number },
): Promise<InflationResult> {
  const started = Date.now();
  let accepted = 0;
  let n = 0;
  let firstRetryAfter: string | null = null;
  const statuses: Record<string, number> = {};
  await Promise.all(
    Array.from({ length: opts.concurrency }, async () => {
      while (Date.now() - started < opts.seconds * 1000) {
        const base = n++;
        const ids = Array.from({ length: 100 }, (_, j) => `inflate-${base}-${j}-${Math.random().toString(36).slice(2, 8)}`);
        const a = await post(ingest.url, opts.licenseKey, collectBody(ids), 10_000, { 'x-forwarded-for': `10.9.${base % 250}.${base % 200}` });
        statuses[String(a.status)] = (statuses[String(a.status)] ?? 0) + 1;
        if (a.status === 202) accepted += 100;
        if (a.status === 429 && firstRetryAfter === null) firstRetryAfter = a.retryAfter;
      }
    }),
  );
  const seconds = (Date.now() - started) / 1000;
  return { seconds, acceptedDocuments: accepted, acceptedPerSecond: Math.round(accepted / seconds), statuses, firstRetryAfter };
}

export interface AdminResult {
  seconds: number;
  guesses: number;
  /** Wrong tokens that were actually compared (401): what an attacker learns from. */
  checkedPerSecond: number;
  statuses: Record<string, number>;
}

export async function adminGuessScenario(ingest: SpawnedIngest, opts: { seconds: number; concurrency: number }): Promise<AdminResult> {
  const started = Date.now();
  const statuses: Record<string, number> = {};
  let guesses = 0;
  await Promise.all(
    Array.from({ length: opts.concurrency }, async () => {
      while (Date.now() - started < opts.seconds * 1000) {
        guesses++;
        let status: string;
        try {
          const r = await fetch(`${ingest.url}/v1/usage?licenseKey=x`, { headers: { authorization: `Bearer guess-${guesses}-${Math.random()}` } });
          await r.arrayBuffer();
          status = String(r.status);
        } catch {
          status = 'none';
        }
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  const seconds = (Date.now() - started) / 1000;
  return { seconds, guesses, checkedPerSecond: Math.round((statuses['401'] ?? 0) / seconds), statuses };
}
