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
import { loadConfig } from '../src/config/index.js';
import { buildApi, type RunningApi } from '../src/api.js';
import type { OfficePool } from '../src/office/index.js';

const CORPUS = '/work/shared/corpus/docx';
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-bench-office-'));
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const ms = (x: number) => `${x.toFixed(0)} ms`;

/** A report of about 25 pages: 25 sections of a heading, paragraphs and a small table, each on its own page. */
function generatedReport(pages = 25): Uint8Array {
  const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
  const p = (t: string, style = '') => `<w:p>${style ? `<w:pPr><w:pStyle w:val="${style}"/></w:pPr>` : ''}<w:r><w:t xml:space="preserve">${t}</w:t></w:r></w:p>`;
  const sentence = 'The quarterly review covers revenue, costs, hiring and the roadmap for the next period in some detail. ';
  const cell = (t: string) => `<w:tc><w:tcPr><w:tcW w:w="3000" w:type="dxa"/></w:tcPr>${p(t)}</w:tc>`;
  const body = Array.from({ length: pages }, (_, i) =>
    p(`Section ${i + 1}`, 'Heading1') +
    Array.from({ length: 5 }, (_, j) => p(`${sentence.repeat(4)}(${i + 1}.${j + 1})`)).join('') +
    `<w:tbl><w:tblPr><w:tblW w:w="9000" w:type="dxa"/></w:tblPr><w:tblGrid><w:gridCol w:w="3000"/><w:gridCol w:w="3000"/><w:gridCol w:w="3000"/></w:tblGrid>` +
    Array.from({ length: 6 }, (_, r) => `<w:tr>${cell(`Item ${r}`)}${cell(String(r * 17))}${cell('ok')}</w:tr>`).join('') +
    `</w:tbl>` + (i < pages - 1 ? '<w:p><w:r><w:br w:type="page"/></w:r></w:p>' : ''),
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

// --- raw LOK: a separate process runs load + saveAs on the files, warm, and prints medians ---------------
if (process.argv[2] === '--raw-lok') {
  const { LibreOfficeKit } = await import('../src/office/lok.js');
  const { writeProfile, fileUrl } = await import('../src/office/profile.js');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-bench-lok-'));
  const kit = LibreOfficeKit.init('/usr/lib/libreoffice/program', writeProfile(dir));
  const runs = Number(process.argv[3]);
  const out: Record<string, number> = {};
  for (const file of process.argv.slice(4)) {
    const times: number[] = [];
    for (let i = 0; i < runs + 2; i++) {
      const t = performance.now();
      const doc = kit.load(fileUrl(file), 'Batch=true');
      doc.saveAs(fileUrl(path.join(dir, 'out.pdf')), 'pdf', '');
      doc.destroy();
      if (i >= 2) times.push(performance.now() - t); // two warm-up runs
    }
    out[file] = median(times);
  }
  fs.rmSync(dir, { recursive: true, force: true });
  process.stdout.write(JSON.stringify(out) + '\n');
  process.exit(0);
}

const small = { name: 'small (docx4j--sample-docx.docx)', bytes: new Uint8Array(fs.readFileSync(`${CORPUS}/docx4j--sample-docx.docx`)) };
const large = { name: 'generated report', bytes: generatedReport() };
const inputs = [small, large];
const files = inputs.map((d, i) => {
  const f = path.join(tmp, `input-${i}.docx`);
  fs.writeFileSync(f, d.bytes);
  return f;
});
const RUNS = Number(process.env.BENCH_RUNS ?? 15);

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
  const res = await fetch(`${target.url}/v1/convert?from=docx&to=pdf`, { method: 'POST', body, headers: { authorization: `Bearer ${target.apiKey}` } });
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

console.log(`machine: ${os.cpus().length} CPUs, ${(os.totalmem() / 2 ** 30).toFixed(0)} GB; ${RUNS} timed runs per figure (medians)`);

// 1. HTTP latency, 1 worker, sequential.
const one = await startApi(1);
const http: number[] = [];
for (const [i, d] of inputs.entries()) {
  const pdf = await convertOverHttp(one, d.bytes); // warm-up (and page count)
  if (i === 1) large.name = `generated report (${pdfPageCount(pdf)} pages)`;
  if (i === 0) small.name = `${small.name.slice(0, -1)}, ${pdfPageCount(pdf)} page${pdfPageCount(pdf) > 1 ? 's' : ''})`;
  const times: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const t = performance.now();
    await convertOverHttp(one, d.bytes);
    times.push(performance.now() - t);
  }
  http.push(median(times));
}
// 1-worker throughput, 4 clients.
const tputRuns = Number(process.env.BENCH_TPUT ?? 24);
await throughput(one, small.bytes, 4, 4);
const tput1 = [await throughput(one, small.bytes, 4, tputRuns), await throughput(one, large.bytes, 4, Math.ceil(tputRuns / 3))];
await one.api.close();
fs.rmSync(one.dataDir, { recursive: true, force: true });

// 2. Raw LOK in its own warm process (the pool is closed: nothing else competes for the CPU).
const raw = await new Promise<Record<string, number>>((resolve, reject) => {
  const child = spawn(process.execPath, ['--import', 'tsx', import.meta.filename, '--raw-lok', String(RUNS), ...files], { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!)) : reject(new Error(`raw LOK run exited ${code}`))));
});

