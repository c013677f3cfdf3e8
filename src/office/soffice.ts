/**
 * The fallback engine: one `soffice.bin --convert-to pdf` process for one document, used only when the
 * in-process LibreOfficeKit refuses a document that the full office program converts. LibreOffice 7.4's LOK
 * build refuses every DOCX carrying Word comments ("loadComponentFromURL returned an empty reference", with
 * or without LOK_FEATURE_NO_TILED_ANNOTATIONS), while soffice exports them; `comments=annotations` needs them.
 *
 * Bounded like a pool worker: a time budget, a resident-memory ceiling sampled from /proc (the whole
 * process group is SIGKILLed beyond either), no network (the profile's dead proxy and the environment's),
 * and the document only in a private directory (mode 0700, in /dev/shm — memory, not disk — when
 * available) that is removed as soon as the process has exited, whatever the outcome. Costs a cold start
 * on top of the conversion; a fresh profile would cost a second one (FIRST_START_RESTART), so each run copies
 * a profile template initialised once per temp root (no document has ever been near it).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { FolioError } from '../errors.js';
import { DEFAULT_INSTALL_PATH } from './lok.js';
import { fileUrl, writeProfile } from './profile.js';
import { readRss } from './rss.js';

export interface SofficeRun {
  /** writer_pdf_Export FilterData in LibreOffice's JSON form (pdf-options.ts), or '' for the defaults. */
  filterOptions: string;
  timeoutMs: number;
  maxRssBytes: number;
  /** Parent of the private directory (the pool's: /dev/shm when writable). */
  tempRoot: string;
  installPath?: string;
  memoryPollMs?: number;
}

/** A started conversion: its result, and a way to stop it at once (the pool's own time budget, shutdown). */
export interface SofficeJob {
  result: Promise<Uint8Array>;
  kill(): void;
}

/** soffice.bin exits with 81 after creating a profile and expects its wrapper to start it again. */
const FIRST_START_RESTART = 81;

/** Initialised profiles per temp root (a directory holding `profile/`), made on the first fallback. */
const templates = new Map<string, Promise<string | undefined>>();
/** Their directories, kept apart so that the exit hook can remove them synchronously. */
const templateDirs = new Set<string>();
process.once('exit', () => disposeSofficeTemplates());

/** Removes the profile templates (the pool calls this when it closes; the process exit does too). */
export function disposeSofficeTemplates(): void {
  for (const dir of templateDirs) fs.rmSync(dir, { recursive: true, force: true });
  templateDirs.clear();
  templates.clear();
}

/**
 * A profile directory that soffice has already initialised (`--terminate_after_init`), or undefined when that
 * failed (each run then starts from a fresh profile and pays the restart).
 */
function profileTemplate(run: SofficeRun): Promise<string | undefined> {
  let t = templates.get(run.tempRoot);
  if (!t) {
    t = (async () => {
      const dir = fs.mkdtempSync(path.join(run.tempRoot, 'folio-profile-template-'));
      fs.chmodSync(dir, 0o700);
      templateDirs.add(dir);
      const url = writeProfile(dir);
      const code = await new Promise<number | null>((resolve) => {
        const child = spawn(
          path.join(run.installPath ?? DEFAULT_INSTALL_PATH, 'soffice.bin'),
          [
            `-env:UserInstallation=${url}`,
            '--headless',
            '--invisible',
            '--nologo',
            '--norestore',
            '--nolockcheck',
            '--nodefault',
            '--terminate_after_init',
          ],
          { cwd: dir, env: sofficeEnv(dir), stdio: 'ignore', detached: true },
        );
        const timer = setTimeout(() => {
          try {
            if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
          } catch {
            // Already gone.
          }
        }, 60_000);
        child.once('error', () => resolve(-1));
        child.once('exit', (c) => {
          clearTimeout(timer);
          resolve(c);
        });
      });
      // Disposed meanwhile (the pool closed), or failed: nothing to keep.
      if (code === 0 && templateDirs.has(dir)) return dir;
      fs.rmSync(dir, { recursive: true, force: true });
      templateDirs.delete(dir);
      if (templates.get(run.tempRoot) === t) templates.delete(run.tempRoot);
      return undefined;
    })();
    templates.set(run.tempRoot, t);
  }
  return t;
}

/** The environment of the process: what LibreOffice needs, nothing of the API's secrets, no way out. */
function sofficeEnv(dir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const n of ['PATH', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'FONTCONFIG_PATH', 'FONTCONFIG_FILE']) {
    if (process.env[n] !== undefined) env[n] = process.env[n];
  }
  const proxy = 'http://127.0.0.1:9';
  return {
    ...env,
    HOME: dir,
    TMPDIR: dir,
    SAL_USE_VCLPLUGIN: 'svp',
    http_proxy: proxy,
    https_proxy: proxy,
    HTTP_PROXY: proxy,
    HTTPS_PROXY: proxy,
    no_proxy: '',
    NO_PROXY: '',
  };
}

