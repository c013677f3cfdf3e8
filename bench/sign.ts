/**
 * Issue 5 benchmark: median latency of POST /v1/sign for a 1-page and a 100-page PDF (audit page
 * included), and requests/s with 8 concurrent clients. Goals on this machine: 1-page ≤ 60 ms, 100-page
 * ≤ 250 ms, CPU-bound rather than I/O-bound. The server's CPU time per request is printed next to the
 * latency: when it accounts for the latency (CPU/wall near 1.0 on an idle machine) the request spends its
 * time computing, not waiting; on a loaded machine the gap is time spent waiting for a core.
 *
 * Issue 28: the same with the key in a SoftHSM2 token (PKCS#11, the key host thread), when SoftHSM2 is
 * installed: `BENCH_SIGN_KEYS=file,token` (default both). Before the HTTP figures, the signer alone: one
 * signature at a time and 16 at once, the file key in-thread against the token through the key host's channel.
 *
 * The API runs in a child process (this file with `--server`) so the load generator does not share its
 * event loop.
 */
import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import { contractPdf as makePdf } from './support.js';

const root = path.resolve(import.meta.dirname, '..');

const SOFTHSM = '/usr/lib/softhsm/libsofthsm2.so';
type KeyKind = 'file' | 'token';

/**
 * A SoftHSM2 token in `dir` with an ECDSA P-256 key (imported, its file removed) and a self-signed certificate:
 * the settings that sign with it. SOFTHSM2_CONF is set in this process, where the key host initialises SoftHSM2.
 */
function softhsmToken(dir: string): Record<string, string> {
  const run = (cmd: string, args: string[]) =>
    execFileSync(cmd, args, { cwd: dir, stdio: 'ignore', env: { ...process.env, SOFTHSM2_CONF: path.join(dir, 'softhsm2.conf') } });
  fs.mkdirSync(path.join(dir, 'tokens'));
  fs.writeFileSync(
    path.join(dir, 'softhsm2.conf'),
    `directories.tokendir = ${path.join(dir, 'tokens')}\nobjectstore.backend = file\nlog.level = ERROR\n`,
  );
  process.env.SOFTHSM2_CONF = path.join(dir, 'softhsm2.conf');
  run('softhsm2-util', ['--init-token', '--free', '--label', 'bench', '--so-pin', '5678', '--pin', '1234']);
  run('openssl', ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', 'key.pem']);
  run('openssl', [
    'req',
    '-x509',
    '-key',
    'key.pem',
    '-subj',
    '/CN=Folio bench HSM signer',
    '-days',
    '2',
    '-addext',
    'keyUsage=critical,digitalSignature,nonRepudiation',
    '-out',
    'cert.pem',
  ]);
  run('openssl', ['pkcs8', '-topk8', '-nocrypt', '-in', 'key.pem', '-out', 'key.p8']);
  run('softhsm2-util', ['--import', 'key.p8', '--token', 'bench', '--label', 'signer', '--id', '01', '--pin', '1234']);
  fs.rmSync(path.join(dir, 'key.pem'));
  fs.rmSync(path.join(dir, 'key.p8'));
  fs.writeFileSync(path.join(dir, 'pin'), '1234');
  return {
    SIGNING_PKCS11_MODULE: SOFTHSM,
    SIGNING_PKCS11_URI: `pkcs11:token=bench;object=signer;type=private?pin-source=file:${path.join(dir, 'pin')}`,
    SIGNING_CERT_CHAIN: path.join(dir, 'cert.pem'),
  };
}

async function server(kind: KeyKind): Promise<void> {
  const pino = (await import('pino')).default;
  const { loadConfig } = await import('../src/modules/config.js');
  const { buildApi } = await import('../src/api.js');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-bench-sign-'));
  const hsmDir = kind === 'token' ? fs.mkdtempSync(path.join(os.tmpdir(), 'folio-bench-hsm-')) : undefined;
  const keyEnv = hsmDir ? softhsmToken(hsmDir) : {};
  const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...keyEnv });
  const api = await buildApi({ config, logger: pino({ level: 'silent' }), withoutOffice: true });
  await api.app.listen({ host: '127.0.0.1', port: 0 });
  const issued = await api.services.auth.issueKey('bench@example.com');
  process.stderr.write(`${JSON.stringify({ port: (api.app.server.address() as AddressInfo).port, apiKey: issued.apiKey })}\n`);
  process.on('SIGTERM', () => {
    void api.close().finally(() => {
      fs.rmSync(dataDir, { recursive: true, force: true });
      if (hsmDir) fs.rmSync(hsmDir, { recursive: true, force: true });
      process.exit(0);
    });
  });
}

