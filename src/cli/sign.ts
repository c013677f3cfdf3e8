/** `folio sign` (signer from flags, audit events from a file) and `folio verify` (a table, or --json). */
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { FolioError } from '../errors.js';
import { signInputKind } from '../sign/input-kind.js';
import { checkSignFields, type CheckedSignRequest } from '../sign/request-check.js';
import type { AuditEvent } from '../sign/index.js';
import type { VerifyResult } from '../verify/index.js';
import { runBatch } from './batch.js';
import { defaultJobs, isRemote, LocalEngines, remoteClient, type GlobalOptions } from './context.js';
import { expandInputs, extensionOf } from './inputs.js';
import { CliError, EXIT_FAILED, EXIT_OK, EXIT_USAGE, formatError, table } from './output.js';
import { checkOutput, writeOutputFile } from './output-files.js';

export interface SignCommandOptions {
  name: string;
  email: string;
  ip?: string;
  userAgent?: string;
  events?: string;
  eventId?: string;
  certificate: boolean;
  out?: string;
  /** PAdES level; absent: as the API (B-T when TSA_URL is set, else B-B). */
  level?: SignatureLevel;
  /** Replace an existing output file (`--force`/`--overwrite`); without it the file is kept and nothing is written. */
  force?: boolean;
}

export type SignatureLevel = 'B-B' | 'B-T' | 'B-LT' | 'B-LTA';

/** Audit events from a JSON or YAML file: an array, or `{ "auditTrail": [...] }`. */
export function readEvents(file: string): AuditEvent[] {
  let data: unknown;
  try {
    const text = fs.readFileSync(file, 'utf8');
    const ext = extensionOf(file);
    data = ext === 'yaml' || ext === 'yml' ? parseYaml(text) : JSON.parse(text);
  } catch (e) {
    throw new CliError(
      'VALIDATION_ERROR',
      `${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`,
      EXIT_USAGE,
    );
  }
  const list = Array.isArray(data) ? data : (data as { auditTrail?: unknown } | null)?.auditTrail;
  if (!Array.isArray(list) || list.length === 0)
    throw new CliError('VALIDATION_ERROR', `${file}: expected a non-empty array of {type, timestamp, data?} (or {"auditTrail": [...]})`, EXIT_USAGE);
  return list.map((e, i) => {
    const ev = e as { type?: unknown; timestamp?: unknown; data?: unknown };
    if (typeof ev?.type !== 'string' || typeof ev.timestamp !== 'string') {
      throw new CliError('VALIDATION_ERROR', `${file}: auditTrail[${i}] needs a type and an ISO 8601 timestamp`, EXIT_USAGE);
    }
    // The timestamp goes on as written: the API's check (or, locally, the same check: checkSignFields) reads it.
    // Parsed here with Date, 2026-02-30 became 2 March.
    const data = ev.data && typeof ev.data === 'object' ? (ev.data as Record<string, unknown>) : undefined;
    return { type: ev.type, timestamp: ev.timestamp, ...(data ? { data } : {}) };
  });
}

export async function signCommand(file: string, opts: SignCommandOptions, g: GlobalOptions): Promise<number> {
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(fs.readFileSync(file));
  } catch {
    throw new CliError('FILE_NOT_FOUND', `${file}: cannot be read`, EXIT_USAGE);
  }
  const auditTrail: AuditEvent[] = opts.events ? readEvents(opts.events) : [{ type: 'document.signed', timestamp: new Date().toISOString() }];
  const out = opts.out ?? path.join(path.dirname(file), `${path.basename(file, path.extname(file))}.signed.pdf`);
  if (path.resolve(out) === path.resolve(file)) throw new CliError('USAGE', 'the output would replace the input; use --out FILE', EXIT_USAGE);
  // An existing file (or a symlink) at the output is kept without --force: refused before anything is signed.
  checkOutput(out, { force: opts.force === true });
  const signer = {
    name: opts.name.trim(),
    email: opts.email,
    ...(opts.ip ? { ip: opts.ip } : {}),
    ...(opts.userAgent ? { userAgent: opts.userAgent } : {}),
  };
  let pdf: Uint8Array;
  if (isRemote(g)) {
    const answer = await (
      await remoteClient(g)
    ).sign({
      document: bytes,
      signer,
      auditTrail,
      ...(opts.eventId ? { eventId: opts.eventId } : {}),
      certificate: { enabled: opts.certificate },
      ...(opts.level ? { level: opts.level } : {}),
    });
    pdf = Uint8Array.from(Buffer.from(answer.document.base64, 'base64'));
  } else {
    // The API's own check of these fields (its schema and checkSignRequest), before any work is done.
    let checked: CheckedSignRequest;
    try {
      checked = checkSignFields({
        signer,
        auditTrail,
        ...(opts.eventId ? { eventId: opts.eventId } : {}),
        ...(opts.level ? { level: opts.level } : {}),
      });
    } catch (e) {
      if (e instanceof FolioError) throw new CliError(e.code, e.message, EXIT_USAGE, e.details);
      throw e;
    }
    const local = new LocalEngines(1, { verbose: g.verbose, withSigning: 'create', inProcess: true });
    try {
      // As the API: a level this machine cannot give is refused before a DOCX is converted.
      const level = await local.checkSignatureLevel(opts.level);
      const pdfOfDocx = signInputKind(bytes) === 'docx' ? await (await local.officeEngine()).docxToPdf(bytes) : undefined;
      const result = await local.run('sign.seal', {
        document: bytes,
        ...(pdfOfDocx ? { pdfOfDocx } : {}),
        signer: checked.signer,
        auditTrail: checked.auditTrail,
        eventId: opts.eventId,
        auditPages: opts.certificate,
        level,
      });
      if (result.timestampSkipped) process.stderr.write(`warning: signed without a timestamp: ${result.timestampSkipped}\n`);
      pdf = result.pdf;
    } finally {
      await local.close();
    }
  }
  await writeOutputFile(out, pdf, { force: opts.force === true });
  if (!g.quiet) process.stdout.write(`signed by ${signer.name} <${signer.email}>: wrote ${out}\n`);
  return EXIT_OK;
}

