/**
 * Before/after measurement of native work under a request's budget (issue 23), against any built checkout:
 *
 *   node --import tsx test/amplification/native-measure.ts [checkout, default this one]
 *
 * Starts `<checkout>/dist/src/main.js api` (ENGINE_TIMEOUT_MS=5000, REQUEST_TIMEOUT_MS=20000, two office
 * workers) and prints, as one JSON line per case: a 200 × 8800 pt page at width 4000 (one, then three at
 * once: status, seconds, peak RSS of the process tree), six runs of slow pages (pages=1,3,5,7,9,11), and a
 * filter-heavy SVG in annotate (status, seconds, CPU the process tree still burns 1–4 s after the answer,
 * and whether SIGTERM stops the server within 10 s). A measurement, not a test: it asserts nothing.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, ROOT, treeCpu, treeRss } from '../adversarial/server.js';
import { annotateSvgBody, heavySvg, slowPdf, tallPdf } from './native-inputs.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const checkout = path.resolve(process.argv[2] ?? ROOT);

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-native-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [path.join(checkout, 'dist/src/main.js'), 'api'], {
    cwd: checkout,
    detached: true,
    stdio: 'ignore',
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      METRICS_PORT: String(await freePort()),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      OFFICE_WORKERS: '2',
      ENGINE_WORKERS: '2',
      ENGINE_TIMEOUT_MS: '5000',
      REQUEST_TIMEOUT_MS: '20000',
    },
  });
  const pid = child.pid!;
  let exited = false;
  child.on('exit', () => (exited = true));
  process.once('exit', () => {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  });
  for (let i = 0; ; i++) {
    const r = await fetch(`${url}/v1/health`).catch(() => undefined);
    if (r?.status === 200 && ((await r.json()) as { status: string }).status === 'healthy') break;
    if (i > 600) throw new Error('the server did not become healthy');
    await sleep(200);
  }
  // A key through the public flow: register, the code from the outbox, verify.
  const email = `measure-${Date.now()}@example.com`;
  await fetch(`${url}/v1/auth/register?email=${encodeURIComponent(email)}`);
  let code: string | undefined;
  for (let i = 0; !code && i < 100; i++) {
    const outbox = path.join(dataDir, 'outbox');
    for (const f of fs.existsSync(outbox) ? fs.readdirSync(outbox) : []) {
      code = /verification code is (\d{6})/.exec(fs.readFileSync(path.join(outbox, f), 'utf8').replace(/=\r?\n/g, ''))?.[1];
    }
    if (!code) await sleep(100);
  }
  const ver = await fetch(`${url}/v1/auth/verify?email=${encodeURIComponent(email)}&code=${code}`);
  const key = ((await ver.json()) as { apiKey: string }).apiKey;
  const auth = { authorization: `Bearer ${key}` };

  const preview = (pdf: Buffer, query: string) => {
    const fd = new FormData();
    fd.append('file', new Blob([new Uint8Array(pdf)]), 'in.pdf');
    return fetch(`${url}/v1/convert?${query}`, { method: 'POST', headers: auth, body: fd, signal: AbortSignal.timeout(300_000) }).then(
      async (r) => ({ status: r.status, bytes: (await r.arrayBuffer()).byteLength }),
      (e: Error) => ({ status: 0, bytes: 0, error: e.message }),
    );
  };
  /** Runs `n` requests at once while sampling the tree's RSS every 100 ms. */
  async function measured<T>(label: string, run: () => Promise<T>[]): Promise<void> {
    let peak = treeRss(pid);
    const timer = setInterval(() => (peak = Math.max(peak, treeRss(pid))), 100);
    const t0 = performance.now();
    const answers = await Promise.all(run());
    clearInterval(timer);
    console.log(
      JSON.stringify({ case: label, seconds: +((performance.now() - t0) / 1000).toFixed(1), peakTreeRssMb: Math.round(peak / 2 ** 20), answers }),
    );
  }

  await measured('tall page 200×8800 pt at width 4000', () => [preview(tallPdf(), 'to=png&width=4000')]);
  await measured('three tall pages at once', () => [1, 2, 3].map(() => preview(tallPdf(), 'to=png&width=4000')));
  await measured('pages=1,3,5,7,9,11 of slow pages (REQUEST_TIMEOUT_MS=20000)', () => [preview(slowPdf(12, 1500), 'to=png&pages=1,3,5,7,9,11')]);

  // The SVG last: before the change it leaves native threads burning.
  const t0 = performance.now();
  const r = await fetch(`${url}/v1/annotate`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: annotateSvgBody(heavySvg()),
    signal: AbortSignal.timeout(300_000),
  }).then(
    async (res) => ({ status: res.status, body: (await res.text()).slice(0, 200) }),
    (e: Error) => ({ status: 0, body: e.message }),
  );
  const seconds = +((performance.now() - t0) / 1000).toFixed(1);
  await sleep(1000);
  const c1 = treeCpu(pid);
  await sleep(3000);
  const c2 = treeCpu(pid);
  const t1 = performance.now();
  process.kill(pid, 'SIGTERM');
  while (!exited && performance.now() - t1 < 10_000) await sleep(100);
  const stoppedIn = exited ? +((performance.now() - t1) / 1000).toFixed(1) : 'not within 10 s';
  console.log(
    JSON.stringify({
      case: 'filter-heavy SVG in annotate (ENGINE_TIMEOUT_MS=5000)',
      seconds,
      answer: r,
      cpuSecondsBurnedFrom1To4sAfter: +(c2 - c1).toFixed(2),
      sigtermStoppedServerIn: stoppedIn,
    }),
  );
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    /* gone */
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
}

await main();
