/**
 * The repository's own text files, for the documentation tests: tracked files when git can list them (a
 * clone), else every file below the root outside dependency, build and data folders (an exported tree).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '../..');

/** Folders no documentation check reads: dependencies, build output, local data, binary fixtures. */
const SKIPPED = /^(?:node_modules|dist|data|coverage|\.git|\.tmp[^/]*|test\/fixtures|fonts\/(?:build|metrics))(?:\/|$)|\/node_modules\/|\/dist\//;
const BINARY = /\.(?:pdf|docx|docm|dotx|xlsx|pptx|zip|png|jpe?g|gif|ico|ttf|otf|woff2?|p12|pfx|der|crt|sqlite|gz|bin)$/i;

function listed(): string[] {
  try {
    return execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 })
      .split('\0')
      .filter(Boolean);
  } catch {
    const out: string[] = [];
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
        const rel = dir ? `${dir}/${entry.name}` : entry.name;
        if (SKIPPED.test(rel)) continue;
        if (entry.isDirectory()) walk(rel);
        else if (entry.isFile()) out.push(rel);
      }
    };
    walk('');
    return out;
  }
}

/** Repository-relative paths and contents of the text files (no NUL in their first 8 KB). */
export function textFiles(): Array<{ file: string; text: string }> {
  const files: Array<{ file: string; text: string }> = [];
  for (const file of listed()) {
    if (SKIPPED.test(file) || BINARY.test(file)) continue;
    let bytes: Buffer;
    try {
      bytes = fs.readFileSync(path.join(ROOT, file));
    } catch {
      continue; // listed by git but deleted in the working tree
    }
    if (bytes.subarray(0, 8192).includes(0)) continue;
    files.push({ file, text: bytes.toString('utf8') });
  }
  return files;
}

/**
 * The section names of a Markdown file: each heading's text up to its first ':' (`## Sign: POST /v1/sign` →
 * `Sign`), and the whole heading too.
 */
export function sectionNames(markdown: string): string[] {
  const names: string[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const m = !fenced && /^#{1,6}\s+(.+?)\s*$/.exec(line);
    if (!m) continue;
    names.push(m[1]!, m[1]!.split(':')[0]!.trim());
  }
  return names;
}
