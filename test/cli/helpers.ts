/**
 * Runs the compiled `folio` CLI as a child process, as a user would: the same build the adversarial suite
 * starts the server from (dist/ when fresh, else the sources compiled into a private folder).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serverEntry, ROOT } from '../adversarial/server.js';
import { CORPUS, WORD_PDF } from '../helpers/corpus.js';

export { CORPUS, ROOT, WORD_PDF };

let entry: string[] | undefined;

/** node arguments that start the CLI. */
export function cliEntry(): string[] {
  if (entry) return entry;
  const server = serverEntry();
  const main = server.args[server.args.length - 1]!;
  entry = main.endsWith('.ts') ? ['--import', 'tsx', path.join(ROOT, 'src/cli/main.ts')] : [path.join(path.dirname(main), 'cli/main.js')];
  return entry;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

export function runCli(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string | undefined>; timeoutMs?: number } = {},
): Promise<CliResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const env: Record<string, string | undefined> = {
      ...process.env,
      LOG_LEVEL: undefined,
      FOLIO_SERVER: undefined,
      FOLIO_API_KEY: undefined,
      ...opts.env,
    };
    for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
    const child = spawn(process.execPath, [...cliEntry(), ...args], {
      cwd: opts.cwd ?? ROOT,
      env: env as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 150_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `folio-cli-${prefix}-`));
}

/** A small folder of inputs: two valid corpus DOCX files, one broken (truncated ZIP) and one Markdown file. */
export function batchFolder(dir: string): { valid: string[]; broken: string } {
  const docx = path.join(CORPUS, 'docx');
  fs.mkdirSync(dir, { recursive: true });
  for (const f of ['pandoc--lists.docx', 'pandoc--tables.docx', 'poi--truncated62886.docx']) fs.copyFileSync(path.join(docx, f), path.join(dir, f));
  fs.writeFileSync(path.join(dir, 'notes.md'), '# Notes\n\nA *short* list:\n\n1. one\n2. two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n');
  return { valid: ['pandoc--lists', 'pandoc--tables', 'notes'], broken: 'poi--truncated62886.docx' };
}

export function isPdf(file: string): boolean {
  return fs.readFileSync(file).subarray(0, 5).toString('latin1') === '%PDF-';
}

/** Changes one byte inside the signed range of a PDF (the first /MediaBox's first digit). */
export function tamper(pdf: string, out: string): void {
  const bytes = Buffer.from(fs.readFileSync(pdf));
  const at = bytes.indexOf('/MediaBox');
  const digit = bytes.subarray(at).findIndex((b) => b >= 0x30 && b <= 0x39) + at;
  bytes[digit] = bytes[digit] === 0x39 ? 0x38 : 0x39;
  fs.writeFileSync(out, bytes);
}
