/**
 * Issue 16 benchmark: what each PAdES level costs in POST /v1/sign — median latency of B-B, B-T, B-LT and
 * B-LTA for a 1-page and a 100-page PDF (audit page on), with the server's CPU time per request. B-T adds
 * one RFC 3161 round trip, B-LT an OCSP response, a CRL and the DSS update (made in-process by Folio's CA),
 * B-LTA a second TSA round trip and the document-timestamp update. The TSA is the test suite's
 * (test/sign/tsa-server.ts, ECDSA P-256), in the server's child process, so its own cost is counted too.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { contractPdf as makePdf } from './support.js';

const root = path.resolve(import.meta.dirname, '..');
const LEVELS = ['B-B', 'B-T', 'B-LT', 'B-LTA'] as const;

async function server(): Promise<void> {
  const pino = (await import('pino')).default;
  const { loadConfig } = await import('../src/modules/config.js');
  const { buildApi } = await import('../src/api.js');
  const { startTestTsa } = await import('../test/sign/tsa-server.js');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-bench-levels-'));
  const tsa = await startTestTsa(dataDir);
  const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent', TSA_URL: tsa.url });
  const api = await buildApi({ config, logger: pino({ level: 'silent' }), withoutOffice: true });
  await api.app.listen({ host: '127.0.0.1', port: 0 });
  const issued = await api.services.auth.issueKey('bench@example.com');
  process.stderr.write(`${JSON.stringify({ port: (api.app.server.address() as AddressInfo).port, apiKey: issued.apiKey })}\n`);
  process.on('SIGTERM', () => {
    void Promise.all([api.close(), tsa.close()]).finally(() => {
      fs.rmSync(dataDir, { recursive: true, force: true });
      process.exit(0);
    });
  });
}

function body(pdf: Uint8Array, level: string): string {
  return JSON.stringify({
    document: { base64: Buffer.from(pdf).toString('base64') },
    signer: { name: 'Ada Lovelace', email: 'ada@example.com' },
    auditTrail: [{ type: 'document.signed', timestamp: '2026-11-20T09:16:30Z' }],
    level,
  });
}

function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function client(): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'bench/sign-levels.ts'), '--server'], {
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
  const runs = Number(process.env.BENCH_RUNS ?? 15);
  console.log(
    `POST /v1/sign per PAdES level, generated identity, audit page on, local test TSA; ${os.cpus().length} CPUs, load ${os.loadavg()[0]!.toFixed(2)}`,
  );
  for (const pages of [1, 100]) {
    const pdf = await makePdf(pages);
    for (const level of LEVELS) {
      const payload = body(pdf, level);
      for (let i = 0; i < 2; i++) await fetch(url, { method: 'POST', headers, body: payload }).then((r) => r.arrayBuffer());
      const times: number[] = [];
      let size = 0;
      const cpuBefore = cpuSeconds(child.pid!);
      for (let i = 0; i < runs; i++) {
        const t0 = performance.now();
        const res = await fetch(url, { method: 'POST', headers, body: payload });
        const json = (await res.json()) as { document?: { base64: string } };
        if (res.status !== 200) throw new Error(`${level}: HTTP ${res.status}`);
        times.push(performance.now() - t0);
        size = Buffer.from(json.document!.base64, 'base64').length - pdf.length;
      }
      const cpu = ((cpuSeconds(child.pid!) - cpuBefore) / runs) * 1000;
      console.log(
        `${`${pages}-page ${level}`.padEnd(16)} median ${median(times).toFixed(1).padStart(6)} ms   server CPU ${cpu.toFixed(1).padStart(5)} ms/request   ` +
          `bytes added ${String(size).padStart(7)}   (${runs} requests)`,
      );
    }
  }
  child.kill('SIGTERM');
}

if (process.argv.includes('--server')) await server();
else await client();
