/**
 * `folio convert` prints what a conversion could not keep as it was (the API's X-Folio-Warnings) on stderr,
 * in local mode, unless --quiet: here a Markdown table wider than Word's 63 columns (issue 23).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from './helpers.js';

let dir: string;
beforeAll(() => {
  dir = tempDir('warnings');
  const row = (f: (i: number) => string) => `| ${Array.from({ length: 70 }, (_, i) => f(i)).join(' | ')} |`;
  fs.writeFileSync(path.join(dir, 'wide.md'), `${row((i) => `h${i}`)}\n${row(() => '-')}\n${row((i) => `c${i}`)}\n`);
});
afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('folio convert: warnings on stderr', () => {
  it('a 70-column table: converted (exit 0), and the split named on stderr', async () => {
    const r = await runCli(['convert', 'wide.md', '--to', 'docx'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      'wide.md: warning: table 1: its 70 columns (Word allows 63) are written as 2 tables one below the other (columns 1-63, 64-70)',
    );
    expect(fs.existsSync(path.join(dir, 'wide.docx'))).toBe(true);
  }, 60_000);

  it('--quiet: no warning lines', async () => {
    const r = await runCli(['convert', 'wide.md', '--to', 'docx', '--out', 'quiet', '--quiet'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('warning:');
  }, 60_000);
});
