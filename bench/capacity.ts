/**
 * Capacity model (issue 14, docs/operations.md): `npm run bench -- capacity` (≈ 2–3 minutes).
 *
 * API: the compiled build as a child process with one LibreOffice worker and one engine thread, one API key.
 * For each engine (docx→pdf, md→docx, html→docx, annotate, sign, verify) it sends CAPACITY_CLIENTS (2)
 * concurrent request loops for CAPACITY_SECONDS (10) after two warm-up requests, checks every answer, and
 * reads the CPU time the server and its LibreOffice workers used from /proc. Documents per CPU-second is
 * the "per core" figure: it holds on a shared machine, where wall-clock throughput depends on the neighbours
 * (both are printed, with the load average). Memory: the RSS of the main process (main thread + engine
 * thread) and of each LibreOffice worker, idle after warm-up and at its peak during the docx→pdf run
 * (sampled every 100 ms).
 *
 * Ingest: the compiled ingest on a fresh PostgreSQL database (127.0.0.1:5432; skipped when absent), one
 * event per request as the client sends it, autocannon with 50 connections for CAPACITY_INGEST_SECONDS (10).
 * Events per CPU-second of the PostgreSQL backends serving that database (pg_stat_activity's pids, read from
 * /proc) = events/s per PostgreSQL core, without the WAL writer and checkpointer (shared with every other
 * database on the server; their whole-server delta is printed beside it), the WAL the server wrote meanwhile
 * (an upper bound per event: other databases write too), then the stored bytes per event (tables and indexes)
 * for the arithmetic of the column-store threshold.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import pg from 'pg';
import { AUDIT, SIGNER, validCases, validTemplate, type Answer, type RequestSpec } from '../test/adversarial/generators.js';
import { FolioProcess, MB, descendants, freePort, median, serverEntry } from '../test/adversarial/server.js';
import { CORPUS_DOCX } from '../test/helpers/corpus.js';
import { createTestDatabase, postgresAvailable } from '../test/helpers/postgres.js';

const SECONDS = Number(process.env.CAPACITY_SECONDS ?? 10);
const CLIENTS = Number(process.env.CAPACITY_CLIENTS ?? 2);
const INGEST_SECONDS = Number(process.env.CAPACITY_INGEST_SECONDS ?? 10);
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
// The external corpus when this machine has it, else the copy the tests read (test/fixtures/corpus).
const CORPUS = fs.existsSync('/work/shared/corpus/docx') ? '/work/shared/corpus/docx' : CORPUS_DOCX;

const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

/** utime + stime of one process (all its threads), in seconds; 0 when it is gone. */
function cpuSeconds(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  } catch {
    return 0;
  }
}

/** CPU seconds per live process of the tree (the server and its LibreOffice workers). */
function treeCpu(pid: number): Map<number, number> {
  const m = new Map<number, number>([[pid, cpuSeconds(pid)]]);
  for (const d of descendants(pid)) m.set(d.pid, cpuSeconds(d.pid));
  return m;
}
/** CPU used between two snapshots; a process that appeared counts from 0, one that vanished is lost (rare). */
function cpuDelta(before: Map<number, number>, after: Map<number, number>): number {
  let s = 0;
  for (const [pid, t] of after) s += t - (before.get(pid) ?? 0);
  return s;
}

/** A report-like Markdown document of about `bytes` bytes: headings, paragraphs with inline marks, lists, a table, code. */
function reportMarkdown(bytes: number): string {
  const parts = ['# Quarterly operations report\n\nPrepared by the *operations* team; figures are **provisional** until audit.\n\n'];
  for (let i = 1; parts.join('').length < bytes; i++) {
    parts.push(
      `## Region ${i}\n\nRevenue grew by **${i}.4 %** over the quarter, see [the dashboard](https://example.com/r/${i}). ` +
        'Costs stayed within the *approved* budget, with `ops-tooling` as the one exception.\n\n' +
        `- Customers: ${1000 + i * 17}\n- Churn: ${(i % 5) + 1}.2 %\n  - of which involuntary: 0.${i % 9} %\n\n` +
        `| Month | Orders | Returns |\n|---|---:|---:|\n| Jan | ${i * 120} | ${i * 3} |\n| Feb | ${i * 131} | ${i * 4} |\n| Mar | ${i * 118} | ${i * 2} |\n\n` +
        `1. Close the ${i} open incidents\n2. Review the on-call rota\n\n> Quote of the quarter, region ${i}.\n\n`,
    );
  }
  return parts.join('');
}

const docxPath = [path.join(CORPUS, 'docx4j--sample-docx.docx'), path.join(CORPUS, 'mammoth--simple-list.docx')].find((p) => fs.existsSync(p));
const docxForPdf = docxPath ? fs.readFileSync(docxPath) : Buffer.from(validTemplate());

