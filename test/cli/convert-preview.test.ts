/**
 * `folio convert --to png|jpeg`: page previews on the command line, in local mode (poppler's pdftoppm in the
 * CLI process, as the API route renders them) and in remote mode against the real API (started in this
 * process; PDF input needs no office pool). The input is a 3-page A4 PDF written by pdf-lib; image sizes are
 * read from the PNG IHDR chunk and the ZIPs are unpacked by fflate, neither written here.
 */
import fs from 'node:fs';
import path from 'node:path';
import { unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { markdownToDocx } from '../../src/convert/index.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { taggedPdf } from '../merge/helpers.js';
import { runCli, tempDir } from './helpers.js';

let dir: string;
let pdf: string;
let notes: string;
let t: TestApi;

beforeAll(async () => {
  dir = tempDir('preview');
  pdf = path.join(dir, 'report.pdf');
  fs.writeFileSync(pdf, await taggedPdf('Report', 3));
  notes = path.join(dir, 'notes.md');
  fs.writeFileSync(notes, '# Notes\n\nText.\n');
  t = await startTestApi();
}, 60_000);

afterAll(async () => {
  await t?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** Width and height from a PNG's IHDR chunk (signature 8 bytes, length 4, "IHDR" 4, then width, height). */
function pngSize(bytes: Uint8Array): { width: number; height: number } {
  const b = Buffer.from(bytes);
  expect(b.subarray(1, 4).toString('latin1')).toBe('PNG');
  expect(b.subarray(12, 16).toString('latin1')).toBe('IHDR');
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

const isJpeg = (bytes: Uint8Array) => bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff;

describe('folio convert --to png|jpeg', () => {
  for (const mode of ['local', 'remote'] as const) {
    const cli = (args: string[]) =>
      mode === 'local'
        ? runCli(['convert', pdf, ...args])
        : runCli(['--server', t.url, 'convert', pdf, ...args], { env: { FOLIO_API_KEY: t.apiKey } });

    it(`${mode}: one page at the requested width → <stem>.png`, async () => {
      const out = path.join(dir, `${mode}-one`);
      const r = await cli(['--to', 'png', '--width', '300', '--out', out]);
      expect(r.code, r.stderr).toBe(0);
      expect(fs.readdirSync(out)).toEqual(['report.png']);
      const size = pngSize(fs.readFileSync(path.join(out, 'report.png')));
      expect(size.width).toBe(300);
      // A4 portrait: height/width = 841.89/595.28 ≈ 1.414.
      expect(size.height).toBeGreaterThanOrEqual(423);
      expect(size.height).toBeLessThanOrEqual(425);
    }, 120_000);

    it(`${mode}: a pages range → <stem>.zip of one image per page`, async () => {
      const out = path.join(dir, `${mode}-range`);
      const r = await cli(['--to', 'jpeg', '--pages', '1,2-3', '--width', '200', '--out', out]);
      expect(r.code, r.stderr).toBe(0);
      expect(fs.readdirSync(out)).toEqual(['report.zip']);
      const entries = unzipSync(fs.readFileSync(path.join(out, 'report.zip')));
      expect(Object.keys(entries).sort()).toEqual(['page-1.jpg', 'page-2.jpg', 'page-3.jpg']);
      for (const bytes of Object.values(entries)) expect(isJpeg(bytes)).toBe(true);
      // Different pages (their text differs), not one page three times.
      expect(new Set(Object.values(entries).map((b) => Buffer.from(b).toString('base64'))).size).toBe(3);
    });

    it(`${mode}: a page beyond the document fails that file (exit 1) naming the page count`, async () => {
      const out = path.join(dir, `${mode}-beyond`);
      const r = await cli(['--to', 'png', '--pages', '4', '--out', out]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('UNPROCESSABLE_DOCUMENT');
      expect(r.stderr).toContain('has 3 pages');
      expect(fs.existsSync(path.join(out, 'report.png'))).toBe(false);
    });

    it(`${mode}: width 5000 and more than 50 pages are bad usage (exit 2), before any document is read`, async () => {
      const out = path.join(dir, `${mode}-bad`);
      const wide = await cli(['--to', 'png', '--width', '5000', '--out', out]);
      expect(wide.code).toBe(2);
      expect(wide.stderr).toMatch(/^folio: VALIDATION_ERROR: .*width.*\(width: must be at most 4000 px\)/m);
      const many = await cli(['--to', 'png', '--pages', '1-51', '--out', out]);
      expect(many.code).toBe(2);
      expect(many.stderr).toContain('at most 50 pages');
      expect(fs.existsSync(out)).toBe(false);
    });

    it(`${mode}: Markdown is refused as the API refuses it (previews are of a DOCX or a PDF)`, async () => {
      const args = ['convert', notes, '--to', 'png', '--out', path.join(dir, `${mode}-md`)];
      const r = mode === 'local' ? await runCli(args) : await runCli(['--server', t.url, ...args], { env: { FOLIO_API_KEY: t.apiKey } });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('UNSUPPORTED_CONVERSION: Previews are made of a DOCX or a PDF, not md');
    });
  }

  it('local: a DOCX goes through the office engine first, then is rendered at the width asked', async () => {
    const docx = path.join(dir, 'memo.docx');
    fs.writeFileSync(docx, markdownToDocx('# Memo from DOCX\n\nOne page of text.\n'));
    const out = path.join(dir, 'local-docx');
    const r = await runCli(['convert', docx, '--to', 'png', '--width', '250', '--out', out], { timeoutMs: 170_000 });
    expect(r.code, r.stderr).toBe(0);
    const size = pngSize(fs.readFileSync(path.join(out, 'memo.png')));
    expect(size.width).toBe(250);
    expect(size.height).toBeGreaterThan(size.width); // a portrait page (A4 by default)
  }, 180_000);

  it('--width without --to png|jpeg is bad usage; --help shows a preview example', async () => {
    const r = await runCli(['convert', pdf, '--width', '300']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--width and --pages apply to page previews only');
    const help = await runCli(['convert', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--pages <list>');
    expect(help.stdout).toMatch(/folio convert \S+ --to png --width/);
  });
});
