/**
 * The `comments` option of DOCX → PDF outside the HTTP route: `folio convert --comments` in local mode (the
 * office engine in the CLI process) and remote mode (through @folio/client), and `FolioClient.convert`'s
 * `comments`, against the real API with its LibreOffice pool (in this process). pandoc's comments.docx
 * (a real Word file with comments, a multi-paragraph comment and replies) is the input; poppler's
 * pdftotext and pdfinfo, which nobody here wrote, read the results.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FolioClient, FolioValidationError } from '../../packages/client/src/index.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { CORPUS, isPdf, runCli, tempDir } from './helpers.js';

/** Text of the document body and of one of its comments (word/comments.xml). */
const BODY = 'I want some text to have a comment on it.';
const COMMENT = 'I left a comment.';

let dir: string;
let docx: string;
let t: TestApi;
let client: FolioClient;

beforeAll(async () => {
  dir = tempDir('comments');
  docx = path.join(dir, 'review.docx');
  fs.copyFileSync(path.join(CORPUS, 'docx', 'pandoc--comments.docx'), docx);
  t = await startTestApi({ office: true });
  client = new FolioClient({ baseUrl: t.url, apiKey: t.apiKey });
}, 120_000);

afterAll(async () => {
  await t?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** pdftotext's text with white space collapsed (the margin column wraps comment lines). */
function text(file: string): string {
  return execFileSync('pdftotext', [file, '-'], { maxBuffer: 64 << 20 })
    .toString('utf8')
    .replace(/\s+/g, ' ');
}

/** Width in points of the first page, from pdfinfo's "Page size: W x H pts". */
function pageWidth(file: string): number {
  const info = execFileSync('pdfinfo', [file]).toString('utf8');
  const m = /^Page size:\s+([\d.]+) x/m.exec(info);
  if (!m) throw new Error(`no page size in pdfinfo output: ${info}`);
  return Number(m[1]);
}

function save(name: string, bytes: Uint8Array): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, bytes);
  return file;
}

describe('folio convert --comments', () => {
  it('local mode: margin prints the comments on a wider page; the default leaves them out', async () => {
    const plain = await runCli(['convert', docx, '--out', path.join(dir, 'local-none')], { timeoutMs: 170_000 });
    expect(plain.code, plain.stderr).toBe(0);
    const margin = await runCli(['convert', docx, '--comments', 'margin', '--out', path.join(dir, 'local-margin')], { timeoutMs: 170_000 });
    expect(margin.code, margin.stderr).toBe(0);

    const none = path.join(dir, 'local-none', 'review.pdf');
    const withComments = path.join(dir, 'local-margin', 'review.pdf');
    expect(isPdf(none) && isPdf(withComments)).toBe(true);
    expect(text(none)).toContain(BODY);
    expect(text(none)).not.toContain(COMMENT);
    expect(text(withComments)).toContain(BODY);
    expect(text(withComments)).toContain(COMMENT);
    expect(pageWidth(withComments)).toBeGreaterThan(pageWidth(none));
  }, 360_000);

  it('remote mode sends the option to the API', async () => {
    const out = path.join(dir, 'remote-margin');
    const r = await runCli(['--server', t.url, 'convert', docx, '--comments', 'margin', '--out', out], {
      env: { FOLIO_API_KEY: t.apiKey },
      timeoutMs: 170_000,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(text(path.join(out, 'review.pdf'))).toContain(COMMENT);
  }, 180_000);

  it('annotations with --pdfa is bad usage (exit 2, as the API answers 400), before any conversion', async () => {
    const out = path.join(dir, 'refused');
    const r = await runCli(['convert', docx, '--comments', 'annotations', '--pdfa', '2b', '--out', out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^folio: USAGE: --comments annotations cannot be combined with --pdfa/m);
    expect(fs.existsSync(out)).toBe(false);
    const bad = await runCli(['convert', docx, '--comments', 'sidebar']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("argument 'sidebar' is invalid");
  });
});

describe('FolioClient.convert comments', () => {
  it("comments: 'margin' gives the comment text on a wider page; without it there is none", async () => {
    const margin = save('client-margin.pdf', (await client.convert({ path: docx }, { comments: 'margin' })).bytes);
    const none = save('client-none.pdf', (await client.convert({ path: docx })).bytes);
    expect(text(margin)).toContain(COMMENT);
    expect(text(none)).toContain(BODY);
    expect(text(none)).not.toContain(COMMENT);
    expect(pageWidth(margin)).toBeGreaterThan(pageWidth(none));
  }, 180_000);

  it("comments: 'annotations' with pdfa is refused by the API as a validation error", async () => {
    const e = await client.convert({ path: docx }, { comments: 'annotations', pdfa: '2b' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(FolioValidationError);
    expect((e as FolioValidationError).status).toBe(400);
  });
});
