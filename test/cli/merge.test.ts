/**
 * `folio merge`, locally (LibreOffice pool for the DOCX input, the engine pool for the merge) and through a
 * real API started by the test (`--server`): pages in order with pdfinfo/pdftotext, outline titles and page
 * labels with qpdf, the warning for a signed input (signed by that API), and a damaged input named by index
 * and file name with exit 1 and no output file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FolioClient, fromBase64 } from '../../packages/client/src/index.js';
import { markdownToDocx } from '../../src/convert/index.js';
import { FolioProcess } from '../adversarial/server.js';
import { pageTexts, pdfinfoPages, qpdfJson, taggedPdf } from '../merge/helpers.js';
import { runCli, tempDir } from './helpers.js';

let server: FolioProcess;
let key: string;
let dir: string;
const file = (name: string) => path.join(dir, name);
const read = (name: string) => new Uint8Array(fs.readFileSync(file(name)));
const texts = (name: string) => pageTexts(read(name)).map((s) => s.trim());

beforeAll(async () => {
  dir = tempDir('merge');
  server = await FolioProcess.start({ OFFICE_WORKERS: '1', ENGINE_WORKERS: '1', OFFICE_MEMORY_MB: '1024' }, 150_000);
  key = await server.newKey();
  fs.writeFileSync(file('alpha.pdf'), await taggedPdf('Alpha', 2));
  fs.writeFileSync(file('bravo.pdf'), await taggedPdf('Bravo', 1));
  fs.writeFileSync(file('memo.docx'), markdownToDocx('# Memo from DOCX\n\nOne page of text.\n'));
  fs.writeFileSync(file('broken.pdf'), '%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 9 0 R >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');
  // Signed by the API (no audit page), so the merge has a real signature to drop.
  const signed = await new FolioClient({ baseUrl: server.url, apiKey: key }).sign({
    document: await taggedPdf('Signed', 1),
    signer: { name: 'Ada Lovelace', email: 'ada@example.com' },
    auditTrail: [{ type: 'document.signed', timestamp: new Date().toISOString() }],
    certificate: { enabled: false },
  });
  fs.writeFileSync(file('signed.pdf'), fromBase64(signed.document.base64));
}, 180_000);

afterAll(async () => {
  await server?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const remote = (args: string[]) => runCli(['--server', server.url, ...args], { env: { FOLIO_API_KEY: key } });

describe('folio merge', () => {
  it('--help explains the options with examples', async () => {
    const r = await runCli(['merge', '--help']);
    expect(r.code).toBe(0);
    for (const option of ['--out', '--title', '--label-prefix', '--no-outline', '--no-page-labels']) expect(r.stdout).toContain(option);
    expect(r.stdout).toMatch(/Examples:\n {2}folio merge /);
  });

  for (const mode of ['local', 'remote'] as const) {
    const cli = (args: string[]) => (mode === 'local' ? runCli(args, { timeoutMs: 170_000 }) : remote(args));

    it(`${mode}: merges PDF and DOCX in the order given, with titles and label prefixes`, async () => {
      const out = `${mode}-merged.pdf`;
      const r = await cli([
        'merge',
        file('alpha.pdf'),
        file('memo.docx'),
        file('bravo.pdf'),
        '--title',
        'First',
        '--title',
        'Memo',
        '--label-prefix',
        'A-',
        '-o',
        file(out),
      ]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^merged 3 files \\(4 pages, .*\\): wrote .*${out}\\n$`));
      expect(pdfinfoPages(read(out))).toBe(4);
      const pages = texts(out);
      expect(pages[0]).toBe('Alpha page 1');
      expect(pages[1]).toBe('Alpha page 2');
      expect(pages[2]).toMatch(/^Memo from DOCX\s+One page of text\.$/);
      expect(pages[3]).toBe('Bravo page 1');
      const json = qpdfJson(read(out));
      // The third input has no --title: its file name names it.
      expect(json.outlines.map((o) => [o.title, o.destpageposfrom1])).toEqual([
        ['First', 1],
        ['Memo', 3],
        ['bravo.pdf', 4],
      ]);
      expect(json.pagelabels.map((l) => [l.index, l.label['/P'] ?? null])).toEqual([
        [0, 'u:A-'],
        [2, null],
        [3, null],
      ]);
    }, 180_000);

    it(`${mode}: warns on stderr that a signed input lost its signature; --no-outline --no-page-labels`, async () => {
      const out = `${mode}-signed.pdf`;
      const r = await cli(['merge', file('bravo.pdf'), file('signed.pdf'), '--no-outline', '--no-page-labels', '-o', file(out)]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/^warning: input 1 \(signed\.pdf\) is signed; .*signature is not valid in the merged PDF$/m);
      expect(texts(out)).toEqual(['Bravo page 1', 'Signed page 1']);
      const json = qpdfJson(read(out));
      expect(json.outlines).toEqual([]);
      expect(json.pagelabels).toEqual([]);
    }, 120_000);

    it(`${mode}: a damaged input fails the merge, named by index and file name; exit 1, nothing written`, async () => {
      const out = `${mode}-broken.pdf`;
      const r = await cli(['merge', file('alpha.pdf'), file('broken.pdf'), '-o', file(out)]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^folio: UNPROCESSABLE_DOCUMENT: Cannot merge input 1 \(broken\.pdf\): .*\(documents\.1: broken\.pdf: /m);
      if (mode === 'remote') expect(r.stderr).toMatch(/\[request id [\w-]+\]$/m);
      expect(fs.existsSync(file(out))).toBe(false);
    }, 120_000);
  }

  it('refuses fewer than two files and more titles than files (exit 2)', async () => {
    const one = await runCli(['merge', file('alpha.pdf'), '-o', file('one.pdf')]);
    expect(one.code).toBe(2);
    expect(one.stderr).toContain('a merge takes 2 to 50 files; 1 given');
    const titles = await runCli(['merge', file('alpha.pdf'), file('bravo.pdf'), '--title', 'a', '--title', 'b', '--title', 'c', '-o', file('t.pdf')]);
    expect(titles.code).toBe(2);
    expect(titles.stderr).toContain('3 --title for 2 files');
  });
});
