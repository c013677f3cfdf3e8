/**
 * Issue 8 benchmark: DOCX → PDF through the office pool, in one run:
 * - median HTTP latency of POST /v1/convert (1 worker, sequential requests) on a small corpus DOCX and a
 *   generated ~25-page DOCX, against (a) raw in-process LibreOfficeKit on the same files (load + saveAs in a
 *   separate warm process, nothing else) and (b) `soffice --headless --convert-to pdf` spawned per file;
 * - throughput (conversions/s) with 1 and with 2 workers under 4 concurrent clients;
 * - RSS of every worker after 200 conversions.
 * Goals: HTTP ≤ 1.15× raw LOK and ≤ 0.2× spawned soffice; 2 workers ≥ 1.7× 1 worker; no worker above 500 MB.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { strToU8, zipSync } from 'fflate';
import { loadConfig } from '../src/modules/config.js';
import { buildApi, type RunningApi } from '../src/api.js';
import type { ConversionEvent, OfficePool } from '../src/office/index.js';
import { CORPUS_DOCX } from '../test/helpers/corpus.js';

// The external corpus when this machine has it, else the copy the tests read (test/fixtures/corpus).
const CORPUS = fs.existsSync('/work/shared/corpus/docx') ? '/work/shared/corpus/docx' : CORPUS_DOCX;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-bench-office-'));
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const ms = (x: number) => `${x.toFixed(0)} ms`;

/** A report of about 25 pages: 25 sections of a heading, paragraphs and a small table, each on its own page. */
function generatedReport(pages = 25): Uint8Array {
  const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
  const p = (t: string, style = '') =>
    `<w:p>${style ? `<w:pPr><w:pStyle w:val="${style}"/></w:pPr>` : ''}<w:r><w:t xml:space="preserve">${t}</w:t></w:r></w:p>`;
  const sentence = 'The quarterly review covers revenue, costs, hiring and the roadmap for the next period in some detail. ';
  const cell = (t: string) => `<w:tc><w:tcPr><w:tcW w:w="3000" w:type="dxa"/></w:tcPr>${p(t)}</w:tc>`;
  const body = Array.from(
    { length: pages },
    (_, i) =>
      p(`Section ${i + 1}`, 'Heading1') +
      Array.from({ length: 5 }, (_, j) => p(`${sentence.repeat(4)}(${i + 1}.${j + 1})`)).join('') +
      `<w:tbl><w:tblPr><w:tblW w:w="9000" w:type="dxa"/></w:tblPr><w:tblGrid><w:gridCol w:w="3000"/><w:gridCol w:w="3000"/><w:gridCol w:w="3000"/></w:tblGrid>` +
      Array.from({ length: 6 }, (_, r) => `<w:tr>${cell(`Item ${r}`)}${cell(String(r * 17))}${cell('ok')}</w:tr>`).join('') +
      `</w:tbl>` +
      (i < pages - 1 ? '<w:p><w:r><w:br w:type="page"/></w:r></w:p>' : ''),
  ).join('');
  return zipSync({
    '[Content_Types].xml': strToU8(
      '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
    ),
    '_rels/.rels': strToU8(
      '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
    ),
    'word/document.xml': strToU8(`<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="${W}"><w:body>${body}</w:body></w:document>`),
  });
}

const pdfPageCount = (pdf: Uint8Array) => {
  const f = path.join(tmp, 'count.pdf');
  fs.writeFileSync(f, pdf);
  return Number(/Pages:\s+(\d+)/.exec(execFileSync('pdfinfo', [f]).toString())?.[1] ?? 0);
};

// --- raw LOK: a separate warm process converts the file named on each stdin line and answers its time -----
if (process.argv[2] === '--raw-lok') {
  const { LibreOfficeKit } = await import('../src/office/lok.js');
  const { writeProfile, fileUrl } = await import('../src/office/profile.js');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-bench-lok-'));
  const kit = LibreOfficeKit.init('/usr/lib/libreoffice/program', writeProfile(dir));
  const convert = (file: string) => {
    const t = performance.now();
    const doc = kit.load(fileUrl(file), 'Batch=true');
    doc.saveAs(fileUrl(path.join(dir, 'out.pdf')), 'pdf', '');
    doc.destroy();
    return performance.now() - t;
  };
  let buf = '';
  process.stdin.on('data', (d) => {
    buf += d;
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const file = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      process.stdout.write(`${convert(file)}\n`);
    }
  });
  process.stdin.on('end', () => {
    fs.rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  });
  process.stdout.write('ready\n');
  await new Promise(() => undefined);
}