function body(pdf: Uint8Array): string {
  return JSON.stringify({
    document: { base64: Buffer.from(pdf).toString('base64') },
    signer: { name: 'Ada Lovelace', email: 'ada@example.com', ip: '203.0.113.7', userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0' },
    auditTrail: [
      { type: 'document.sent', timestamp: '2026-11-20T09:00:00Z', data: { to: 'ada@example.com' } },
      { type: 'document.viewed', timestamp: '2026-11-20T09:15:00Z', data: { ip: '203.0.113.7' } },
      { type: 'document.signed', timestamp: '2026-11-20T09:16:30Z' },
    ],
    eventId: 'bench-1',
  });
}

/** utime + stime of a process in seconds, from /proc. */
function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // clock ticks (USER_HZ = 100)
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** The signer alone: the file key signing in this thread, against the token through the key host thread's channel. */
async function signerOnly(): Promise<void> {
  const pino = (await import('pino')).default;
  const { loadConfig } = await import('../src/modules/config.js');
  const { loadSigningIdentity } = await import('../src/sign/index.js');
  const logger = pino({ level: 'silent' });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-bench-signer-'));
  const hsmDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-bench-hsm-'));
  const file = await loadSigningIdentity(loadConfig({ DATA_DIR: dataDir }), logger);
  const token = await loadSigningIdentity(loadConfig({ DATA_DIR: dataDir, ENGINE_WORKERS: '16', ...softhsmToken(hsmDir) }), logger);
  const data = crypto.randomBytes(200); // the size of the DER signed attributes
  const tbs = { digest: crypto.createHash('sha256').update(data).digest(), data };
  console.log(`the signer alone, ECDSA P-256 (${os.cpus().length} CPUs, load ${os.loadavg()[0]!.toFixed(2)}):`);
  for (const [label, identity] of [
    ['file key (in-thread)', file],
    ['SoftHSM2 (key host)', token],
  ] as const) {
    for (let i = 0; i < 50; i++) await identity.signer.sign(tbs); // warm-up
    const times: number[] = [];
    for (let i = 0; i < 400; i++) {
      const t0 = performance.now();
      await identity.signer.sign(tbs);
      times.push(performance.now() - t0);
    }
    const t0 = performance.now();
    const n = 1600;
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next++ < n) await identity.signer.sign(tbs);
      }),
    );
    const perSecond = n / ((performance.now() - t0) / 1000);
    console.log(
      `  ${label.padEnd(22)} one at a time: median ${(median(times) * 1000).toFixed(0).padStart(5)} µs   16 at once: ${perSecond.toFixed(0).padStart(6)} signatures/s`,
    );
  }
  await token.keyHost?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(hsmDir, { recursive: true, force: true });
}

async function client(kind: KeyKind): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'bench/sign.ts'), '--server', kind], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const info = await new Promise<{ port: number; apiKey: string }>((resolve, reject) => {
    let buf = '';
    child.stderr.on('data', (d) => {
      buf += d;
      const line = buf.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line));
    });
    child.on('exit', (c) => reject(new Error(`bench server exited ${c}: ${buf}`)));
  });
  const url = `http://127.0.0.1:${info.port}/v1/sign`;
  const headers = { authorization: `Bearer ${info.apiKey}`, 'content-type': 'application/json' };

  async function sequential(title: string, payload: string, runs: number): Promise<void> {
    for (let i = 0; i < 3; i++) await fetch(url, { method: 'POST', headers, body: payload }).then((r) => r.arrayBuffer()); // warm-up
    const times: number[] = [];
    const cpuBefore = cpuSeconds(child.pid!);
    const wallBefore = performance.now();
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      const res = await fetch(url, { method: 'POST', headers, body: payload });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`${title}: HTTP ${res.status}`);
      times.push(performance.now() - t0);
    }
    const wall = (performance.now() - wallBefore) / 1000;
    const cpu = cpuSeconds(child.pid!) - cpuBefore;
    console.log(
      `${title.padEnd(30)} median ${median(times).toFixed(1).padStart(6)} ms   min ${Math.min(...times)
        .toFixed(1)
        .padStart(6)} ms   ` +
        `server CPU ${((cpu / runs) * 1000).toFixed(1).padStart(5)} ms/request   CPU/wall ${(cpu / wall).toFixed(2)}   (${runs} requests)`,
    );
  }

  const one = body(await makePdf(1));
  const hundred = body(await makePdf(100));
  const key = kind === 'token' ? 'key in a SoftHSM2 token (PKCS#11)' : 'generated identity (file key)';
  console.log(`POST /v1/sign, ECDSA P-256 ${key}, audit page on, no TSA; ${os.cpus().length} CPUs, load ${os.loadavg()[0]!.toFixed(2)}`);
  await sequential('1-page PDF (goal ≤ 60 ms)', one, Number(process.env.BENCH_RUNS ?? 40));
  await sequential('100-page PDF (goal ≤ 250 ms)', hundred, Number(process.env.BENCH_RUNS_LARGE ?? 15));

  const seconds = Number(process.env.BENCH_SECONDS ?? 8);
  const r = await autocannon({ url, method: 'POST', headers, body: one, connections: 8, duration: seconds });
  console.log(
    `1-page PDF, 8 concurrent clients  ${r.requests.average.toFixed(1).padStart(6)} req/s   p50 ${r.latency.p50} ms   p99 ${r.latency.p99} ms   ` +
      `non-2xx/errors ${r.non2xx + r.errors}   (${seconds} s)`,
  );
  child.kill('SIGTERM');
}

const serverAt = process.argv.indexOf('--server');
if (serverAt >= 0) await server(process.argv[serverAt + 1] === 'token' ? 'token' : 'file');
else {
  const kinds = (process.env.BENCH_SIGN_KEYS ?? 'file,token').split(',').filter((k): k is KeyKind => k === 'file' || k === 'token');
  const withToken = kinds.includes('token') && fs.existsSync(SOFTHSM);
  if (kinds.includes('token') && !withToken) console.log(`SoftHSM2 is not installed (${SOFTHSM}): the token variant is skipped`);
  if (withToken) await signerOnly();
  for (const kind of kinds) if (kind === 'file' || withToken) await client(kind);
}
