/**
 * How much a 32 MB JSON merge body (two 12 MB PDFs as `documents[].base64`) costs the API's event loop, the
 * thread every other request waits on (issue 26). The API runs in this process from a compiled tree
 * (`npx tsc -p tsconfig.json` first; no office pool); curl sends the body from a child process, so the
 * client's own work is not on this loop. Printed per request: the longest block of the loop
 * (monitorEventLoopDelay max), the loop's lateness beyond 5 ms summed, its active time
 * (eventLoopUtilization), the GC time on it, and the wall time. With `WINDOWS_FILE=…` the request windows
 * (µs, monotonic) are written out, to read a `--cpu-prof` profile of the same run per request.
 *
 *   node bench/merge-json-loop.mjs [repository root, default: this one] [requests, default 5]
 *
 * Not part of `npm run bench` (bench/run.ts runs the .ts files): a measuring script, run when named.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

const root = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, '..'));
const runs = Number(process.argv[3] ?? 5);

let gcMs = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcMs += e.duration;
}).observe({ entryTypes: ['gc'] });

// The configuration loader moved with the modules (issue 26); either tree can be measured.
const configModule = fs.existsSync(path.join(root, 'dist/src/modules/config.js')) ? 'dist/src/modules/config.js' : 'dist/src/config/index.js';
const { loadConfig } = await import(path.join(root, configModule));
const { buildApi } = await import(path.join(root, 'dist/src/api.js'));
const pino = (await import(path.join(root, 'node_modules/pino/pino.js'))).default;
const pdfLib = await import(path.join(root, 'node_modules/@cantoo/pdf-lib/cjs/index.js'));
const { PDFDocument, StandardFonts } = pdfLib.default ?? pdfLib;

/** A one-page PDF carrying 12 MB of incompressible stream data (a large scan, as far as the merge is concerned). */
async function bigPdf(tag) {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const page = doc.addPage([595, 842]);
  page.drawText(tag, { x: 40, y: 780, size: 14, font });
  const size = 12 * 1024 * 1024;
  page.node.set(doc.context.obj('Scan'), doc.context.register(doc.context.stream(randomBytes(size), { Length: size })));
  return doc.save({ useObjectStreams: false });
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-loop-'));
const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent', ENGINE_WORKERS: '2' });
const api = await buildApi({ config, logger: pino({ level: 'silent' }), withoutOffice: true });
await api.app.listen({ host: '127.0.0.1', port: 0 });
const port = api.app.server.address().port;
const { apiKey } = await api.services.auth.issueKey('loop@example.com');

const file = path.join(dataDir, 'body.json');
{
  // Written to a file and dropped: this process's own heap stays small (the server's loop is what is measured).
  const docs = [await bigPdf('A'), await bigPdf('B')];
  const body = JSON.stringify({ documents: docs.map((d, i) => ({ base64: Buffer.from(d).toString('base64'), fileName: `in${i}.pdf` })) });
  fs.writeFileSync(file, body);
  console.log(`body ${(body.length / 1024 / 1024).toFixed(1)} MB, inputs ${docs.map((d) => (d.length / 1024 / 1024).toFixed(1)).join(' + ')} MB`);
}

function post() {
  return new Promise((resolve, reject) => {
    const args = ['-sS', '-o', '/dev/null', '-w', '%{http_code}', '-H', `authorization: Bearer ${apiKey}`, '-H', 'content-type: application/json'];
    const c = spawn('curl', [...args, '--data-binary', `@${file}`, `http://127.0.0.1:${port}/v1/merge`]);
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    c.on('error', reject);
    c.on('close', () => resolve(out));
  });
}

const results = [];
const windows = [];
for (let i = 0; i <= runs; i++) {
  // The server's main thread collects once it has been idle for 2 s after a burst (admission.ts): outside the window.
  await new Promise((r) => setTimeout(r, 3000));
  const delay = monitorEventLoopDelay({ resolution: 1 });
  // Lateness of a 1 ms timer beyond 5 ms, summed: the time a health probe would have waited in all.
  let blocked = 0;
  let last = performance.now();
  const tick = setInterval(() => {
    const now = performance.now();
    if (now - last - 1 > 5) blocked += now - last - 1;
    last = now;
  }, 1);
  delay.enable();
  const from = process.hrtime.bigint() / 1000n;
  const started = performance.now();
  const elu = performance.eventLoopUtilization();
  const gc0 = gcMs;
  const status = await post();
  const active = performance.eventLoopUtilization(elu).active;
  const wall = performance.now() - started;
  delay.disable();
  clearInterval(tick);
  if (status !== '200') throw new Error(`merge answered ${status}`);
  if (i === 0) continue; // warm-up: the merge engine is loaded on its first job
  windows.push([Number(from), Number(process.hrtime.bigint() / 1000n)]);
  const gc = gcMs - gc0;
  results.push({ max: delay.max / 1e6, blocked, active, gc, wall });
  console.log(
    `request ${i}: loop delay max ${(delay.max / 1e6).toFixed(1)} ms, blocked ${blocked.toFixed(0)} ms, active ${active.toFixed(0)} ms, GC ${gc.toFixed(0)} ms, wall ${wall.toFixed(0)} ms`,
  );
}
const median = (k) => results.map((r) => r[k]).sort((a, b) => a - b)[Math.floor(results.length / 2)];
console.log(
  `median: loop delay max ${median('max').toFixed(1)} ms, blocked ${median('blocked').toFixed(0)} ms, active ${median('active').toFixed(0)} ms, GC ${median('gc').toFixed(0)} ms, wall ${median('wall').toFixed(0)} ms`,
);
if (process.env.WINDOWS_FILE) fs.writeFileSync(process.env.WINDOWS_FILE, JSON.stringify(windows));
await api.close();
fs.rmSync(dataDir, { recursive: true, force: true });
