/**
 * Idle RSS of the API process (issue 13, "API memory"): the compiled build as the adversarial suite runs it
 * (test/adversarial/server.ts serverEntry), one LibreOffice worker, `ENGINE_WORKERS` 1 and 2; RSS from
 * /proc/PID/status 4 s after /v1/health answers and the process's CPU time has stopped growing (engine
 * threads loaded and warmed up). The difference between the two is what one idle engine thread costs.
 * `node --import tsx bench/api-memory.ts [main.js ...]` measures other builds (e.g. a baseline worktree's
 * dist/src/main.js) beside the current one. Figures are printed, never asserted.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, rssOf, serverEntry } from '../test/adversarial/server.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function cpuMs(pid: number): number {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

async function idleRss(args: string[], workers: number): Promise<{ rss: number; cpu: number }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-bench-memory-'));
  const port = await freePort();
  const child = spawn(process.execPath, [...args, 'api'], {
    detached: true, // its own process group, so its LibreOffice worker dies with it
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      METRICS_PORT: String(await freePort()),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      OFFICE_WORKERS: '1',
      ENGINE_WORKERS: String(workers),
      ENGINE_MEMORY_MB: '512',
    },
    stdio: 'ignore',
  });
  try {
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (Date.now() > deadline) throw new Error('the API did not answer /v1/health in 120 s');
      const r = await fetch(`http://127.0.0.1:${port}/v1/health`).catch(() => undefined);
      if (r?.status === 200) break;
      await sleep(250);
    }
    let prev = cpuMs(child.pid!);
    for (let i = 0; i < 60; i++) {
      await sleep(500);
      const c = cpuMs(child.pid!);
      if (c - prev <= 10) break;
      prev = c;
    }
    await sleep(4000);
    return { rss: rssOf(child.pid!) ?? NaN, cpu: cpuMs(child.pid!) };
  } finally {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      /* gone */
    }
    await sleep(200);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const builds: Array<{ label: string; args: string[] }> = [
  ...process.argv.slice(2).map((m) => ({ label: m, args: [m] })),
  { label: `current (${serverEntry().label})`, args: serverEntry().args },
];
console.log(
  `host: ${os.availableParallelism()} CPUs, load average ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
const MB = 1024 * 1024;
for (const b of builds) {
  const one = await idleRss(b.args, 1);
  const two = await idleRss(b.args, 2);
  console.log(
    `${b.label}: idle RSS ${(one.rss / MB).toFixed(0)} MB with ENGINE_WORKERS=1, ${(two.rss / MB).toFixed(0)} MB with 2 ` +
      `(one engine thread ≈ ${((two.rss - one.rss) / MB).toFixed(0)} MB); CPU until idle ${one.cpu} / ${two.cpu} ms`,
  );
}
