/** `folio convert`: files, folders and globs to PDF, DOCX, Markdown, HTML or page previews, locally or through the API. */
import fs from 'node:fs';
import path from 'node:path';
import { FolioError } from '../errors.js';
import { inferSourceFormat, type SourceFormat, type TargetFormat } from '../convert/index.js';
import type { CommentsMode, DocxToPdfOptions } from '../office/types.js';
import { runBatch, printSummary, type BatchItem } from './batch.js';
import { defaultJobs, isRemote, LocalEngines, remoteClient, type GlobalOptions } from './context.js';
import { expandInputs, extensionOf, outputPath, type InputFile } from './inputs.js';
import { CliError, EXIT_FAILED, EXIT_OK, EXIT_USAGE, formatBytes } from './output.js';
import { checkOutput, OutputSkipped, writeOutputFile } from './output-files.js';
import { isPreviewFormat, localPreview, previewExtension, previewRequest } from './preview.js';
import type { PreviewFormat, PreviewRequest } from '../preview/index.js';

export interface ConvertCommandOptions {
  to: TargetFormat | PreviewFormat;
  /** 'pdf' for page previews only (as the API's `from`). */
  from?: SourceFormat | 'pdf';
  /** Page previews (to png|jpeg): image width in px and pages such as "1-3,5", as typed (checked as the API does). */
  width?: string;
  pages?: string;
  out?: string;
  trackedChanges?: 'markup' | 'accept' | 'reject';
  pdfa?: '1b' | '2b' | '3b';
  tagged?: boolean;
  /** DOCX → PDF: Word comments left out, in a column beside the text, or as PDF comment annotations. */
  comments?: CommentsMode;
  pageSize?: 'A4' | 'Letter';
  /** DOCX → md|html: images as data URIs or dropped. */
  images?: 'inline' | 'drop';
  /** Replace existing output files (`--force`/`--overwrite`); without it they are kept and the input skipped. */
  force?: boolean;
}

/** Extensions taken from a folder: what the API can read. */
export const SOURCE_EXTENSIONS: Record<SourceFormat, string[]> = {
  docx: ['docx', 'docm', 'dotx'],
  md: ['md', 'markdown', 'mdown', 'mkd', 'mkdn', 'mdwn'],
  html: ['html', 'htm', 'xhtml'],
};

const PAIRS = new Set(['docx>pdf', 'docx>md', 'docx>html', 'md>docx', 'html>docx', 'md>pdf', 'html>pdf']);

function checkPair(from: SourceFormat, to: string): void {
  if (!PAIRS.has(`${from}>${to}`)) {
    throw new FolioError(
      'UNSUPPORTED_CONVERSION',
      `Conversion from ${from} to ${to} is not supported (docx→pdf, docx→md, docx→html, md→docx, html→docx, md→pdf, html→pdf)`,
    );
  }
}

interface Job extends BatchItem {
  input: InputFile;
  output: string;
  /** Why this input is skipped before any work (its output would leave --out). */
  skip?: OutputSkipped;
}

