/**
 * Every PDF of the signature-attack corpus (real signed, certified, manipulated and damaged files from
 * iText, RUB-NDS and pyHanko) goes through /v1/sign: the new signature must be valid and cover the whole
 * file, each signature pdfsig found valid before must still be valid after, and qpdf must not find the
 * output more damaged than the input.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { pdfsig, pdfsigBlocks, postSign, qpdfCheck, signBody, tmpDir, writeTemp } from './helpers.js';

const CORPUS = path.join(import.meta.dirname, '../fixtures/pdf-attacks');
const files = fs.existsSync(CORPUS)
  ? fs
      .readdirSync(CORPUS)
      .filter((d) => fs.statSync(path.join(CORPUS, d)).isDirectory())
      .flatMap((d) =>
        fs
          .readdirSync(path.join(CORPUS, d))
          .filter((f) => f.endsWith('.pdf'))
          .map((f) => path.join(d, f)),
      )
  : [];

/** Field name → validation line, per signature. */
function verdicts(output: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const block of pdfsigBlocks(output)) {
    const name = /Signature Field Name: (.*)/.exec(block)?.[1]?.trim() ?? '?';
    out.set(name, /Signature Validation: (.*)/.exec(block)?.[1]?.trim() ?? '');
  }
  return out;
}

describe.skipIf(files.length === 0)('signing the attack corpus', () => {
  let t: TestApi;
  let work: string;
  beforeAll(async () => {
    t = await startTestApi();
    work = tmpDir('folio-sign-corpus-');
  });
  afterAll(async () => {
    await t?.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it.each(files)('%s', async (rel) => {
    const input = path.join(CORPUS, rel);
    const before = verdicts(pdfsig(input));
    const res = await postSign(t, signBody(new Uint8Array(fs.readFileSync(input))));
    expect(res.status).toBe(200);
    const file = writeTemp(work, rel.replace(/\//g, '_'), res.pdf!);
    const after = verdicts(pdfsig(file));
    const ours = [...after.keys()].filter((k) => k.startsWith('Folio-Signature-'));
    expect(ours).toHaveLength(1);
    expect(after.get(ours[0]!)).toBe('Signature is Valid.');
    expect(pdfsigBlocks(pdfsig(file)).find((b) => b.includes(ours[0]!))).toContain('Total document signed');
    for (const [field, verdict] of before) {
      if (verdict === 'Signature is Valid.') expect(after.get(field), `${field} after Folio signed`).toBe('Signature is Valid.');
    }
    if (qpdfCheck(input).status === 0) expect(qpdfCheck(file).status).toBe(0);
  });
});
