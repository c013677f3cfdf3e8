/**
 * Measurement (not a test): how many processes a burst of abandoned heavy-SVG annotate requests leaves under
 * the compiled server. Each request is aborted by the client as soon as its SVG child is running (so the job
 * is really on a thread and the thread is terminated), then the server's process tree is read from /proc.
 *
 *   npx tsx test/native/abandon-measure.ts [count=20]
 *
 * Prints one JSON line: zombies and live processes under the server besides its LibreOffice workers, 1 s and
 * 4 s after the burst.
 */
import fs from 'node:fs';
import { FolioProcess, serverEnv } from '../adversarial/server.js';
import { annotateSvgBody, heavySvg } from '../amplification/native-inputs.js';
import { besidesOffice, svgChildren } from './tree.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const count = Number(process.argv[2] ?? 20);

const srv = await FolioProcess.start({ ...serverEnv({ engineTimeoutMs: 30_000, officeTimeoutMs: 60_000 }), REQUEST_TIMEOUT_MS: '60000' });
try {
  const key = await srv.newKey();
  const body = annotateSvgBody(heavySvg());
  const seen = new Set<number>();
  let started = 0;
  for (let i = 0; i < count; i++) {
    const ac = new AbortController();
    const answer = fetch(`${srv.url}/v1/annotate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body,
      signal: ac.signal,
    }).catch(() => undefined);
    // Hang up once this request's child runs (at most 20 s: a replaced thread may still be loading).
    for (let t = 0; t < 400; t++) {
      const fresh = svgChildren(srv.pid).filter((p) => !seen.has(p));
      if (fresh.length > 0) {
        fresh.forEach((p) => seen.add(p));
        started++;
        break;
      }
      await sleep(50);
    }
    ac.abort();
    await answer;
  }
  const snapshot = () => {
    const tree = besidesOffice(srv.pid);
    return { zombies: tree.filter((d) => d.state === 'Z').length, live: tree.filter((d) => d.state !== 'Z').map((d) => `${d.pid}:${d.name}`) };
  };
  await sleep(1_000);
  const after1s = snapshot();
  await sleep(3_000);
  const after4s = snapshot();
  const ok = await srv.send(
    {
      method: 'POST',
      path: '/v1/annotate',
      json: annotateSvgBody('<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><circle cx="10" cy="10" r="8"/></svg>'),
    },
    key,
    60_000,
  );
  console.log(
    JSON.stringify({
      entry: srv.entry,
      abandoned: count,
      childrenSeen: started,
      after1s,
      after4s,
      honestSvgStatus: ok.status,
      pidsMax: readPidsMax(),
    }),
  );
} finally {
  await srv.stop();
}

function readPidsMax(): string | undefined {
  try {
    return fs.readFileSync('/sys/fs/cgroup/pids.max', 'utf8').trim();
  } catch {
    return undefined;
  }
}
