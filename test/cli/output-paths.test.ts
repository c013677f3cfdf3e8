/**
 * Where `folio` writes (issue 24): outputs stay inside `--out` (or beside each input) even when a glob has
 * `..` after a wildcard; a symlink at the output path is never written through; an existing file is kept
 * unless `--force` (or `--overwrite`), and what was not written is named on stderr with exit 1. Real temp
 * folders, the compiled CLI in local mode (Markdown → DOCX needs no LibreOffice).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from './helpers.js';

let dir: string;
beforeAll(() => {
  dir = tempDir('paths');
});
afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** A fresh case folder under the suite's temp dir. */
function caseDir(name: string): string {
  const d = path.join(dir, name);
  fs.mkdirSync(d, { recursive: true });
  return d;
}

const isDocx = (file: string) => fs.readFileSync(file).subarray(0, 2).toString('latin1') === 'PK';

describe('folio convert: output paths', () => {
  it('a glob with ".." after a wildcard: nothing is written outside --out, the escaping input is skipped (exit 1)', async () => {
    const d = caseDir('dotdot');
    fs.mkdirSync(path.join(d, 'src/sub'), { recursive: true });
    fs.mkdirSync(path.join(d, 'victim'), { recursive: true });
    fs.writeFileSync(path.join(d, 'src/sub/inside.md'), '# Inside\n');
    // The pattern base is src/; this match is victim/target.md, whose mirrored output would be out/../victim/target.docx.
    fs.writeFileSync(path.join(d, 'victim/target.md'), '# Target\n');
    const precious = path.join(d, 'victim/target.docx');
    fs.writeFileSync(precious, 'precious');

    const r = await runCli(['convert', 'src/*/../../victim/*.md', 'src/*/*.md', '--to', 'docx', '--out', 'out'], { cwd: d });
    expect(r.code, r.stderr).toBe(1);
    expect(fs.readFileSync(precious, 'utf8')).toBe('precious');
    expect(r.stderr).toMatch(/skipped victim\/target\.md: OUTPUT_OUTSIDE: .*outside --out/);
    // The input inside the base is converted as before, mirrored under --out.
    expect(isDocx(path.join(d, 'out/sub/inside.docx'))).toBe(true);
    // Nothing appeared beside out/ either.
    expect(fs.readdirSync(d).sort()).toEqual(['out', 'src', 'victim']);
    expect(fs.readdirSync(path.join(d, 'victim')).sort()).toEqual(['target.docx', 'target.md']);
  }, 60_000);

  it('a symlink at the output path pointing outside: its target is untouched; with --force the link itself is replaced', async () => {
    const d = caseDir('symlink');
    fs.writeFileSync(path.join(d, 'a.md'), '# A\n');
    const outside = path.join(d, 'outside.txt');
    fs.writeFileSync(outside, 'do not touch');
    fs.mkdirSync(path.join(d, 'out'));
    fs.symlinkSync(outside, path.join(d, 'out/a.docx'));

    const r = await runCli(['convert', 'a.md', '--to', 'docx', '--out', 'out'], { cwd: d });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/skipped a\.md: OUTPUT_EXISTS: out\/a\.docx is a symbolic link \(not followed\); kept \(--force replaces it\)/);
    expect(fs.readFileSync(outside, 'utf8')).toBe('do not touch');
    expect(fs.lstatSync(path.join(d, 'out/a.docx')).isSymbolicLink()).toBe(true);

    const forced = await runCli(['convert', 'a.md', '--to', 'docx', '--out', 'out', '--force'], { cwd: d });
    expect(forced.code, forced.stderr).toBe(0);
    expect(fs.readFileSync(outside, 'utf8')).toBe('do not touch');
    const stat = fs.lstatSync(path.join(d, 'out/a.docx'));
    expect(stat.isSymbolicLink()).toBe(false);
    expect(isDocx(path.join(d, 'out/a.docx'))).toBe(true);
  }, 60_000);

  it('a dangling symlink beside the input (no --out) is not followed to create its target', async () => {
    const d = caseDir('dangling');
    fs.writeFileSync(path.join(d, 'b.md'), '# B\n');
    const wouldBeCreated = path.join(d, 'created-through-link.docx');
    fs.symlinkSync(wouldBeCreated, path.join(d, 'b.docx'));
    const r = await runCli(['convert', 'b.md', '--to', 'docx'], { cwd: d });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/skipped b\.md: OUTPUT_EXISTS/);
    expect(fs.existsSync(wouldBeCreated)).toBe(false);
  }, 60_000);

  it('a folder under --out that is a symlink to elsewhere: not written through it', async () => {
    const d = caseDir('dirlink');
    fs.mkdirSync(path.join(d, 'src/sub'), { recursive: true });
    fs.writeFileSync(path.join(d, 'src/sub/c.md'), '# C\n');
    fs.mkdirSync(path.join(d, 'elsewhere'));
    fs.mkdirSync(path.join(d, 'out'));
    fs.symlinkSync(path.join(d, 'elsewhere'), path.join(d, 'out/sub'));
    const r = await runCli(['convert', 'src', '--to', 'docx', '--out', 'out'], { cwd: d });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/skipped src\/sub\/c\.md: OUTPUT_OUTSIDE: .*a folder on the way is a link/);
    expect(fs.readdirSync(path.join(d, 'elsewhere'))).toEqual([]);
  }, 60_000);

  it('--out itself a symlink to a folder: written into the folder it names', async () => {
    const d = caseDir('outlink');
    fs.writeFileSync(path.join(d, 'e.md'), '# E\n');
    fs.mkdirSync(path.join(d, 'real-out'));
    fs.symlinkSync(path.join(d, 'real-out'), path.join(d, 'out'));
    const r = await runCli(['convert', 'e.md', '--to', 'docx', '--out', 'out'], { cwd: d });
    expect(r.code, r.stderr).toBe(0);
    expect(isDocx(path.join(d, 'real-out/e.docx'))).toBe(true);
  }, 60_000);

  it('an existing output file is kept without --force (exit 1, named on stderr) and replaced with --force or --overwrite', async () => {
    const d = caseDir('existing');
    fs.writeFileSync(path.join(d, 'f.md'), '# F\n');
    fs.writeFileSync(path.join(d, 'g.md'), '# G\n');
    fs.writeFileSync(path.join(d, 'f.docx'), 'older');

    const r = await runCli(['convert', 'f.md', 'g.md', '--to', 'docx'], { cwd: d });
    expect(r.code).toBe(1);
    expect(fs.readFileSync(path.join(d, 'f.docx'), 'utf8')).toBe('older');
    // The other document is converted; the summary says one was skipped and why.
    expect(isDocx(path.join(d, 'g.docx'))).toBe(true);
    expect(r.stderr).toMatch(
      /converted 1 of 2 documents .*; 1 skipped \(not written\):\n {2}skipped f\.md: OUTPUT_EXISTS: .*f\.docx exists; kept \(--force replaces it\)/,
    );

    const forced = await runCli(['convert', 'f.md', '--to', 'docx', '--force'], { cwd: d });
    expect(forced.code, forced.stderr).toBe(0);
    expect(isDocx(path.join(d, 'f.docx'))).toBe(true);

    fs.writeFileSync(path.join(d, 'g.docx'), 'older');
    const overwrite = await runCli(['convert', 'g.md', '--to', 'docx', '--overwrite'], { cwd: d });
    expect(overwrite.code, overwrite.stderr).toBe(0);
    expect(isDocx(path.join(d, 'g.docx'))).toBe(true);
    // No temporary file is left behind by the replacement.
    expect(fs.readdirSync(d).sort()).toEqual(['f.docx', 'f.md', 'g.docx', 'g.md']);
  }, 60_000);

  it('a normal batch (folder and glob, mirrored under --out) still works', async () => {
    const d = caseDir('normal');
    fs.mkdirSync(path.join(d, 'notes/deep'), { recursive: true });
    fs.writeFileSync(path.join(d, 'notes/one.md'), '# One\n');
    fs.writeFileSync(path.join(d, 'notes/deep/two.md'), '# Two\n');
    const r = await runCli(['convert', 'notes/**/*.md', '--to', 'docx', '--out', 'build'], { cwd: d });
    expect(r.code, r.stderr).toBe(0);
    expect(isDocx(path.join(d, 'build/one.docx'))).toBe(true);
    expect(isDocx(path.join(d, 'build/deep/two.docx'))).toBe(true);
    expect(r.stderr).toMatch(/converted 2 of 2 documents/);
  }, 60_000);
});

