/**
 * pyHanko's reader files over HTTP, where the engine-level table (pdf-validation.test.ts) leaves a door untested:
 * `no-mediabox.pdf` through `POST /v1/sign` (a page without /MediaBox made sign answer 500, "Expected instance of
 * PDFArray"; pyHanko inherits or defaults the box) — a 200 whose output pdfsig and qpdf accept and /v1/verify
 * calls valid — and the README's signed files through `POST /v1/verify`.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { signViaApi, verifyViaApi } from '../verify/api.js';

const DIR = path.join(import.meta.dirname, '../fixtures/pdf-validation');
const file = (name: string) => new Uint8Array(fs.readFileSync(path.join(DIR, `pyhanko--${name}.pdf`)));

let api: TestApi;
let tmp: string;
beforeAll(async () => {
  api = await startTestApi();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-pdf-validation-'));
}, 120_000);
afterAll(async () => {
  await api?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

/** The output of a command, also when it exits non-zero (pdfsig does for an untrusted signer). */
function run(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();
  } catch (e) {
    const err = e as { stdout?: Buffer; stderr?: Buffer };
    return `${err.stdout?.toString() ?? ''}${err.stderr?.toString() ?? ''}`;
  }
}

describe('no-mediabox.pdf through POST /v1/sign', () => {
  it('answers 200; the signed output is valid for /v1/verify, pdfsig and qpdf --check', async () => {
    const signed = await signViaApi(api, file('no-mediabox'), {
      signer: { name: 'Ada Lovelace', email: 'ada@example.org' },
      auditTrail: [{ type: 'document.signed', timestamp: '2026-11-28T10:00:00Z' }],
    });
    const report = await verifyViaApi(api, signed);
    expect(report.valid, report.reason).toBe(true);
    expect(report.signatures[0].integrity).toEqual({ digestMatches: true, signatureValid: true });
    expect(report.signatures[0].coverage).toBe('ENTIRE_FILE');
    const out = path.join(tmp, 'no-mediabox-signed.pdf');
    fs.writeFileSync(out, signed);
    expect(run('pdfsig', ['-nocert', out])).toMatch(/Signature Validation: Signature is Valid/);
    expect(run('qpdf', ['--check', out])).toMatch(/No syntax or stream encoding errors found/);
  });
});

describe("the README's signed files through POST /v1/verify", () => {
  it.each([
    'extensions-indirect',
    'extensions-update-direct',
    'form-update-no-override-appearance-stream-ap-indirect',
    'pades-with-old-style-signing-cert-attr',
  ])('%s → 200, valid', async (name) => {
    const report = await verifyViaApi(api, file(name));
    expect(report.valid, report.reason).toBe(true);
    expect(report.indication).toBe('INDETERMINATE');
    expect(['NONE', 'SIGNATURES_ONLY']).toContain(report.signatures[0].modificationsAfter.level);
  });
});
