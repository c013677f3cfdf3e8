/**
 * Where the CLI may write, and how (issue 24): every output lands inside its root — `--out DIR`, or the
 * input's own folder without it — checked after `..` is normalised and after symlinked folders are resolved;
 * an existing file is kept unless `--force`; a symlink at the output path is never followed (without
 * `--force` it is an existing file; with it, the link itself is replaced and its target left alone).
 *
 * Written by hand because it is a handful of `fs` calls whose order is the point: the file is created with
 * `wx` (O_CREAT|O_EXCL: refuses any existing path, a symlink or a dangling one included), and a forced
 * replacement is written to a fresh `wx` temporary file in the same folder and renamed over the old entry
 * (rename replaces the directory entry — a link is not followed — and readers never see half a file).
 * What it cannot close is a race with another process swapping a folder for a symlink between the check
 * and the write; the CLI runs with the user's own rights, so that needs someone who could write there anyway.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { CliError } from './output.js';

/** A document the CLI did not write because its output path is not allowed; reported as skipped, not failed. */
export class OutputSkipped extends CliError {
  readonly skipped = true;
  constructor(code: 'OUTPUT_EXISTS' | 'OUTPUT_OUTSIDE' | 'OUTPUT_NOT_A_FILE', message: string) {
    super(code, message);
    this.name = 'OutputSkipped';
  }
}

export const isSkipped = (e: unknown): e is OutputSkipped => !!e && typeof e === 'object' && (e as { skipped?: unknown }).skipped === true;

/** `child` is `root` or below it (both absolute and normalised). */
export function isInside(root: string, child: string): boolean {
  const rel = path.relative(root, child);
  return rel === '' || (!rel.startsWith(`..${path.sep}`) && rel !== '..' && !path.isAbsolute(rel));
}

/**
 * The output file for a path relative to `outDir`, refused when it would leave it — a glob with `..` after a
 * wildcard matches files outside its own base folder, and mirroring those under `--out` would climb out.
 */
export function outputUnder(outDir: string, relative: string, label: string): string {
  const root = path.resolve(outDir);
  const file = path.resolve(root, relative);
  if (!isInside(root, file) || file === root)
    throw new OutputSkipped(
      'OUTPUT_OUTSIDE',
      `${label} is outside the folder or pattern base it was found under (a ".." after a wildcard?): its output ${file} would be outside --out ${outDir}`,
    );
  // As the user named it (relative stays relative in progress lines); checked above in its resolved form.
  return path.join(outDir, relative);
}

/** The deepest existing folder on the way to `dir` (itself when it exists). */
function existingAncestor(dir: string): string {
  let d = dir;
  while (!fs.existsSync(d)) {
    const up = path.dirname(d);
    if (up === d) break;
    d = up;
  }
  return d;
}

/** Throws OUTPUT_OUTSIDE when `dir`, with every symlink resolved, is not inside `root` (resolved too). */
function checkContained(root: string, dir: string, file: string): void {
  const realRoot = fs.realpathSync(root);
  const real = fs.realpathSync(existingAncestor(dir));
  if (!isInside(realRoot, real)) {
    throw new OutputSkipped('OUTPUT_OUTSIDE', `${file}: a folder on the way is a link to ${real}, outside ${root}; not written there`);
  }
}

export interface WriteRules {
  /** Replace an existing file (or symlink: the link is replaced, its target untouched). */
  force: boolean;
  /** The folder every output must stay in after symlinks are resolved (`--out`, or the input's folder). */
  root?: string;
}

/**
 * Checks, before any work is done, that `file` may be written: what `writeOutputFile` will refuse is skipped
 * early, so a batch does not convert documents it would then not write.
 */
export function checkOutput(file: string, rules: WriteRules): void {
  const stat = fs.lstatSync(file, { throwIfNoEntry: false });
  if (stat?.isDirectory()) throw new OutputSkipped('OUTPUT_NOT_A_FILE', `${file} is a folder; not replaced`);
  if (stat && !rules.force) {
    const what = stat.isSymbolicLink() ? 'is a symbolic link (not followed)' : 'exists';
    throw new OutputSkipped('OUTPUT_EXISTS', `${file} ${what}; kept (--force replaces it)`);
  }
  if (rules.root) {
    if (!fs.existsSync(rules.root)) return; // created on write, then checked
    checkContained(rules.root, path.dirname(path.resolve(file)), file);
  }
}

/** Writes `bytes` to `file` by the rules above. */
export async function writeOutputFile(file: string, bytes: Uint8Array, rules: WriteRules): Promise<void> {
  const target = path.resolve(file);
  const dir = path.dirname(target);
  if (rules.root) {
    await fs.promises.mkdir(rules.root, { recursive: true });
    // Before creating folders, so none is made through a link that leads outside…
    checkContained(rules.root, dir, file);
    await fs.promises.mkdir(dir, { recursive: true });
    // …and after, for a link created meanwhile.
    checkContained(rules.root, dir, file);
  } else {
    await fs.promises.mkdir(dir, { recursive: true });
  }
  if (!rules.force) {
    await writeExclusive(target, bytes).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'EEXIST') throw new OutputSkipped('OUTPUT_EXISTS', `${file} exists; kept (--force replaces it)`);
      throw e;
    });
    return;
  }
  const stat = await fs.promises.lstat(target).catch(() => undefined);
  if (stat?.isDirectory()) throw new OutputSkipped('OUTPUT_NOT_A_FILE', `${file} is a folder; not replaced`);
  const temp = path.join(dir, `.${path.basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  await writeExclusive(temp, bytes);
  try {
    await fs.promises.rename(temp, target);
  } catch (e) {
    await fs.promises.unlink(temp).catch(() => undefined);
    throw e;
  }
}

/** Creates `file` (never an existing path, never through a link) and writes it; a partial file is removed. */
async function writeExclusive(file: string, bytes: Uint8Array): Promise<void> {
  const handle = await fs.promises.open(file, 'wx', 0o666);
  try {
    await handle.writeFile(bytes);
  } catch (e) {
    await handle.close().catch(() => undefined);
    await fs.promises.unlink(file).catch(() => undefined);
    throw e;
  }
  await handle.close();
}
