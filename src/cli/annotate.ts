/** `folio annotate` (fill a template from a JSON or YAML data file) and `folio fields` (list its fields). */
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { FIELD_TYPES, type AnnotateField, type AnnotateReport } from '../annotate/index.js';
import { isRemote, LocalEngines, remoteClient, type GlobalOptions } from './context.js';
import { extensionOf } from './inputs.js';
import { CliError, EXIT_OK, EXIT_USAGE, table } from './output.js';
import { checkOutput, writeOutputFile } from './output-files.js';

export interface AnnotateCommandOptions {
  to: 'docx' | 'pdf';
  out?: string;
  strict?: boolean;
  flatten?: boolean;
  json?: boolean;
  /** Replace an existing output file (`--force`/`--overwrite`); without it the file is kept and nothing is written. */
  force?: boolean;
}

const FIELD_TYPE_SET = new Set<string>(FIELD_TYPES);

/** A value given without a type, in the short `name: value` form: its type from its shape. */
function typeOfValue(value: unknown): AnnotateField['type'] {
  if (typeof value === 'boolean') return 'checkbox';
  if (Array.isArray(value)) return 'table';
  if (value && typeof value === 'object' && 'url' in value) return 'link';
  if (typeof value === 'string' && /^data:image\//.test(value)) return 'image';
  return 'text';
}

/**
 * The fields of a data file. Three shapes: the API's `{ "fields": [...] }`, a bare array of fields, or a
 * map `{ "name": value, ... }` (each entry an `id`, typed from its value: boolean → checkbox, array of rows →
 * table, `{url,text}` → link, data:image URI → image, anything else → text; an entry `{type, value, options}`
 * keeps its own type).
 */
export function fieldsFromData(data: unknown, source: string): AnnotateField[] {
  const list = Array.isArray(data)
    ? data
    : data && typeof data === 'object' && Array.isArray((data as { fields?: unknown }).fields)
      ? (data as { fields: unknown[] }).fields
      : undefined;
  if (list) {
    return list.map((f, i) => {
      if (!f || typeof f !== 'object' || typeof (f as { type?: unknown }).type !== 'string')
        throw new CliError('VALIDATION_ERROR', `${source}: fields[${i}] needs a type and an id or group`, EXIT_USAGE);
      return f as AnnotateField;
    });
  }
  if (data && typeof data === 'object') {
    return Object.entries(data as Record<string, unknown>).map(([id, value]) => {
      if (
        value &&
        typeof value === 'object' &&
        !Array.isArray(value) &&
        'value' in value &&
        FIELD_TYPE_SET.has(String((value as { type?: unknown }).type))
      ) {
        const v = value as { type: AnnotateField['type']; value: unknown; options?: AnnotateField['options'] };
        return { id, type: v.type, value: v.value, ...(v.options ? { options: v.options } : {}) };
      }
      const type = typeOfValue(value);
      return { id, type, value: type === 'text' && typeof value !== 'string' ? String(value) : value };
    });
  }
  throw new CliError('VALIDATION_ERROR', `${source}: expected {"fields": [...]}, an array of fields, or a map of field names to values`, EXIT_USAGE);
}

export function readDataFile(file: string): AnnotateField[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    throw new CliError('FILE_NOT_FOUND', `${file}: cannot be read`, EXIT_USAGE);
  }
  const ext = extensionOf(file);
  let data: unknown;
  try {
    data = ext === 'yaml' || ext === 'yml' ? parseYaml(text) : JSON.parse(text);
  } catch (e) {
    // A .json that is not JSON may still be YAML (JSON is YAML); one more try before giving up.
    try {
      if (ext === 'yaml' || ext === 'yml') throw e;
      data = parseYaml(text);
    } catch {
      throw new CliError(
        'VALIDATION_ERROR',
        `${file}: not valid ${ext === 'yaml' || ext === 'yml' ? 'YAML' : 'JSON or YAML'}: ${(e as Error).message}`,
        EXIT_USAGE,
      );
    }
  }
  return fieldsFromData(data, file);
}

function readTemplate(file: string): Uint8Array {
  try {
    return new Uint8Array(fs.readFileSync(file));
  } catch {
    throw new CliError('FILE_NOT_FOUND', `${file}: cannot be read`, EXIT_USAGE);
  }
}

