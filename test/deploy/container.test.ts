/**
 * The image itself, where one was built here (`scripts/container-build.sh` → folio:local; skipped otherwise,
 * with the reason). It runs the container the way the Kubernetes manifests do: non-root, read-only root
 * filesystem with tmpfs for /tmp and $HOME, /dev/shm for LibreOffice, a CPU quota of 1 on this 2-CPU host,
 * the signing key and its password as mounted secret files. Then: /v1/health 200 and healthy with ONE
 * LibreOffice worker and ONE engine thread (sized from the quota, not the host), the image's HEALTHCHECK
 * passes, an API key through the outbox, md→docx and docx→pdf (LibreOffice inside the image), the mounted
 * signing key in use, the ingest mode of the same image, and `podman stop` (SIGTERM through tini) during a
 * conversion: the conversion still answers 200 and the container exits 0.
 *
 * Podman flags of this sandbox (runc, ulimits) come from scripts/container-env.sh, sourced. The image build is
 * not part of `npm test` (about 15 minutes): scripts/container-build.sh makes it once per machine.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../adversarial/server.js';
import { convert, makeSigningKey, newKey, ROOT, SAMPLE_MARKDOWN, waitHealthy } from './support.js';

const IMAGE = process.env.FOLIO_IMAGE ?? 'folio:local';
const HOW =
  'apt-get install -y podman runc debootstrap iptables; scripts/container-build.sh (docs/operations.md, "Building the image without a registry")';

/** podman's flags from scripts/container-env.sh (runtime, ulimits capped at the host's), the one place for them. */
function podmanFlags(): { global: string[]; limits: string[] } {
  const out = execFileSync('bash', ['-c', 'source scripts/container-env.sh; printf "%s\\n" "${PODMAN_GLOBAL[@]}" -- "${PODMAN_LIMITS[@]}"'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  const lines = out.trim().split('\n');
  const sep = lines.indexOf('--');
  return { global: lines.slice(0, sep), limits: lines.slice(sep + 1) };
}
const { global: GLOBAL, limits: LIMITS } = podmanFlags();

function imageExists(): string | undefined {
  const r = spawnSync('podman', [...GLOBAL, 'image', 'exists', IMAGE], { encoding: 'utf8', timeout: 60_000 });
  if (r.error) return `podman is not installed or did not answer (${r.error.message}); to run this test: ${HOW}`;
  if (r.status === 0) return undefined;
  // 1: no such image; anything else: podman itself failed (storage, permissions: a user without root sees
  // their own rootless storage, not root's images).
  if (r.status === 1) return `no image ${IMAGE} in podman's storage (${process.getuid?.() === 0 ? 'root' : 'rootless'}); build it: ${HOW}`;
  return `podman image exists ${IMAGE} failed (exit ${r.status}): ${r.stderr.trim().slice(0, 300)}`;
}
const skipReason = imageExists();
if (skipReason) console.log(`test/deploy/container: skipped: ${skipReason}`);

const podman = (args: string[], timeout = 120_000) => execFileSync('podman', [...GLOBAL, ...args], { encoding: 'utf8', timeout }).trim();

describe.skipIf(skipReason !== undefined)(`the ${IMAGE} container`, () => {
  const name = `folio-test-${randomBytes(4).toString('hex')}`;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-container-'));
  const dataDir = path.join(tmp, 'data');
  let url = '';
  let apiKey = '';
  const logs = () => spawnSync('podman', [...GLOBAL, 'logs', '--tail', '60', name], { encoding: 'utf8' }).stderr?.slice(-4000) ?? '';
  const running = () =>
    spawnSync('podman', [...GLOBAL, 'container', 'inspect', '-f', '{{.State.Running}}', name], { encoding: 'utf8' }).stdout.trim() === 'true';

  beforeAll(async () => {
    const secrets = path.join(tmp, 'secrets');
    makeSigningKey(secrets);
    fs.mkdirSync(dataDir);
    fs.chownSync(dataDir, 10001, 10001);
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    podman([
      'run',
      '-d',
      '--name',
      name,
      ...LIMITS,
      '--cpus',
      '1',
      '--memory',
      '3g',
      '--read-only',
      '--tmpfs',
      '/tmp:rw,mode=1777',
      // A writable $HOME owned by the image's user, as the Kubernetes emptyDir with fsGroup gives it.
      '--mount',
      'type=tmpfs,destination=/home/folio,chown=true',
      '--shm-size',
      '512m',
      '-p',
      `127.0.0.1:${port}:8080`,
      '-v',
      `${dataDir}:/var/lib/folio`,
      '-v',
      `${secrets}:/etc/folio/signing:ro`,
      '-e',
      'SIGNING_P12=/etc/folio/signing/signing.p12',
      '-e',
      'SIGNING_P12_PASSWORD_FILE=/etc/folio/signing/signing.p12.password',
      '-e',
      'LOG_LEVEL=info',
      IMAGE,
      'api',
    ]);
    await waitHealthy(url, 240_000, running, logs);
  }, 300_000);

  afterAll(() => {
    spawnSync('podman', [...GLOBAL, 'rm', '-f', '-t', '0', name], { encoding: 'utf8' });
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('runs as uid 10001 and sizes both pools from the CPU quota (1), not the host', async () => {
    expect(podman(['exec', name, 'id', '-u'])).toBe('10001');
    const health = (await (await fetch(`${url}/v1/health`)).json()) as { status: string; engines: Record<string, { workers?: number }> };
    expect(health.status).toBe('healthy');
    expect(health.engines.office?.workers).toBe(1);
    for (const [engine, s] of Object.entries(health.engines)) if (s.workers !== undefined) expect(s.workers, engine).toBe(1);
    expect(os.availableParallelism()).toBeGreaterThan(1); // the host has more: the 1 came from the quota
  });

  it("the image's HEALTHCHECK passes", () => {
    const r = spawnSync('podman', [...GLOBAL, 'healthcheck', 'run', name], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
  }, 90_000);

  it('md→docx, then that DOCX → PDF through LibreOffice in the image, signed with the mounted key', async () => {
    apiKey = await newKey(url, path.join(dataDir, 'outbox'));
    const docx = await convert(url, apiKey, 'from=md&to=docx', 'report.md', Buffer.from(SAMPLE_MARKDOWN));
    expect(docx.status).toBe(200);
    expect(docx.body.subarray(0, 2).toString()).toBe('PK');
    const pdf = await convert(url, apiKey, 'from=docx&to=pdf', 'report.docx', docx.body, 180_000);
    expect(pdf.status, pdf.body.toString().slice(0, 300)).toBe(200);
    expect(pdf.body.subarray(0, 5).toString()).toBe('%PDF-');
    const key = await fetch(`${url}/v1/verify/key`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(((await key.json()) as { subject: string }).subject).toContain('Folio deploy test signer');
  }, 240_000);

  it('the same image runs the ingest; its health check (healthcheck.mjs ingest) passes', async () => {
    const ingest = `${name}-ingest`;
    try {
      podman([
        'run',
        '-d',
        '--name',
        ingest,
        ...LIMITS,
        '--read-only',
        '--tmpfs',
        '/tmp:rw,mode=1777',
        // DATA_DIR (SQLite without PostgreSQL) stays the image's volume, writable under --read-only.
        IMAGE,
        'ingest',
      ]);
      let status: number | null = 1;
      for (let i = 0; i < 60 && status !== 0; i++) {
        status = spawnSync('podman', [...GLOBAL, 'exec', ingest, 'node', '/app/deploy/healthcheck.mjs', 'ingest'], { timeout: 30_000 }).status;
        if (status !== 0) await new Promise((r) => setTimeout(r, 1000));
      }
      expect(status).toBe(0);
    } finally {
      spawnSync('podman', [...GLOBAL, 'rm', '-f', '-t', '0', ingest]);
    }
  }, 120_000);

  it('podman stop during a conversion: SIGTERM through tini, the conversion still answers 200, exit code 0', async () => {
    // A long Markdown document to PDF (LibreOffice takes seconds on it), stopped while it is in flight.
    const md = Array.from({ length: 800 }, (_, i) => `## Section ${i}\n\n${'Folio drains on SIGTERM. '.repeat(40)}\n\n- a\n- b\n`).join('\n');
    let answeredAt = 0;
    const inFlight = convert(url, apiKey, 'from=md&to=pdf', 'long.md', Buffer.from(md), 150_000).then((a) => {
      answeredAt = Date.now();
      return a;
    });
    await new Promise((r) => setTimeout(r, 1000));
    const stopAt = Date.now();
    const stopped = new Promise<string>((resolve, reject) =>
      execFile('podman', [...GLOBAL, 'stop', '-t', '90', name], { timeout: 120_000 }, (e, out) => (e ? reject(e) : resolve(out))),
    );
    const answer = await inFlight;
    await stopped;
    expect(answer.status, answer.body.toString().slice(0, 300)).toBe(200);
    expect(answer.body.subarray(0, 5).toString()).toBe('%PDF-');
    expect(answeredAt, 'the conversion was still in flight when SIGTERM was sent').toBeGreaterThan(stopAt + 500);
    expect(podman(['container', 'inspect', '-f', '{{.State.ExitCode}}', name])).toBe('0');
    expect(logs() + spawnSync('podman', [...GLOBAL, 'logs', name], { encoding: 'utf8' }).stdout).toMatch(/draining in-flight requests/);
  }, 180_000);
});
