/**
 * `folio merge`: PDF and DOCX files → one PDF, in the order given, as POST /v1/merge does. Local mode converts
 * DOCX inputs in the LibreOffice pool and merges in the engine pool (a thread bounded in time and memory, as
 * in the API); remote mode sends the files through FolioClient.merge. Warnings (a signed input merged as
 * content) go to stderr; a failing input is named by its index and file name, as the API names it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isFolioError } from '../errors.js';
import { isZip } from '../formats/sniff.js';
import { inputError, type MergeInput } from '../merge/engine.js';
import { MAX_MERGE_INPUTS, MIN_MERGE_INPUTS } from '../merge/schema.js';
import { isRemote, LocalEngines, remoteClient, type GlobalOptions } from './context.js';
import { expandInputs, extensionOf } from './inputs.js';
import { CliError, EXIT_OK, EXIT_USAGE, formatBytes } from './output.js';
import { checkOutput, writeOutputFile } from './output-files.js';

export interface MergeCommandOptions {
  out: string;
  /** The i-th title names the i-th input's outline entry. */
  titles: string[];
  /** The i-th prefix goes before the i-th input's page labels. */
  labelPrefixes: string[];
  outline: boolean;
  pageLabels: boolean;
  /** Replace an existing output file (`--force`/`--overwrite`); without it the file is kept and nothing is written. */
  force?: boolean;
}

const MERGE_EXTENSIONS = new Set(['pdf', 'docx', 'docm', 'dotx']);

/** Files as given (the same file may come twice, e.g. a separator page); folders and globs in name order. */
async function mergeInputs(args: string[]): Promise<string[]> {
  const files: string[] = [];
  for (const arg of args) {
    if (fs.statSync(arg, { throwIfNoEntry: false })?.isFile()) files.push(path.resolve(arg));
    else for (const f of await expandInputs([arg], (name) => MERGE_EXTENSIONS.has(extensionOf(name)))) files.push(f.absolute);
  }
  return files;
}

export async function mergeCommand(args: string[], opts: MergeCommandOptions, g: GlobalOptions): Promise<number> {
  const files = await mergeInputs(args);
  if (files.length < MIN_MERGE_INPUTS || files.length > MAX_MERGE_INPUTS)
    throw new CliError('USAGE', `a merge takes ${MIN_MERGE_INPUTS} to ${MAX_MERGE_INPUTS} files; ${files.length} given`, EXIT_USAGE);
  if (opts.titles.length > files.length) throw new CliError('USAGE', `${opts.titles.length} --title for ${files.length} files`, EXIT_USAGE);
  if (opts.labelPrefixes.length > files.length)
    throw new CliError('USAGE', `${opts.labelPrefixes.length} --label-prefix for ${files.length} files`, EXIT_USAGE);
  const out = path.resolve(opts.out);
  if (files.includes(out)) throw new CliError('USAGE', `${opts.out}: the output would replace an input; use another --out`, EXIT_USAGE);
  // An existing file (or a symlink) at the output is kept without --force: refused before anything is merged.
  checkOutput(out, { force: opts.force === true });
  const items = files.map((file, i) => ({ file, fileName: path.basename(file), title: opts.titles[i], labelPrefix: opts.labelPrefixes[i] }));

  let pdf: Uint8Array;
  let pageCount: number;
  let warnings: string[];
  if (isRemote(g)) {
    const client = await remoteClient(g);
    const result = await client.merge(
      items.map((item) => ({
        document: { path: item.file },
        fileName: item.fileName,
        ...(item.title !== undefined ? { title: item.title } : {}),
        ...(item.labelPrefix !== undefined ? { labelPrefix: item.labelPrefix } : {}),
      })),
      { outline: opts.outline, pageLabels: opts.pageLabels },
    );
    ({ bytes: pdf, pageCount, warnings } = result);
  } else {
    // One merge: one engine thread (the API's bounds) and, when a DOCX is among the inputs, one LibreOffice worker.
    const local = new LocalEngines(1, { verbose: g.verbose });
    try {
      const inputs: MergeInput[] = [];
      for (const [index, item] of items.entries()) {
        let bytes: Uint8Array;
        try {
          bytes = new Uint8Array(await fs.promises.readFile(item.file));
        } catch {
          throw new CliError('FILE_NOT_FOUND', `${item.file}: cannot be read`, EXIT_USAGE);
        }
        const fromDocx = isZip(bytes);
        if (fromDocx) {
          try {
            bytes = await (await local.officeEngine()).docxToPdf(bytes);
          } catch (e) {
            // As the API answers: the failing input named by index and file name.
            if (isFolioError(e) && (e.code === 'UNPROCESSABLE_DOCUMENT' || e.code === 'INVALID_FILE_FORMAT'))
              throw inputError(index, item.fileName, `the DOCX could not be converted (${e.message})`, e.code);
            throw e;
          }
        }
        inputs.push({ pdf: bytes, fileName: item.fileName, title: item.title, labelPrefix: item.labelPrefix, fromDocx });
      }
      const result = await local.run('merge.pdfs', { inputs, options: { outline: opts.outline, pageLabels: opts.pageLabels } });
      ({ pdf, pageCount, warnings } = result);
    } finally {
      await local.close();
    }
  }
  for (const w of warnings) process.stderr.write(`warning: ${w}\n`);
  await writeOutputFile(out, pdf, { force: opts.force === true });
  if (!g.quiet) process.stdout.write(`merged ${files.length} files (${pageCount} pages, ${formatBytes(pdf.length)}): wrote ${opts.out}\n`);
  return EXIT_OK;
}
