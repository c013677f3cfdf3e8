/**
 * The documents a batch command works on, from its arguments: files as given, folders (recursively, the
 * files whose extension the command accepts) and glob patterns (`'docs/**\/*.md'`, quoted so the shell
 * leaves them to us). Each input keeps the folder it was found under, so `--out` can mirror the tree.
 */
import fs from 'node:fs';
import path from 'node:path';
import { glob, isDynamicPattern } from 'tinyglobby';
import { CliError, EXIT_USAGE } from './output.js';
import { outputUnder } from './output-files.js';

export interface InputFile {
  /** Path as the user can read it (relative to the working directory when under it). */
  display: string;
  absolute: string;
  /** Path relative to the folder or glob base it came from (its own name for a plain file). */
  relative: string;
}

function displayOf(absolute: string): string {
  const rel = path.relative(process.cwd(), absolute);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : absolute;
}

function walk(dir: string, accept: (file: string) => boolean, out: string[]): void {
  const entries = fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
  for (const e of entries) {
    if (e.name.startsWith('.')) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, accept, out);
    else if (e.isFile() && accept(e.name)) out.push(p);
  }
}

/** The static directory part of a glob pattern (where its matches are relative to). */
function globBase(pattern: string): string {
  const parts = pattern.split(/[\\/]/);
  const base: string[] = [];
  for (const part of parts) {
    if (isDynamicPattern(part)) break;
    base.push(part);
  }
  return base.join('/') || '.';
}

/**
 * Expands the arguments. `accept` decides which files of a folder are taken (files named explicitly and glob
 * matches are always taken). Throws a usage error when an argument matches nothing.
 */
export async function expandInputs(args: string[], accept: (file: string) => boolean): Promise<InputFile[]> {
  const seen = new Set<string>();
  const out: InputFile[] = [];
  const add = (absolute: string, relative: string) => {
    if (seen.has(absolute)) return;
    seen.add(absolute);
    out.push({ display: displayOf(absolute), absolute, relative });
  };
  for (const arg of args) {
    const stat = fs.statSync(arg, { throwIfNoEntry: false });
    if (stat?.isDirectory()) {
      const files: string[] = [];
      walk(arg, accept, files);
      if (files.length === 0) throw new CliError('NO_INPUT', `${arg}: no file this command accepts in this folder`, EXIT_USAGE);
      for (const f of files) add(path.resolve(f), path.relative(arg, f));
    } else if (stat?.isFile()) {
      add(path.resolve(arg), path.basename(arg));
    } else if (isDynamicPattern(arg)) {
      const matches = (await glob(arg, { onlyFiles: true, dot: false, expandDirectories: false })).sort();
      if (matches.length === 0) throw new CliError('NO_INPUT', `${arg}: no file matches this pattern`, EXIT_USAGE);
      const base = globBase(arg);
      for (const m of matches) add(path.resolve(m), path.relative(base, m));
    } else {
      throw new CliError('FILE_NOT_FOUND', `${arg}: no such file or folder`, EXIT_USAGE);
    }
  }
  return out;
}

/** The extension of a file name, lower case, without the dot ('' when none). */
export function extensionOf(file: string): string {
  const base = path.basename(file);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
}

/**
 * Where the output of `input` goes: beside it, or under `outDir` keeping its path relative to the folder or
 * glob base it came from. The extension is replaced by `ext`. A path that would leave `outDir` (a glob with
 * `..` after a wildcard matches files outside its base) throws OutputSkipped (OUTPUT_OUTSIDE).
 */
export function outputPath(input: InputFile, ext: string, outDir?: string): string {
  const rel = input.relative;
  const stem = rel.slice(0, rel.length - path.extname(rel).length);
  if (outDir) return outputUnder(outDir, `${stem}.${ext}`, input.display);
  const abs = input.absolute;
  return path.join(path.dirname(abs), `${path.basename(abs, path.extname(abs))}.${ext}`);
}