// 3. soffice spawned per file (profile created once beforehand, as a warm disk cache would have it).
const hasSoffice = spawnSync('soffice', ['--version']).status === 0;
const soffice: Array<number | undefined> = [];
const sofficeRuns = Math.max(3, Math.ceil(RUNS / 3));
const profile = `file://${tmp}/soffice-profile`;
for (const f of files) {
  if (!hasSoffice) {
    soffice.push(undefined);
    continue;
  }
  const times: number[] = [];
  for (let r = 0; r < sofficeRuns + 1; r++) {
    const t = performance.now();
    execFileSync('soffice', [`-env:UserInstallation=${profile}`, '--headless', '--convert-to', 'pdf', '--outdir', tmp, f], { stdio: 'ignore' });
    if (r > 0) times.push(performance.now() - t);
  }
  soffice.push(median(times));
}

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

console.log('\nlatency (median)                        HTTP /v1/convert   raw LOK    soffice/file   HTTP÷LOK  HTTP÷soffice');
for (const [i, d] of inputs.entries()) {
  const r = raw[files[i]!]!;
  const s = soffice[i];
  console.log(
    `${d.name.padEnd(40)}${ms(http[i]!).padStart(16)}${ms(r).padStart(11)}${(s === undefined ? 'n/a' : ms(s)).padStart(15)}` +
      `${(http[i]! / r).toFixed(2).padStart(10)}${(s === undefined ? 'n/a' : (http[i]! / s).toFixed(2)).padStart(14)}`,
  );
}
console.log('goals: HTTP ≤ 1.15× raw LOK, ≤ 0.20× soffice per file');
console.log(`\nthroughput, 4 concurrent clients        1 worker        2 workers     ratio (goal ≥ 1.7)`);
for (const [i, d] of inputs.entries()) {
  console.log(`${d.name.padEnd(40)}${`${tput1[i]!.toFixed(2)}/s`.padStart(9)}${`${tput2[i]!.toFixed(2)}/s`.padStart(17)}${(tput2[i]! / tput1[i]!).toFixed(2).padStart(12)}`);
}
console.log(
  `\nRSS after ${done} corpus conversions on 2 workers (${st.conversions - conversionsBefore} counted by the pool, ${st.restarts} restarts): ` +
    `${after.map((b) => `${(b / 2 ** 20).toFixed(0)} MB`).join(', ')}; peak ${(peak / 2 ** 20).toFixed(0)} MB (goal: none above 500 MB)`,
);
fs.rmSync(tmp, { recursive: true, force: true });
process.exit(0);