describe('folio annotate/sign/merge -o FILE: the same write rules', () => {
  it('annotate: an existing -o file or a symlink there is kept without --force; --force replaces the link, not its target', async () => {
    const d = caseDir('annotate');
    const template = path.join(d, 't.docx');
    fs.writeFileSync(path.join(d, 'src.md'), '# Offer for {{customer}}\n');
    const conv = await runCli(['convert', 'src.md', '--to', 'docx'], { cwd: d });
    expect(conv.code, conv.stderr).toBe(0);
    fs.renameSync(path.join(d, 'src.docx'), template);
    const data = path.join(d, 'data.yaml');
    fs.writeFileSync(data, 'customer: Ada\n');
    const outside = path.join(d, 'outside.txt');
    fs.writeFileSync(outside, 'do not touch');
    const out = path.join(d, 'filled.docx');
    fs.symlinkSync(outside, out);

    const r = await runCli(['annotate', template, data, '-o', out]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/OUTPUT_EXISTS: .*filled\.docx is a symbolic link \(not followed\)/);
    expect(fs.readFileSync(outside, 'utf8')).toBe('do not touch');

    const forced = await runCli(['annotate', template, data, '-o', out, '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(fs.readFileSync(outside, 'utf8')).toBe('do not touch');
    expect(fs.lstatSync(out).isSymbolicLink()).toBe(false);
    expect(isDocx(out)).toBe(true);
  }, 60_000);
});