export async function convertCommand(args: string[], opts: ConvertCommandOptions, g: GlobalOptions): Promise<number> {
  if (opts.comments === 'annotations' && opts.pdfa) {
    // As the API answers 400: PDF/A forbids annotations without appearance streams, which these are.
    throw new CliError('USAGE', '--comments annotations cannot be combined with --pdfa (PDF/A forbids them); use --comments margin', EXIT_USAGE);
  }
  const preview: { format: PreviewFormat; req: PreviewRequest } | undefined = isPreviewFormat(opts.to)
    ? { format: opts.to, req: previewRequest(opts.width, opts.pages) }
    : undefined;
  if (!preview && (opts.width !== undefined || opts.pages !== undefined)) {
    throw new CliError('USAGE', '--width and --pages apply to page previews only (--to png|jpeg)', EXIT_USAGE);
  }
  const jobs = g.jobs ?? defaultJobs();
  // Previews are made of DOCX and PDF files (a folder contributes those); conversions of the API's sources.
  const sources = (from: SourceFormat | 'pdf') => (from === 'pdf' ? ['pdf'] : SOURCE_EXTENSIONS[from]);
  const accepted = new Set(opts.from ? sources(opts.from) : preview ? [...SOURCE_EXTENSIONS.docx, 'pdf'] : Object.values(SOURCE_EXTENSIONS).flat());
  const ext = preview ? previewExtension(preview.format, preview.req) : opts.to;
  // What a folder contributes: sources of the right kind that are not already the target format.
  const inputs = await expandInputs(args, (name) => accepted.has(extensionOf(name)) && extensionOf(name) !== ext);
  const items: Job[] = inputs.map((input) => {
    try {
      return { input, label: input.display, output: outputPath(input, ext, opts.out) };
    } catch (e) {
      if (e instanceof OutputSkipped) return { input, label: input.display, output: '', skip: e };
      throw e;
    }
  });
  const outputs = new Map<string, string>();
  for (const item of items) {
    if (item.skip) continue;
    if (path.resolve(item.output) === item.input.absolute)
      throw new CliError('USAGE', `${item.label}: the output would replace the input; use --out DIR`, EXIT_USAGE);
    const other = outputs.get(item.output);
    if (other)
      throw new CliError(
        'USAGE',
        `${other} and ${item.label} would both be written to ${item.output}; use --out DIR or convert them apart`,
        EXIT_USAGE,
      );
    outputs.set(item.output, item.label);
  }

  const pdfOptions: DocxToPdfOptions = {
    trackedChanges: opts.trackedChanges ?? 'markup',
    pdfa: opts.pdfa,
    tagged: opts.tagged,
    comments: opts.comments ?? 'none',
  };
  let work: (job: Job) => Promise<Uint8Array>;
  let close = async () => {};
  if (isRemote(g)) {
    const client = await remoteClient(g);
    work = async (job) => {
      // Streamed from disk by the client (re-read only if it retries after a 429/503).
      const result = await client.convert(
        { path: job.input.absolute },
        {
          from: opts.from,
          to: opts.to,
          width: opts.width,
          pages: opts.pages,
          trackedChanges: opts.trackedChanges,
          pdfa: opts.pdfa,
          tagged: opts.tagged,
          comments: opts.comments,
          pageSize: opts.pageSize,
          images: opts.images,
          filename: path.basename(job.input.absolute),
        },
      );
      // The answer's X-Folio-Warnings, as local mode prints them.
      if (!g.quiet) for (const w of result.warnings ?? []) process.stderr.write(`${job.label}: warning: ${w}\n`);
      return result.bytes;
    };
  } else {
    const local = new LocalEngines(jobs, { verbose: g.verbose, inProcess: items.length === 1 });
    close = () => local.close();
    // Boot LibreOffice while the first documents are read, when PDFs are wanted.
    if (opts.to === 'pdf') local.officeEngine().catch(() => undefined);
    work = async (job) => {
      const bytes = new Uint8Array(await fs.promises.readFile(job.input.absolute));
      // What a conversion could not keep (the API's X-Folio-Warnings), on stderr unless --quiet.
      const warnings: string[] = [];
      const warn = () => {
        if (!g.quiet) for (const w of new Set(warnings)) process.stderr.write(`${job.label}: warning: ${w}\n`);
      };
      if (preview) return localPreview(bytes, job.input.absolute, opts.from, preview.format, preview.req, () => local.officeEngine());
      if (opts.from === 'pdf') throw new FolioError('UNSUPPORTED_CONVERSION', `A PDF source is for page previews only (--to png|jpeg)`);
      const from = opts.from ?? inferSourceFormat(job.input.absolute, bytes);
      if (!from) throw new FolioError('VALIDATION_ERROR', 'Cannot tell the format from the name or content; pass --from docx|md|html');
      checkPair(from, opts.to);
      if (from === 'docx' && (opts.to === 'md' || opts.to === 'html')) {
        const input = { to: opts.to, bytes, images: opts.images ?? 'inline', outputMaxBytes: local.config.outputMaxBytes } as const;
        const result = await local.run('convert.fromDocx', input);
        warnings.push(...result.warnings);
        warn();
        return result.bytes;
      }
      if (from === 'docx') {
        const office = await local.officeEngine();
        const pdf = await office.docxToPdf(bytes, pdfOptions, { warnings });
        warn();
        return pdf;
      }
      const made = await local.run('convert.toDocx', { from, bytes, pageSize: opts.pageSize ?? 'A4' });
      warnings.push(...made.warnings);
      if (opts.to === 'docx') {
        warn();
        return made.docx;
      }
      const office = await local.officeEngine();
      // Composed by Folio itself from Markdown/HTML (as the API does: DocxToPdfOptions.origin).
      const pdf = await office.docxToPdf(made.docx, { ...pdfOptions, origin: 'folio' }, { warnings });
      warn();
      return pdf;
    };
  }

  try {
    const summary = await runBatch(
      items,
      async (job) => {
        if (job.skip) throw job.skip;
        // Outputs stay in --out (or the input's folder), existing files are kept without --force, and a
        // symlink at the output path is never written through — checked before converting, enforced on write.
        const rules = { force: opts.force === true, root: opts.out ?? path.dirname(job.input.absolute) };
        checkOutput(job.output, rules);
        const bytes = await work(job);
        await writeOutputFile(job.output, bytes, rules);
        return { note: `→ ${job.output} (${formatBytes(bytes.length)})` };
      },
      { jobs, verb: 'converted', quiet: g.quiet },
    );
    printSummary(summary, 'converted');
    return summary.failed.length || summary.skipped.length ? EXIT_FAILED : EXIT_OK;
  } finally {
    await close();
  }
}