function reportLines(report: Pick<AnnotateReport, 'filled' | 'unmatched' | 'unfilled'> & { warnings?: string[] }): string {
  const lines = [`filled: ${report.filled.map((f) => `${f.id} (${f.type}${f.occurrences > 1 ? ` ×${f.occurrences}` : ''})`).join(', ') || 'none'}`];
  if (report.unmatched.length) lines.push(`unmatched (in the data, not in the template): ${report.unmatched.join(', ')}`);
  if (report.unfilled.length) lines.push(`unfilled (in the template, no value): ${report.unfilled.join(', ')}`);
  for (const w of report.warnings ?? []) lines.push(`warning: ${w}`);
  return lines.join('\n');
}

export async function annotateCommand(template: string, dataFile: string, opts: AnnotateCommandOptions, g: GlobalOptions): Promise<number> {
  const fields = readDataFile(dataFile);
  const bytes = readTemplate(template);
  const out = opts.out ?? path.join(path.dirname(template), `${path.basename(template, path.extname(template))}.filled.${opts.to}`);
  if (path.resolve(out) === path.resolve(template)) throw new CliError('USAGE', 'the output would replace the template; use --out FILE', EXIT_USAGE);
  // An existing file (or a symlink) at the output is kept without --force: refused before the work is done.
  checkOutput(out, { force: opts.force === true });
  let result: Uint8Array;
  let report: AnnotateReport | Omit<AnnotateReport, 'warnings'>;
  if (isRemote(g)) {
    const client = await remoteClient(g);
    const answer = await client.annotate(bytes, fields as never, { to: opts.to, strict: opts.strict });
    result = Uint8Array.from(Buffer.from(answer.document.base64, 'base64'));
    report = answer.report as AnnotateReport;
  } else {
    const local = new LocalEngines(1, { verbose: g.verbose, inProcess: true });
    try {
      const filled = await local.run('annotate.fill', {
        template: bytes,
        fields,
        strict: opts.strict ?? false,
        flatten: opts.flatten === true || opts.to === 'pdf',
      });
      report = filled.report;
      result = opts.to === 'pdf' ? await (await local.officeEngine()).docxToPdf(filled.docx, { origin: 'folio' }) : filled.docx;
    } finally {
      await local.close();
    }
  }
  await writeOutputFile(out, result, { force: opts.force === true });
  if (opts.json) process.stdout.write(`${JSON.stringify({ output: out, report }, null, 2)}\n`);
  else if (!g.quiet) process.stdout.write(`${reportLines(report)}\nwrote ${out}\n`);
  return EXIT_OK;
}

interface FieldRow {
  id: string | null;
  tag?: string | null;
  alias?: string | null;
  group?: string | null;
  type: string;
  location: string;
  kind?: string;
  occurrences?: number;
}

export async function fieldsCommand(template: string, opts: { json?: boolean }, g: GlobalOptions): Promise<number> {
  const bytes = readTemplate(template);
  let fields: FieldRow[];
  if (isRemote(g)) {
    fields = (await (await remoteClient(g)).annotateFields(bytes)) as FieldRow[];
  } else {
    const local = new LocalEngines(1, { verbose: g.verbose, inProcess: true });
    try {
      fields = await local.run('annotate.fields', { template: bytes });
    } finally {
      await local.close();
    }
  }
  if (opts.json) {
    process.stdout.write(`${JSON.stringify({ fields }, null, 2)}\n`);
    return EXIT_OK;
  }
  if (fields.length === 0) {
    process.stdout.write('no fields\n');
    return EXIT_OK;
  }
  const dash = (v: string | null | undefined) => (v === null || v === undefined || v === '' ? '-' : v);
  process.stdout.write(
    `${table(
      ['id', 'type', 'kind', 'location', 'tag', 'alias', 'group', 'count'],
      fields.map((f) => [dash(f.id), f.type, dash(f.kind), f.location, dash(f.tag), dash(f.alias), dash(f.group), String(f.occurrences ?? 1)]),
    )}\n${fields.length} field${fields.length === 1 ? '' : 's'}\n`,
  );
  return EXIT_OK;
}
