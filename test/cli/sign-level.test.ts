/**
 * `folio sign --level` (PAdES B-B/B-T/B-LT/B-LTA) in both modes, with an RFC 3161 TSA running in this test
 * process (test/sign/tsa-server.ts): local mode signs at B-LT with TSA_URL from the environment and Folio's
 * own verify (`folio verify --json`) reports level B-LT; remote mode sends the level to a real API started as
 * a child process; a level above B-B without TSA_URL is a one-line VALIDATION_ERROR, exit 2, no output file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FolioProcess } from '../adversarial/server.js';
import { qpdfCheck } from '../sign/helpers.js';
import { startTestTsa, type TestTsa } from '../sign/tsa-server.js';
import { isPdf, runCli, tempDir, WORD_PDF } from './helpers.js';

interface VerifyJson {
  valid: boolean;
  indication: string;
  reason: string;
  signatures: Array<{ type?: string; level?: string | null; indication: string; revocation?: { status?: string } }>;
}

let dir: string;
let tsa: TestTsa;
let anchors: string;
let pdf: string;

beforeAll(async () => {
  dir = tempDir('sign-level');
  tsa = await startTestTsa(dir);
  // The TSA's root is trusted as a TRUST_ANCHORS entry, as an operator would configure a real TSA's.
  anchors = path.join(dir, 'anchors.pem');
  fs.writeFileSync(anchors, tsa.rootPem);
  pdf = path.join(dir, 'contract.pdf');
  fs.copyFileSync(
    path.join(
      WORD_PDF,
      fs.readdirSync(WORD_PDF).find((f) => f.endsWith('.pdf'))!,
    ),
    pdf,
  );
}, 60_000);

afterAll(async () => {
  await tsa?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('folio sign --level (local)', () => {
  it('signs at B-LT with TSA_URL; folio verify exits 0 and reports level B-LT with good revocation data', async () => {
    const env = { DATA_DIR: path.join(dir, 'data'), TSA_URL: tsa.url, TRUST_ANCHORS: anchors };
    const signed = path.join(dir, 'contract.b-lt.pdf');
    const before = tsa.requests;
    const s = await runCli(['sign', pdf, '--name', 'Ada Lovelace', '--email', 'ada@example.com', '--level', 'B-LT', '-o', signed], { env });
    expect(s.code, s.stderr).toBe(0);
    expect(isPdf(signed)).toBe(true);
    expect(tsa.requests).toBeGreaterThan(before);
    expect(fs.readFileSync(signed).includes('/DSS')).toBe(true);
    const check = qpdfCheck(signed);
    expect(check.status, check.output).toBe(0);

    const v = await runCli(['verify', signed, '--json'], { env });
    expect(v.code, v.stdout + v.stderr).toBe(0);
    const report = JSON.parse(v.stdout) as VerifyJson;
    expect(report.indication, report.reason).toBe('TOTAL_PASSED');
    expect(report.signatures).toHaveLength(1);
    expect(report.signatures[0]).toMatchObject({ level: 'B-LT', indication: 'TOTAL_PASSED', revocation: { status: 'GOOD' } });
  }, 150_000);

  it('without --level keeps the default: B-B when TSA_URL is not set', async () => {
    const env = { DATA_DIR: path.join(dir, 'data'), TSA_URL: undefined, TRUST_ANCHORS: anchors };
    const signed = path.join(dir, 'contract.default.pdf');
    const s = await runCli(['sign', pdf, '--name', 'Ada Lovelace', '--email', 'ada@example.com', '-o', signed], { env });
    expect(s.code, s.stderr).toBe(0);
    const v = await runCli(['verify', signed, '--json'], { env });
    expect(v.code, v.stdout + v.stderr).toBe(0);
    expect((JSON.parse(v.stdout) as VerifyJson).signatures[0]!.level).toBe('B-B');
  }, 150_000);

  it('B-T without TSA_URL: one-line VALIDATION_ERROR naming TSA_URL and the level, exit 2, nothing written', async () => {
    const env = { DATA_DIR: path.join(dir, 'data'), TSA_URL: undefined };
    const out = path.join(dir, 'never.pdf');
    const r = await runCli(['sign', pdf, '--name', 'Ada Lovelace', '--email', 'ada@example.com', '--level', 'B-T', '-o', out], { env });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr.trim()).toMatch(
      /^folio: VALIDATION_ERROR: PAdES B-T needs a timestamp authority and TSA_URL is not set.* \(level: B-T needs TSA_URL\)$/,
    );
    expect(fs.existsSync(out)).toBe(false);
  }, 150_000);

  it('an unknown level is a usage error listing the choices (exit 2)', async () => {
    const r = await runCli(['sign', pdf, '--name', 'Ada Lovelace', '--email', 'ada@example.com', '--level', 'B-X'], { env: { TSA_URL: tsa.url } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/B-B, B-T, B-LT, B-LTA/);
  });

  it('--help shows the option and an example', async () => {
    const r = await runCli(['sign', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('--level <level>');
    expect(r.stdout).toMatch(/folio sign .*--level B-LTA/);
  });
});

describe('folio --server sign --level (remote)', () => {
  let server: FolioProcess | undefined;
  let key: string;

  beforeAll(async () => {
    server = await FolioProcess.start(
      { TSA_URL: tsa.url, TRUST_ANCHORS: anchors, OFFICE_WORKERS: '1', ENGINE_WORKERS: '1', OFFICE_MEMORY_MB: '1024' },
      150_000,
    );
    key = await server.newKey();
  }, 300_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('passes the level to the API: B-LTA (the server default would be B-T), verified through the API', async () => {
    const remote = (args: string[]) => runCli(['--server', server!.url, ...args], { env: { FOLIO_API_KEY: key } });
    const signed = path.join(dir, 'contract.b-lta.pdf');
    const before = tsa.requests;
    const s = await remote(['sign', pdf, '--name', 'Grace Hopper', '--email', 'grace@example.com', '--level', 'B-LTA', '-o', signed]);
    expect(s.code, s.stderr).toBe(0);
    // The signature timestamp and the document timestamp (B-LTA).
    expect(tsa.requests - before).toBeGreaterThanOrEqual(2);

    const v = await remote(['verify', signed, '--json']);
    expect(v.code, v.stdout + v.stderr).toBe(0);
    const report = JSON.parse(v.stdout) as VerifyJson;
    expect(report.indication, report.reason).toBe('TOTAL_PASSED');
    expect(report.signatures[0]).toMatchObject({ level: 'B-LTA', indication: 'TOTAL_PASSED' });
    // The document timestamp over the DSS is reported as a second entry.
    expect(report.signatures).toHaveLength(2);
  }, 150_000);
});