/** The raw LOK process: `time(file)` converts once and resolves with LibreOffice's own load+save time. */
async function startRawLok() {
  const child = spawn(process.execPath, ['--import', 'tsx', import.meta.filename, '--raw-lok'], { stdio: ['pipe', 'pipe', 'ignore'] });
  const waiting: Array<(line: string) => void> = [];
  let buf = '';
  child.stdout.on('data', (d) => {
    buf += d;
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      waiting.shift()?.(line);
    }
  });
  await new Promise<string>((resolve) => waiting.push(resolve)); // 'ready'
  return {
    time: (file: string) =>
      new Promise<number>((resolve) => {
        waiting.push((line) => resolve(Number(line)));
        child.stdin.write(file + '\n');
      }),
    close: () =>
      new Promise<void>((resolve) => {
        child.on('exit', () => resolve());
        child.stdin.end();
      }),
  };
}

const small = { name: 'small: docx4j--sample-docx.docx', bytes: new Uint8Array(fs.readFileSync(`${CORPUS}/docx4j--sample-docx.docx`)) };
const large = { name: 'generated report', bytes: generatedReport(34) };
const inputs = [small, large];
const files = inputs.map((d, i) => {
  const f = path.join(tmp, `input-${i}.docx`);
  fs.writeFileSync(f, d.bytes);
  return f;
});
const RUNS = Number(process.env.BENCH_RUNS ?? 12);

async function startApi(workers: number): Promise<{ api: RunningApi; url: string; apiKey: string; dataDir: string }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-bench-office-data-'));
  const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'warn', OFFICE_WORKERS: String(workers) });
  const api = await buildApi({ config, logger: pino({ level: 'warn' }) });
  await api.app.listen({ host: '127.0.0.1', port: 0 });
  const key = await api.services.auth.issueKey('bench@example.com');
  return { api, url: `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`, apiKey: key.apiKey, dataDir };
}

async function convertOverHttp(target: { url: string; apiKey: string }, bytes: Uint8Array): Promise<Uint8Array> {
  const body = new FormData();
  body.append('file', new Blob([bytes as BlobPart]), 'input.docx');
  const res = await fetch(`${target.url}/v1/convert?from=docx&to=pdf`, {
    method: 'POST',
    body,
    headers: { authorization: `Bearer ${target.apiKey}` },
  });
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  return new Uint8Array(await res.arrayBuffer());
}

async function throughput(target: { url: string; apiKey: string }, bytes: Uint8Array, clients: number, total: number): Promise<number> {
  let next = 0;
  const t = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < total) {
        next++;
        await convertOverHttp(target, bytes);
      }
    }),
  );
  return total / ((performance.now() - t) / 1000);
}