console.log(`capacity: ${SECONDS} s per engine, ${CLIENTS} clients, OFFICE_WORKERS=1 ENGINE_WORKERS=1`);
console.log(`host: ${os.availableParallelism()} CPUs (${os.cpus()[0]?.model ?? '?'}), load average ${load()}, ${new Date().toISOString()}`);
console.log(`server: ${serverEntry().label}; docx→pdf input: ${docxPath ? path.basename(docxPath) : 'generated template'}`);

const srv = await FolioProcess.start({
  OFFICE_WORKERS: '1',
  ENGINE_WORKERS: '1',
  OFFICE_TIMEOUT_MS: '120000',
  ENGINE_TIMEOUT_MS: '120000',
  OFFICE_MEMORY_MB: '1536',
  ENGINE_MEMORY_MB: '1024',
  ENGINE_QUEUE_SIZE: '64',
});

interface Row {
  engine: string;
  input: string;
  ok: number;
  bad: number;
  wall: number;
  cpu: number;
  p50: number;
}
const rows: Row[] = [];
let officeIdle: number[] = [];
let officePeak = 0;
let mainIdle = 0;
let mainPeak = 0;

try {
  const apiKey = await srv.newKey();
  await sleep(2000);
  mainIdle = srv.rss() ?? 0;
  officeIdle = descendants(srv.pid).map((d) => d.rss);

  const signCase = validCases(
    () => docxForPdf,
    () => new Uint8Array(),
  ).find((v) => v.endpoint === 'sign')!;
  const signed = await srv.send(signCase.build(), apiKey, 120_000);
  if (signed.status !== 200) throw new Error(`could not sign the verify input: ${signed.status} ${signed.body.toString().slice(0, 300)}`);
  const signedPdf = Buffer.from((JSON.parse(signed.body.toString()) as { document: { base64: string } }).document.base64, 'base64');
  const cases = validCases(
    () => docxForPdf,
    () => signedPdf,
  );
  const byName = (n: string) => cases.find((v) => v.endpoint === n)!;
  // A 5-page PDF (the docx→pdf output of the corpus file), signed once for verify: realistic sizes beside the
  // generators' small documents.
  const pdf5 = await srv.send(byName('convert docx→pdf').build(), apiKey, 120_000);
  if (pdf5.status !== 200) throw new Error(`docx→pdf for the sign input: ${pdf5.status}`);
  const signJson = (pdf: Uint8Array) =>
    JSON.stringify({ document: { base64: Buffer.from(pdf).toString('base64') }, signer: SIGNER, auditTrail: AUDIT });
  const signed5 = await srv.send({ method: 'POST', path: '/v1/sign', json: signJson(pdf5.body) }, apiKey, 120_000);
  if (signed5.status !== 200) throw new Error(`sign of the 5-page PDF: ${signed5.status}`);
  const signed5Pdf = Buffer.from((JSON.parse(signed5.body.toString()) as { document: { base64: string } }).document.base64, 'base64');
  const report = Buffer.from(reportMarkdown(11 * 1024));
  const jobs: Array<{ name: string; spec: RequestSpec; ok: (a: Answer) => string | undefined }> = [
    { name: 'convert docx→pdf', spec: byName('convert docx→pdf').build(), ok: byName('convert docx→pdf').ok },
    { name: 'convert md→docx', spec: byName('convert md→docx').build(), ok: byName('convert md→docx').ok },
    {
      name: 'convert md→docx',
      spec: { method: 'POST', path: '/v1/convert?from=md&to=docx', file: { name: 'report.md', bytes: report } },
      ok: byName('convert md→docx').ok,
    },
    { name: 'convert html→docx', spec: byName('convert html→docx').build(), ok: byName('convert html→docx').ok },
    { name: 'annotate', spec: byName('annotate').build(), ok: byName('annotate').ok },
    { name: 'sign', spec: byName('sign').build(), ok: byName('sign').ok },
    { name: 'sign', spec: { method: 'POST', path: '/v1/sign', json: signJson(pdf5.body) }, ok: byName('sign').ok },
    { name: 'verify', spec: byName('verify').build(), ok: byName('verify').ok },
    {
      name: 'verify',
      spec: { method: 'POST', path: '/v1/verify', json: JSON.stringify({ document: { base64: signed5Pdf.toString('base64') } }) },
      ok: byName('verify').ok,
    },
  ];

  for (const { name, spec, ok: valid } of jobs) {
    const size = spec.file ? spec.file.bytes.length : Buffer.byteLength(spec.json ?? '');
    const label = `${name} (${(size / 1024).toFixed(1)} KB)`;
    const check = (a: Answer) => (a.status === 200 ? valid(a) : `status ${a.status}: ${a.body.toString().slice(0, 200)}`);
    for (let i = 0; i < 2; i++) {
      const w = await srv.send(spec, apiKey, 120_000);
      const problem = check(w);
      if (problem) throw new Error(`${label} warm-up: ${problem}`);
    }
    let ok = 0;
    let bad = 0;
    const times: number[] = [];
    let sampling = name === 'convert docx→pdf';
    const sampler = (async () => {
      while (sampling) {
        for (const d of descendants(srv.pid)) officePeak = Math.max(officePeak, d.rss);
        mainPeak = Math.max(mainPeak, srv.rss() ?? 0);
        await sleep(100);
      }
    })();
    if (!sampling) mainPeak = Math.max(mainPeak, srv.rss() ?? 0);
    const before = treeCpu(srv.pid);
    const t0 = performance.now();
    const end = Date.now() + SECONDS * 1000;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (Date.now() < end) {
          const a = await srv.send(spec, apiKey, 120_000);
          if (check(a) === undefined) {
            ok++;
            times.push(a.ms);
          } else bad++;
        }
      }),
    );
    const wall = (performance.now() - t0) / 1000;
    const cpu = cpuDelta(before, treeCpu(srv.pid));
    sampling = false;
    await sampler;
    mainPeak = Math.max(mainPeak, srv.rss() ?? 0);
    rows.push({
      engine: name.replace(/^convert /, ''),
      input: `${(size / 1024).toFixed(1)} KB${spec.json ? ' JSON' : ''}`,
      ok,
      bad,
      wall,
      cpu,
      p50: median(times),
    });
    console.log(
      `${label.padEnd(30)} ${String(ok).padStart(4)} ok ${String(bad).padStart(2)} bad in ${wall.toFixed(1)} s, CPU ${cpu.toFixed(1)} s → ` +
        `${(ok / cpu).toFixed(1)} docs per CPU-second, ${(ok / wall).toFixed(1)}/s wall, p50 ${median(times).toFixed(0)} ms (load ${load()})`,
    );
  }
} finally {
  await srv.stop(10_000);
}