type VerifyAnswer = Pick<VerifyResult, 'valid' | 'indication' | 'reason' | 'signatureCount' | 'signer'> & {
  signatures: Array<{
    fieldName: string | null;
    signedAt: string | null;
    signer: { name?: string | null; email?: string | null; subject?: string | null } | null;
    coverage: string;
    integrity: { digestMatches: boolean; signatureValid: boolean };
    certificate: { chainValid: boolean; trusted: boolean; validAtSigningTime: boolean };
    modificationsAfter: { level: string };
    indication: string;
    subIndication?: string;
    issuedByThisService: boolean;
  }>;
  auditTrail?: { hashMatches?: boolean } & Record<string, unknown>;
};

/** The human-readable report of one file. */
export function verifyReport(file: string, r: VerifyAnswer): string {
  const lines = [
    `${file}: ${r.valid ? 'VALID' : 'NOT VALID'} — ${r.indication} (${r.signatureCount} signature${r.signatureCount === 1 ? '' : 's'}) ${r.reason}`,
  ];
  if (r.signatures.length) {
    const yes = (b: boolean) => (b ? 'yes' : 'NO');
    lines.push(
      table(
        ['#', 'signer', 'signed at', 'coverage', 'intact', 'crypto', 'chain', 'trusted', 'changes after', 'indication'],
        r.signatures.map((s, i) => [
          String(i + 1),
          s.signer?.name || s.signer?.email
            ? `${s.signer?.name ?? ''}${s.signer?.email ? ` <${s.signer.email}>` : ''}`.trim()
            : (s.signer?.subject ?? '?'),
          s.signedAt ?? '-',
          s.coverage,
          yes(s.integrity.digestMatches),
          yes(s.integrity.signatureValid),
          yes(s.certificate.chainValid),
          s.certificate.trusted ? (s.issuedByThisService ? 'yes (this service)' : 'yes') : 'no',
          s.modificationsAfter.level,
          `${s.indication}${s.subIndication ? ` / ${s.subIndication}` : ''}`,
        ]),
      ),
    );
  }
  if (r.auditTrail) {
    const a = r.auditTrail as { signer?: { name?: string; email?: string }; auditTrail?: unknown[]; signedAt?: string; hashMatches?: boolean };
    const who = a.signer ? `${a.signer.name ?? ''}${a.signer.email ? ` <${a.signer.email}>` : ''}`.trim() : '';
    lines.push(
      `audit trail: ${who ? `signed by ${who}` : 'embedded'}${a.signedAt ? ` at ${a.signedAt}` : ''}, ${Array.isArray(a.auditTrail) ? a.auditTrail.length : 0} event(s); document hash ${a.hashMatches ? 'matches' : 'DOES NOT match'}`,
    );
  }
  return lines.join('\n');
}

export async function verifyCommand(args: string[], opts: { json?: boolean }, g: GlobalOptions): Promise<number> {
  const inputs = await expandInputs(args, (name) => extensionOf(name) === 'pdf');
  const jobs = g.jobs ?? defaultJobs();
  const results: Array<{ file: string; result?: VerifyAnswer; error?: string }> = [];
  let verify: (file: string) => Promise<VerifyAnswer>;
  let close = async () => {};
  if (isRemote(g)) {
    const client = await remoteClient(g);
    verify = async (file) => (await client.verify({ path: file })) as unknown as VerifyAnswer;
  } else {
    const local = new LocalEngines(jobs, { verbose: g.verbose, withSigning: 'ifPresent', inProcess: inputs.length === 1 });
    close = () => local.close();
    verify = async (file) => local.run('verify.pdf', { bytes: new Uint8Array(await fs.promises.readFile(file)) });
  }
  try {
    if (inputs.length === 1) {
      const input = inputs[0]!;
      try {
        results.push({ file: input.display, result: await verify(input.absolute) });
      } catch (e) {
        results.push({ file: input.display, error: formatError(e) });
      }
    } else {
      const byFile = new Map<string, { file: string; result?: VerifyAnswer; error?: string }>();
      const summary = await runBatch(
        inputs.map((input) => ({ input, label: input.display })),
        async ({ input }) => {
          const result = await verify(input.absolute);
          byFile.set(input.display, { file: input.display, result });
          return { note: result.valid ? 'valid' : `NOT VALID (${result.indication})` };
        },
        { jobs, verb: 'verified', quiet: true },
      );
      for (const f of summary.failed) byFile.set(f.label, { file: f.label, error: f.error });
      for (const input of inputs) results.push(byFile.get(input.display)!);
    }
  } finally {
    await close();
  }
  if (opts.json) {
    const body = results.map((r) => (r.error ? { file: r.file, error: r.error } : { file: r.file, ...r.result }));
    process.stdout.write(`${JSON.stringify(inputs.length === 1 ? body[0] : body, null, 2)}\n`);
  } else {
    for (const r of results) process.stdout.write(`${r.error ? `${r.file}: ERROR ${r.error}` : verifyReport(r.file, r.result!)}\n`);
    if (results.length > 1) {
      const bad = results.filter((r) => !r.result?.valid);
      process.stdout.write(
        `${results.length - bad.length} of ${results.length} files valid${bad.length ? `; not valid: ${bad.map((r) => r.file).join(', ')}` : ''}\n`,
      );
    }
  }
  return results.every((r) => r.result?.valid === true) ? EXIT_OK : EXIT_FAILED;
}