function rssOf(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

console.log(
  `machine: ${os.cpus().length} CPUs, ${(os.totalmem() / 2 ** 30).toFixed(0)} GB, load average ${os.loadavg()[0]!.toFixed(1)}; ${RUNS} timed runs per latency figure (medians)`,
);

// 1. Latency, interleaved so that all three see the same machine load: an HTTP request (1 worker), the
//    same file through raw LOK in its own warm process, and every third round soffice spawned per file.
const hasSoffice = spawnSync('soffice', ['--version']).status === 0;
const profile = `file://${tmp}/soffice-profile`;
const spawnSoffice = (f: string) => {
  const t = performance.now();
  execFileSync('soffice', [`-env:UserInstallation=${profile}`, '--headless', '--convert-to', 'pdf', '--outdir', tmp, f], { stdio: 'ignore' });
  return performance.now() - t;
};
const one = await startApi(1);
const rawLok = await startRawLok();
const http: number[] = [];
const inWorker: number[] = [];
const raw: number[] = [];
let lastWorkerMillis = 0;
(one.api.services.office as OfficePool).on('conversion', (e: ConversionEvent) => (lastWorkerMillis = e.millis));
const soffice: Array<number | undefined> = [];
for (const [i, d] of inputs.entries()) {
  const pdf = await convertOverHttp(one, d.bytes); // warm-up (and page count)
  const pages = pdfPageCount(pdf);
  d.name = `${d.name} (${pages} page${pages > 1 ? 's' : ''})`;
  await rawLok.time(files[i]!);
  await rawLok.time(files[i]!);
  if (hasSoffice) spawnSoffice(files[i]!); // creates the profile once
  const h: number[] = [];
  const w: number[] = [];
  const r: number[] = [];
  const s: number[] = [];
  for (let k = 0; k < RUNS; k++) {
    const t = performance.now();
    await convertOverHttp(one, d.bytes);
    h.push(performance.now() - t);
    w.push(lastWorkerMillis);
    r.push(await rawLok.time(files[i]!));
    if (hasSoffice && k % 3 === 0) s.push(spawnSoffice(files[i]!));
  }
  http.push(median(h));
  inWorker.push(median(w));
  raw.push(median(r));
  soffice.push(s.length ? median(s) : undefined);
}
await rawLok.close();

// 2. 1-worker throughput, 4 clients.
const tputRuns = Number(process.env.BENCH_TPUT ?? 24);
await throughput(one, small.bytes, 4, 4);
const tput1 = [await throughput(one, small.bytes, 4, tputRuns), await throughput(one, large.bytes, 4, Math.ceil(tputRuns / 3))];
await one.api.close();
fs.rmSync(one.dataDir, { recursive: true, force: true });

// 4. Two workers: throughput under 4 clients, then RSS after 200 conversions.
const two = await startApi(2);
await throughput(two, small.bytes, 4, 4);
const tput2 = [await throughput(two, small.bytes, 4, tputRuns), await throughput(two, large.bytes, 4, Math.ceil(tputRuns / 3))];
const pool = two.api.services.office as OfficePool;
const corpusFiles = fs.readdirSync(CORPUS).filter((f) => f.endsWith('.docx') && !/bug53475|truncated|clusterfuzz|bug65649/.test(f));
let done = 0;
let peak = 0;
const conversionsBefore = pool.status().conversions;
let cursor = 0;
await Promise.all(
  Array.from({ length: 4 }, async () => {
    while (cursor < 200) {
      const f = corpusFiles[cursor++ % corpusFiles.length]!;
      await convertOverHttp(two, new Uint8Array(fs.readFileSync(`${CORPUS}/${f}`))).catch(() => undefined);
      done++;
      for (const pid of pool.workerPids()) peak = Math.max(peak, rssOf(pid));
    }
  }),
);
const after = pool.workerPids().map(rssOf);
const st = pool.status();
await two.api.close();
fs.rmSync(two.dataDir, { recursive: true, force: true });

console.log('\nlatency (median)                              HTTP /v1/convert   raw LOK    soffice/file   HTTP÷LOK  HTTP÷soffice');
for (const [i, d] of inputs.entries()) {
  const r = raw[i]!;
  const s = soffice[i];
  console.log(
    `${d.name.padEnd(46)}${ms(http[i]!).padStart(16)}${ms(r).padStart(11)}${(s === undefined ? 'n/a' : ms(s)).padStart(15)}` +
      `${(http[i]! / r).toFixed(2).padStart(10)}${(s === undefined ? 'n/a' : (http[i]! / s).toFixed(2)).padStart(14)}`,
  );
}
console.log('goals: HTTP ≤ 1.15× raw LOK, ≤ 0.20× soffice per file');
console.log(
  `LOK time inside the pool's worker for the same HTTP requests (median): ${inputs.map((d, i) => `${ms(inWorker[i]!)} (HTTP÷worker ${(http[i]! / inWorker[i]!).toFixed(2)})`).join(', ')}`,
);
console.log('\nthroughput, 4 concurrent clients              1 worker        2 workers     ratio (goal ≥ 1.7)');
for (const [i, d] of inputs.entries()) {
  console.log(
    `${d.name.padEnd(46)}${`${tput1[i]!.toFixed(2)}/s`.padStart(9)}${`${tput2[i]!.toFixed(2)}/s`.padStart(17)}${(tput2[i]! / tput1[i]!).toFixed(2).padStart(12)}`,
  );
}
console.log(
  `\nRSS after ${done} corpus conversions on 2 workers (${st.conversions - conversionsBefore} counted by the pool, ${st.restarts} restarts): ` +
    `${after.map((b) => `${(b / 2 ** 20).toFixed(0)} MB`).join(', ')}; peak ${(peak / 2 ** 20).toFixed(0)} MB (goal: none above 500 MB)`,
);
fs.rmSync(tmp, { recursive: true, force: true });
process.exit(0);