console.log('\nAPI, one LibreOffice worker + one engine thread (docs per CPU-second = docs/s per core):');
console.log('| engine | input | docs per CPU-second | docs/s wall (this box) | p50 ms | CPU ms per doc |');
console.log('|---|---|---|---|---|---|');
for (const r of rows) {
  console.log(
    `| ${r.engine} | ${r.input} | ${(r.ok / r.cpu).toFixed(1)} | ${(r.ok / r.wall).toFixed(1)} | ${r.p50.toFixed(0)} | ${((r.cpu / r.ok) * 1000).toFixed(0)} |`,
  );
}
console.log(
  `memory: main process (main thread + 1 engine thread) idle ${(mainIdle / MB).toFixed(0)} MB, peak ${(mainPeak / MB).toFixed(0)} MB; ` +
    `LibreOffice worker idle ${officeIdle.map((r) => (r / MB).toFixed(0)).join(', ')} MB, peak during docx→pdf ${(officePeak / MB).toFixed(0)} MB`,
);

// ---- Ingest on PostgreSQL ------------------------------------------------------------------------------
async function ingest(): Promise<void> {
  if (!(await postgresAvailable())) {
    console.log('\ningest: skipped (no PostgreSQL at 127.0.0.1:5432)');
    return;
  }
  const db = await createTestDatabase('folio_capacity');
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-capacity-'));
  const child = spawn(process.execPath, [...serverEntry().args, 'ingest'], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      INGEST_PORT: String(port),
      DATA_DIR: dataDir,
      TELEMETRY_DATABASE_URL: db.url,
      LOG_LEVEL: 'warn',
      // One address, one key, every document new: the billing-integrity limits would refuse most of the load.
      INGEST_ADDRESS_REQUESTS_PER_MINUTE: '0',
      INGEST_KEY_REQUESTS_PER_MINUTE: '0',
      INGEST_NEW_DOCUMENTS_PER_HOUR: '0',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const client = new pg.Client({ connectionString: db.url });
  try {
    const url = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      const r = await fetch(`${url}/v1/collect`).catch(() => undefined);
      if (r) break;
      if (i > 200) throw new Error('the ingest did not start');
      await sleep(100);
    }
    await client.connect();
    const dbName = new URL(db.url).pathname.slice(1);
    let seq = 0;
    const body = () =>
      JSON.stringify({
        libraryVersion: '0.9.0',
        browserInfo: {
          userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36',
          currentUrl: 'https://app.example.com/editor/contracts',
          hostname: 'app.example.com',
          screenSize: { width: 1920, height: 1080 },
        },
        events: [{ timestamp: new Date().toISOString(), documentId: `doc-${process.pid}-${seq++}`, documentCreatedAt: '2024-01-15T10:30:00Z' }],
      });
    const opts = {
      url: `${url}/v1/collect`,
      method: 'POST' as const,
      connections: 50,
      headers: { 'content-type': 'application/json', 'x-license-key': 'capacity_license' },
      requests: [{ setupRequest: (req: autocannon.Request) => ({ ...req, body: body() }) }],
    };
    await autocannon({ ...opts, duration: 2 });
    const backends = async () =>
      (await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [dbName])).rows.map(
        (r) => r.pid,
      );
    const pids = await backends();
    const allPg = () =>
      fs
        .readdirSync('/proc')
        .filter((p) => /^\d+$/.test(p))
        .map(Number)
        .filter((p) => {
          try {
            return fs.readFileSync(`/proc/${p}/comm`, 'utf8').startsWith('postgres');
          } catch {
            return false;
          }
        });
    const snap = (list: number[]) => new Map(list.map((p) => [p, cpuSeconds(p)]));
    const bBackends = snap(pids);
    const bAll = snap(allPg());
    const bIngest = cpuSeconds(child.pid!);
    const lsn = async () => (await client.query<{ l: string }>('SELECT pg_current_wal_lsn()::text AS l')).rows[0]!.l;
    const lsn0 = await lsn();
    const r = await autocannon({ ...opts, duration: INGEST_SECONDS });
    const backendCpu = cpuDelta(bBackends, snap(pids));
    const allCpu = cpuDelta(bAll, snap(allPg()));
    const ingestCpu = cpuSeconds(child.pid!) - bIngest;
    const wal = Number(
      (await client.query<{ d: string }>('SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::bigint AS d', [await lsn(), lsn0])).rows[0]!.d,
    );
    const accepted = r['2xx'];
    const late = (await backends()).filter((p) => !pids.includes(p)).length;
    console.log(
      `\ningest → PostgreSQL, 50 connections, ${INGEST_SECONDS} s: ${accepted} events accepted, ${(accepted / INGEST_SECONDS).toFixed(0)}/s wall, ` +
        `p50 ${r.latency.p50} ms p99 ${r.latency.p99} ms, non-2xx ${r.non2xx}, errors ${r.errors} (load ${load()})`,
    );
    console.log(
      `  PostgreSQL backends of this database (${pids.length}${late ? `, +${late} opened during the run, not counted` : ''}): ` +
        `${backendCpu.toFixed(1)} CPU-s → ${(accepted / backendCpu).toFixed(0)} events per PostgreSQL CPU-second`,
    );
    console.log(
      `  every postgres process on the server (incl. WAL writer, checkpointer and other people's databases): ${allCpu.toFixed(1)} CPU-s → ` +
        `≥ ${(accepted / allCpu).toFixed(0)} events per CPU-second`,
    );
    console.log(`  WAL written by the whole server meanwhile: ${(wal / MB).toFixed(1)} MB → ≤ ${(wal / accepted).toFixed(0)} B per event`);
    console.log(`  ingest process: ${ingestCpu.toFixed(1)} CPU-s → ${(accepted / ingestCpu).toFixed(0)} events per ingest CPU-second`);
    const sizes = await client.query<{ relname: string; table: string; indexes: string }>(
      `SELECT c.relname, pg_table_size(c.oid) AS table, pg_indexes_size(c.oid) AS indexes
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind = 'r' AND n.nspname = 'public' AND c.relname LIKE 'telemetry%' ORDER BY c.relname`,
    );
    const counted = await client.query<{ n: string }>('SELECT count(*) AS n FROM telemetry_events');
    const events = Number(counted.rows[0]!.n);
    let table = 0;
    let indexes = 0;
    for (const s of sizes.rows) {
      table += Number(s.table);
      indexes += Number(s.indexes);
      console.log(`  ${s.relname.padEnd(22)} table ${(Number(s.table) / MB).toFixed(1)} MB, indexes ${(Number(s.indexes) / MB).toFixed(1)} MB`);
    }
    console.log(
      `  stored: ${events} events; ${(table / events).toFixed(0)} B of tables + ${(indexes / events).toFixed(0)} B of indexes per event ` +
        `(one request row, one event row, one document row each, as the client sends them)`,
    );
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await client.end().catch(() => undefined);
    await db.drop().catch(() => undefined);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
await ingest();
console.log(`\nload average at the end: ${load()}`);