/** `docx`: the bytes, or a file holding them (copied at once: the caller may remove it when this returns). */
export function convertWithSoffice(docx: Uint8Array | { path: string }, run: SofficeRun): SofficeJob {
  const dir = fs.mkdtempSync(path.join(run.tempRoot, 'folio-soffice-'));
  fs.chmodSync(dir, 0o700);
  const io = path.join(dir, 'io');
  const out = path.join(dir, 'out');
  let child: ReturnType<typeof spawn> | undefined;
  let stopped: FolioError | undefined;
  const killGroup = () => {
    if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  };
  const result = (async () => {
    // The budget covers everything: the profile, the process and its restart.
    const deadline = performance.now() + run.timeoutMs;
    try {
      fs.mkdirSync(io, { mode: 0o700 });
      fs.mkdirSync(out, { mode: 0o700 });
      const input = path.join(io, 'document.docx');
      if (docx instanceof Uint8Array) fs.writeFileSync(input, docx, { mode: 0o600 });
      else fs.copyFileSync(docx.path, input);
      const template = await profileTemplate(run);
      let profileUrl: string;
      if (template && fs.existsSync(path.join(template, 'profile'))) {
        fs.cpSync(path.join(template, 'profile'), path.join(dir, 'profile'), { recursive: true });
        profileUrl = fileUrl(path.join(dir, 'profile'));
      } else profileUrl = writeProfile(dir);
      const args = [
        `-env:UserInstallation=${profileUrl}`,
        '--headless',
        '--invisible',
        '--nologo',
        '--norestore',
        '--nolockcheck',
        '--nodefault',
        '--convert-to',
        run.filterOptions ? `pdf:writer_pdf_Export:${run.filterOptions}` : 'pdf:writer_pdf_Export',
        '--outdir',
        out,
        input,
      ];
      for (let attempt = 0; attempt < 2; attempt++) {
        const code = await runOnce(args, dir, run, deadline);
        if (stopped) throw stopped;
        if (code !== FIRST_START_RESTART) break;
      }
      const pdf = path.join(out, 'document.pdf');
      if (!fs.existsSync(pdf)) throw new FolioError('UNPROCESSABLE_DOCUMENT', 'LibreOffice could not export this document as PDF');
      const file = fs.readFileSync(pdf);
      return new Uint8Array(file.buffer, file.byteOffset, file.byteLength); // a view: the file's one copy
    } finally {
      killGroup();
      fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    }
  })();

  function runOnce(args: string[], cwd: string, r: SofficeRun, deadline: number): Promise<number | null> {
    return new Promise((resolve, reject) => {
      const left = deadline - performance.now();
      if (stopped) return resolve(null);
      if (left <= 0) {
        stopped = timeoutError(r);
        return resolve(null);
      }
      // Its own process group, so that a kill also takes whatever LibreOffice started.
      child = spawn(path.join(r.installPath ?? DEFAULT_INSTALL_PATH, 'soffice.bin'), args, {
        cwd,
        env: sofficeEnv(cwd),
        stdio: 'ignore',
        detached: true,
      });
      const pid = child.pid;
      const timer = setTimeout(() => {
        stopped ??= timeoutError(r);
        killGroup();
      }, left);
      let poll: NodeJS.Timeout | undefined;
      const sample = () => {
        const rss = pid === undefined ? undefined : readRss(pid);
        if (rss !== undefined && rss > r.maxRssBytes) {
          stopped ??= new FolioError(
            'UNPROCESSABLE_DOCUMENT',
            `The document is too large to process: the conversion exceeded its memory ceiling of ${Math.round(r.maxRssBytes / 1048576)} MB`,
          );
          killGroup();
          return;
        }
        poll = setTimeout(sample, r.memoryPollMs ?? 200);
      };
      poll = setTimeout(sample, r.memoryPollMs ?? 200);
      child.once('error', (e) => {
        clearTimeout(timer);
        clearTimeout(poll);
        reject(new FolioError('SERVICE_UNAVAILABLE', 'The office program could not be started', { retryAfter: 30, cause: e }));
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        clearTimeout(poll);
        resolve(code);
      });
    });
  }

  return {
    result,
    kill: () => {
      stopped ??= new FolioError('SERVICE_UNAVAILABLE', 'The conversion was stopped', { retryAfter: 1 });
      killGroup();
    },
  };
}

function timeoutError(r: SofficeRun): FolioError {
  return new FolioError('CONVERSION_TIMEOUT', `The conversion did not finish within ${Math.round(r.timeoutMs / 1000)} s`);
}
