/**
 * Entry of one office worker process (forked by pool.ts). It boots one LibreOfficeKit instance with a
 * private profile, converts one document at a time on request, and reports its RSS so the pool can recycle
 * it. Documents pass through `<worker dir>/io`, a private directory (0700): the pool writes the DOCX there,
 * LibreOffice reads it and writes the PDF beside it, the pool reads that and empties the directory after every
 * conversion (protocol.ts); the pool removes the whole worker directory when this process exits, however it exits.
 */
import fs from 'node:fs';
import path from 'node:path';
import { LibreOfficeKit, DEFAULT_INSTALL_PATH } from './lok.js';
import { fileUrl, writeProfile } from './profile.js';
import { pdfFilterOptions } from './pdf-options.js';
import { minimalDocx } from './minimal-docx.js';
import { openFolioBuiltDocx, validateDocx } from './validate.js';
import { prepareDocx } from './prepare.js';
import { FolioError } from '../errors.js';
import { WORKER_DIR_ENV, WORKER_INSTALL_ENV, type ConvertRequest, type WorkerMessage } from './protocol.js';
import type { DocxToPdfOptions } from './types.js';

/**
 * LOK load options. Batch mode answers every interaction (password prompts, repair questions) with its
 * default, so a broken document fails instead of waiting for a user. Macros are not enabled (LOK's default
 * is never to execute them; the profile forbids them as well).
 */
const LOAD_OPTIONS = 'Batch=true';

function send(message: WorkerMessage): void {
  process.send?.(message);
}

const rss = () => process.memoryUsage().rss;

/** LibreOffice converts the file `input` into `output` (both in the io directory). */
function convert(kit: LibreOfficeKit, input: string, output: string, options: DocxToPdfOptions): 'ok' | 'load' | 'save' {
  let doc;
  try {
    doc = kit.load(fileUrl(input), LOAD_OPTIONS);
  } catch {
    return 'load';
  }
  try {
    if (!doc.saveAs(fileUrl(output), 'pdf', pdfFilterOptions(options))) return 'save';
  } finally {
    doc.destroy();
  }
  return fs.existsSync(output) ? 'ok' : 'save';
}

/** The boot's own conversion (its files are this process's to remove). */
function warmUp(kit: LibreOfficeKit, ioDir: string): void {
  const input = path.join(ioDir, 'warm-up.docx');
  const output = path.join(ioDir, 'warm-up.pdf');
  try {
    fs.writeFileSync(input, minimalDocx('Folio warm-up'), { mode: 0o600 });
    const warm = convert(kit, input, output, {});
    if (warm !== 'ok') throw new Error(`warm-up conversion failed at ${warm}`);
  } finally {
    for (const f of [input, output]) fs.rmSync(f, { force: true });
  }
}

function main(): void {
  const dir = process.env[WORKER_DIR_ENV];
  if (!dir || !process.send) {
    console.error('office worker: must be forked by the pool with ' + WORKER_DIR_ENV);
    process.exit(2);
  }
  // The parent going away (crash, SIGKILL) closes the channel: never outlive it, and since the parent
  // cannot clean up any more, remove the private directory here.
  process.on('disconnect', () => {
    try {
      fs.rmSync(dir, { recursive: true, force: true });
    } finally {
      process.exit(0);
    }
  });
  let kit: LibreOfficeKit;
  const ioDir = path.join(dir, 'io');
  try {
    fs.mkdirSync(ioDir, { mode: 0o700 });
    const profileUrl = writeProfile(dir);
    kit = LibreOfficeKit.init(process.env[WORKER_INSTALL_ENV] || DEFAULT_INSTALL_PATH, profileUrl);
    // Warm-up: the first conversion loads the Writer and PDF export libraries; pay for it before serving.
    warmUp(kit, ioDir);
  } catch (e) {
    send({ type: 'init-failed', message: e instanceof Error ? e.message : String(e) });
    process.exit(3);
  }
  const version = (() => {
    try {
      const info = JSON.parse(kit.versionInfo()) as { ProductVersion?: string; ProductExtension?: string };
      return `${info.ProductVersion ?? ''}${info.ProductExtension ?? ''}`;
    } catch {
      return '';
    }
  })();
  process.on('message', (raw: unknown) => {
    const m = raw as ConvertRequest;
    if (m?.type !== 'convert') return;
    const started = performance.now();
    const options = m.options ?? {};
    // The names are the pool's; basename keeps a malformed one inside the io directory all the same.
    const inputPath = path.join(ioDir, path.basename(m.input));
    const outputPath = path.join(ioDir, path.basename(m.output));
    let lokInput = inputPath;
    const warnings: string[] = [];
    try {
      const docx = fs.readFileSync(inputPath);
      // Here rather than in the pool: unpacking and rewriting a hostile package can take seconds and
      // gigabytes, which the pool's time budget and memory ceiling bound in this process.
      // A DOCX Folio built itself skips the outside-input bounds (types.ts, DocxToPdfOptions.origin).
      const pkg = options.origin === 'folio' ? openFolioBuiltDocx(docx) : validateDocx(docx);
      const prepared = prepareDocx(pkg, options, warnings);
      // Untouched (the common case): LibreOffice reads the pool's file; only a rewritten package is written.
      if (prepared !== docx) {
        lokInput = path.join(ioDir, `prepared-${m.id}.docx`);
        fs.writeFileSync(lokInput, prepared, { mode: 0o600 });
      }
    } catch (e) {
      if (e instanceof FolioError) {
        send({ type: 'rejected', id: m.id, code: e.code, message: e.message, status: e.status, details: e.details, rss: rss() });
      } else {
        // Not a FolioError: a defect of ours (or our own file I/O), not a verdict on the document.
        send({ type: 'failed', id: m.id, stage: 'internal', rss: rss() });
      }
      return;
    }
    let out: ReturnType<typeof convert> | 'internal';
    try {
      out = convert(kit, lokInput, outputPath, options);
    } catch {
      // Our own file I/O (e.g. the temp directory full): not the document's fault, and not a crash.
      out = 'internal';
    }
    const more = warnings.length ? { warnings } : {};
    // LOK 7.4 refuses any DOCX with comments; soffice converts them (protocol.ts 'fallback').
    if (out === 'load' && options.comments !== undefined && options.comments !== 'none')
      send({ type: 'fallback', id: m.id, docx: path.basename(lokInput), rss: rss(), ...more });
    else if (out === 'ok') send({ type: 'result', id: m.id, rss: rss(), millis: performance.now() - started, ...more });
    else send({ type: 'failed', id: m.id, stage: out, rss: rss() });
  });
  send({ type: 'ready', rss: rss(), version });
}

main();
