#!/usr/bin/env node
/**
 * `folio`: the command line of Folio. Local mode (the default) runs the engines in this process — no server,
 * no key; `--server URL` (or FOLIO_SERVER) sends the same work to a running API through @folio/client.
 * Commands load their engines on demand, so `--help` answers at once.
 */
import { Argument, Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import type { GlobalOptions } from './context.js';
import type { SignCommandOptions } from './sign.js';
import { CliError, EXIT_FAILED, EXIT_USAGE, formatError } from './output.js';

const VERSION = '0.9.0';

function positiveInt(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 256) throw new InvalidArgumentError('must be an integer from 1 to 256');
  return Number(value);
}

/** A repeatable option's values, in the order given. */
function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

function examples(lines: string[]): string {
  return `\nExamples:\n${lines.map((l) => `  ${l}`).join('\n')}\n`;
}

/** The options every command shares (program options, accepted before or after the command name). */
function globals(cmd: Command): GlobalOptions {
  return cmd.optsWithGlobals() as GlobalOptions;
}

let exitCode = 0;
const run =
  (fn: (...args: never[]) => Promise<number>) =>
  async (...args: unknown[]): Promise<void> => {
    exitCode = await (fn as (...a: unknown[]) => Promise<number>)(...args);
  };

export function buildProgram(): Command {
  const program = new Command('folio')
    .description(
      'Folio on the command line: convert, fill templates, sign, verify and merge documents — in this process (local) or through a Folio server (--server).',
    )
    .version(VERSION, '-V, --version')
    .addOption(new Option('-s, --server <url>', 'use a Folio API at this URL (remote mode); without it the engines run locally').env('FOLIO_SERVER'))
    .addOption(new Option('-k, --key <apiKey>', 'API key for remote mode (default: FOLIO_API_KEY)'))
    .addOption(
      new Option('-j, --jobs <n>', 'documents processed at once (default: the office pool size, OFFICE_WORKERS or one per CPU)').argParser(
        positiveInt,
      ),
    )
    .option('-v, --verbose', 'log what the engines do (to stderr)')
    .option('-q, --quiet', 'print only errors and the summary')
    .showHelpAfterError('(add --help for usage)')
    .exitOverride()
    .addHelpText(
      'after',
      examples([
        'folio convert report.docx                      # → report.pdf beside it, LibreOffice in this process',
        "folio convert docs/ 'notes/**/*.md' --to pdf --out build/ -j 4",
        'folio fields invoice.docx',
        'folio annotate invoice.docx data.yaml --to pdf -o invoice.pdf',
        'folio sign contract.pdf --name "Ada Lovelace" --email ada@example.com --events events.json',
        'folio verify contract.signed.pdf && echo valid',
        'folio merge cover.docx contract.pdf -o bundle.pdf',
        'FOLIO_API_KEY=folio_sk_… folio --server http://localhost:8080 convert a.docx',
        'folio serve                                    # the API on :8080 and the ingest on :8081',
        '',
        'Exit codes: 0 success; 1 a document failed or a signature is not valid; 2 bad usage or configuration.',
      ]),
    );

  program
    .command('convert')
    .description('Convert files, folders and globs: DOCX → PDF, Markdown or HTML; Markdown/HTML → DOCX or PDF; DOCX/PDF → page previews (PNG, JPEG)')
    .argument('<inputs...>', 'files, folders (their .docx/.md/.html files, for previews .docx/.pdf, recursively) or quoted globs')
    .addOption(
      new Option('-t, --to <format>', 'target format (png, jpeg: page previews)')
        .choices(['pdf', 'docx', 'md', 'html', 'png', 'jpeg'])
        .default('pdf'),
    )
    .addOption(
      new Option('-f, --from <format>', 'source format (default: from each file name and content; pdf for previews only)').choices([
        'docx',
        'md',
        'html',
        'pdf',
      ]),
    )
    .option('--width <px>', 'previews: image width in pixels, at most 4000 (default 800)')
    .option('--pages <list>', 'previews: pages such as 1-3,5, at most 50 (default 1); several pages → a ZIP of page-<n>.png|jpg')
    .option('-o, --out <dir>', 'write results here, mirroring the folders given (default: beside each input); nothing is written outside it')
    .option('--force', 'replace output files that exist already (default: keep them, skip, exit 1); a symlink there is replaced, never followed')
    .option('--overwrite', 'the same as --force')
    .addOption(
      new Option('--tracked-changes <mode>', 'DOCX → PDF: show tracked changes as markup, or print the document with them accepted or rejected')
        .choices(['markup', 'accept', 'reject'])
        .default('markup'),
    )
    .addOption(new Option('--pdfa <level>', 'produce PDF/A').choices(['1b', '2b', '3b']))
    .option('--tagged', 'produce a tagged (accessible) PDF')
    .addOption(
      new Option(
        '--comments <mode>',
        'DOCX → PDF: Word comments left out (none), printed in a column added right of each page (margin), or as PDF comment annotations (annotations: several seconds slower, not with --pdfa)',
      )
        .choices(['none', 'margin', 'annotations'])
        .default('none'),
    )
    .addOption(new Option('--images <mode>', 'DOCX → md/html: images as data URIs (inline) or left out (drop)').choices(['inline', 'drop']))
    .addOption(new Option('--page-size <size>', 'page size of a DOCX made from Markdown/HTML (local mode)').choices(['A4', 'Letter']).default('A4'))
    .addHelpText(
      'after',
      examples([
        'folio convert contract.docx                          # → contract.pdf',
        'folio convert contract.docx --tracked-changes accept --pdfa 2b --out final/',
        'folio convert review.docx --comments margin           # Word comments printed beside the text',
        'folio convert manuals/ --out pdf/ -j 4                # every .docx/.md/.html under manuals/',
        "folio convert 'notes/**/*.md' --to docx --out docx/",
        'folio convert page.txt --from md --to docx',
        'folio convert report.docx --to md --images drop     # → report.md',
        'folio convert report.pdf --to png --width 400        # → report.png, the first page 400 px wide',
        'folio convert report.docx --to jpeg --pages 1-3,5    # → report.zip: page-1.jpg … page-5.jpg',
        'folio --server http://localhost:8080 --key $FOLIO_API_KEY convert a.docx b.md',
        '',
        'Each document is written as soon as it is done; a bad one is reported and the rest go on. The run ends',
        'with a summary and exits 1 when any document failed. On a terminal a progress bar shows counts,',
        'throughput and ETA; otherwise one line per document.',
        'Outputs stay inside --out (or beside each input); an existing output file, or a symlink there, is kept',
        'and the document skipped unless --force; skipped documents are named on stderr and the run exits 1.',
      ]),
    )
    .action(
      run(async (inputs: string[], opts: Record<string, unknown>, cmd: Command) => {
        const { convertCommand } = await import('./convert.js');
        return convertCommand(
          inputs,
          {
            to: opts.to as 'pdf' | 'docx' | 'md' | 'html' | 'png' | 'jpeg',
            width: opts.width as string | undefined,
            pages: opts.pages as string | undefined,
            images: opts.images as 'inline' | 'drop' | undefined,
            from: opts.from as 'docx' | 'md' | 'html' | 'pdf' | undefined,
            out: opts.out as string | undefined,
            trackedChanges: opts.trackedChanges as 'markup' | 'accept' | 'reject',
            pdfa: opts.pdfa as '1b' | '2b' | '3b' | undefined,
            tagged: opts.tagged === true ? true : undefined,
            comments: opts.comments as 'none' | 'margin' | 'annotations',
            pageSize: opts.pageSize as 'A4' | 'Letter',
            force: opts.force === true || opts.overwrite === true,
          },
          globals(cmd),
        );
      }),
    );

  program
    .command('annotate')
    .description('Fill a DOCX template (content controls and {{placeholders}}) from a JSON or YAML data file')
    .argument('<template>', 'the DOCX template')
    .argument('<data>', 'JSON or YAML: {"fields": [...]} as the API takes, an array of fields, or a map of field names to values')
    .addOption(new Option('-t, --to <format>', 'output format').choices(['docx', 'pdf']).default('docx'))
    .option('-o, --out <file>', 'output file (default: <template>.filled.<format> beside the template)')
    .option('--force', 'replace output files that exist already (default: keep them, skip, exit 1); a symlink there is replaced, never followed')
    .option('--overwrite', 'the same as --force')
    .option('--strict', 'fail when a field of the data matches nothing in the template')
    .option('--flatten', 'replace the content controls by their content (always for PDF)')
    .option('--json', 'print the fill report as JSON')
    .addHelpText(
      'after',
      examples([
        'folio annotate offer.docx data.yaml                 # → offer.filled.docx',
        'folio annotate offer.docx data.json --to pdf -o offer.pdf --strict',
        '',
        'data.yaml, short form (type from the value: text, true/false → checkbox, rows → table, {url,text} → link):',
        '  customer: Ada Lovelace',
        '  accepted: true',
        '  items: [["Widget", "2"], ["Gadget", "1"]]',
        '  signedOn: { type: date, value: 2026-01-31 }',
        'or the API form: { fields: [ { id: customer, type: text, value: Ada } ] }',
      ]),
    )
    .action(
      run(async (template: string, data: string, opts: Record<string, unknown>, cmd: Command) => {
        const { annotateCommand } = await import('./annotate.js');
        return annotateCommand(
          template,
          data,
          {
            to: opts.to as 'docx' | 'pdf',
            out: opts.out as string | undefined,
            strict: opts.strict === true,
            flatten: opts.flatten === true,
            json: opts.json === true,
            force: opts.force === true || opts.overwrite === true,
          },
          globals(cmd),
        );
      }),
    );

  program
    .command('fields')
    .description("List a template's fields (content controls and placeholders)")
    .argument('<template>', 'the DOCX template')
    .option('--json', 'print JSON ({"fields": [...]} as the API answers)')
    .addHelpText('after', examples(['folio fields invoice.docx', 'folio fields invoice.docx --json | jq -r ".fields[].id"']))
    .action(
      run(async (template: string, opts: { json?: boolean }, cmd: Command) => {
        const { fieldsCommand } = await import('./annotate.js');
        return fieldsCommand(template, opts, globals(cmd));
      }),
    );

  program
    .command('sign')
    .description('Sign a PDF or DOCX: audit-trail page, embedded audit trail and a PAdES signature')
    .argument('<file>', 'PDF or DOCX (a DOCX is converted to PDF first)')
    .requiredOption('--name <name>', "signer's name")
    .requiredOption('--email <email>', "signer's e-mail")
    .option('--ip <address>', "signer's IP address (for the audit trail)")
    .option('--user-agent <text>', "signer's user agent (for the audit trail)")
    .option('--events <file>', 'audit events, JSON or YAML: [{"type","timestamp","data"?}] (default: one "document.signed" event now)')
    .option('--event-id <id>', 'your reference for this signing')
    .option('--no-certificate', 'no audit-trail page (the signature and embedded audit data only)')
    .addOption(
      new Option(
        '--level <level>',
        'PAdES level: B-B signature only; B-T + RFC 3161 timestamp; B-LT + chain and OCSP/CRL (/DSS); B-LTA + document timestamp ' +
          '(default: B-T when TSA_URL is set, else B-B; levels above B-B need TSA_URL)',
      ).choices(['B-B', 'B-T', 'B-LT', 'B-LTA']),
    )
    .option('-o, --out <file>', 'output file (default: <file>.signed.pdf beside the input)')
    .option('--force', 'replace output files that exist already (default: keep them, skip, exit 1); a symlink there is replaced, never followed')
    .option('--overwrite', 'the same as --force')
    .addHelpText(
      'after',
      examples([
        'folio sign contract.pdf --name "Ada Lovelace" --email ada@example.com',
        'folio sign offer.docx --name "Ada Lovelace" --email ada@example.com --events events.json -o offer.signed.pdf',
        'TSA_URL=https://tsa.example.com folio sign contract.pdf --name "Ada Lovelace" --email ada@example.com --level B-LTA',
        '',
        'events.json: [{"type":"document.viewed","timestamp":"2026-01-31T10:00:00Z"},',
        '              {"type":"document.signed","timestamp":"2026-01-31T10:02:00Z","data":{"method":"typed"}}]',
        'Local mode signs with SIGNING_P12, else the identity generated once in DATA_DIR (./data/signing), as the server does.',
        "Local mode reads TSA_URL (and URL_FETCH_ALLOWLIST for a SIGNING_P12's OCSP/CRL) from the environment; remote mode uses the server's.",
      ]),
    )
    .action(
      run(async (file: string, opts: Record<string, unknown>, cmd: Command) => {
        const { signCommand } = await import('./sign.js');
        return signCommand(
          file,
          {
            name: opts.name as string,
            email: opts.email as string,
            ip: opts.ip as string | undefined,
            userAgent: opts.userAgent as string | undefined,
            events: opts.events as string | undefined,
            eventId: opts.eventId as string | undefined,
            certificate: opts.certificate !== false,
            out: opts.out as string | undefined,
            level: opts.level as SignCommandOptions['level'],
            force: opts.force === true || opts.overwrite === true,
          },
          globals(cmd),
        );
      }),
    );

  program
    .command('verify')
    .description("Verify PDFs' signatures; exits 0 only when every signature of every file is valid")
    .argument('<inputs...>', 'PDF files, folders or globs')
    .option('--json', "print the API's verify answer as JSON (an array for several files)")
    .addHelpText(
      'after',
      examples([
        'folio verify contract.signed.pdf',
        'folio verify signed/ --json > report.json',
        'folio verify a.pdf || echo "not valid"',
        '',
        "Local mode trusts this machine's Folio identity (DATA_DIR/signing or SIGNING_P12) and TRUST_ANCHORS.",
      ]),
    )
    .action(
      run(async (inputs: string[], opts: { json?: boolean }, cmd: Command) => {
        const { verifyCommand } = await import('./sign.js');
        return verifyCommand(inputs, opts, globals(cmd));
      }),
    );

  program
    .command('merge')
    .description('Merge 2–50 PDF and DOCX files into one PDF, in the order given, with an outline entry and page labels per input')
    .argument('<inputs...>', 'PDF and DOCX files in order (a file may be given twice); folders and quoted globs add their files in name order')
    .requiredOption('-o, --out <file>', 'the merged PDF')
    .option('--force', 'replace output files that exist already (default: keep them, skip, exit 1); a symlink there is replaced, never followed')
    .option('--overwrite', 'the same as --force')
    .option(
      '--title <title>',
      'outline entry of the next input in order (repeat: the 1st --title names the 1st input, …; default: the file name)',
      collect,
    )
    .option('--label-prefix <prefix>', "prefix of the next input's page labels, e.g. A- (repeat as --title)", collect)
    .option('--no-outline', 'no outline (bookmark) entries; the inputs keep none of their own')
    .option('--no-page-labels', 'no page labels: pages are numbered 1…n straight through')
    .addHelpText(
      'after',
      examples([
        'folio merge cover.docx contract.pdf annex.pdf -o bundle.pdf',
        'folio merge a.pdf b.pdf --title "Offer" --title "Terms" --label-prefix O- --label-prefix T- -o offer.pdf',
        "folio merge 'scans/*.pdf' -o scans.pdf --no-outline --no-page-labels",
        'folio --server http://localhost:8080 --key $FOLIO_API_KEY merge a.pdf b.docx -o out.pdf',
        '',
        'DOCX files are converted to PDF first. A signed input is merged as content: its signature does not survive,',
        'and a warning says so on stderr. A damaged or encrypted input fails the merge, named by index and file name.',
      ]),
    )
    .action(
      run(async (inputs: string[], opts: Record<string, unknown>, cmd: Command) => {
        const { mergeCommand } = await import('./merge.js');
        return mergeCommand(
          inputs,
          {
            out: opts.out as string,
            titles: (opts.title as string[] | undefined) ?? [],
            labelPrefixes: (opts.labelPrefix as string[] | undefined) ?? [],
            outline: opts.outline !== false,
            pageLabels: opts.pageLabels !== false,
            force: opts.force === true || opts.overwrite === true,
          },
          globals(cmd),
        );
      }),
    );

  const keys = program
    .command('keys')
    .description('API keys of a Folio server (remote only): register, verify, list, revoke')
    .addHelpText(
      'after',
      examples([
        'folio --server http://localhost:8080 keys register you@example.com',
        'folio --server http://localhost:8080 keys verify you@example.com 123456',
        'folio --server http://localhost:8080 --key $FOLIO_API_KEY keys list',
        'folio --server http://localhost:8080 keys revoke key_…',
      ]),
    );
  keys
    .command('register')
    .description('E-mail a 6-digit code to this address')
    .argument('<email>')
    .addHelpText('after', examples(['folio --server http://localhost:8080 keys register you@example.com']))
    .action(
      run(async (email: string, _opts: unknown, cmd: Command) => {
        const { keysRegister } = await import('./remote-only.js');
        return keysRegister(email, globals(cmd));
      }),
    );
  keys
    .command('verify')
    .description('Exchange the e-mailed code for an API key (shown only once)')
    .argument('<email>')
    .argument('<code>')
    .option('--json', 'print the answer as JSON')
    .addHelpText('after', examples(['folio --server http://localhost:8080 keys verify you@example.com 123456']))
    .action(
      run(async (email: string, code: string, opts: { json?: boolean }, cmd: Command) => {
        const { keysVerify } = await import('./remote-only.js');
        return keysVerify(email, code, opts, globals(cmd));
      }),
    );
  keys
    .command('list')
    .description("Every key issued to the calling key's e-mail")
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['FOLIO_API_KEY=folio_sk_… folio --server http://localhost:8080 keys list']))
    .action(
      run(async (opts: { json?: boolean }, cmd: Command) => {
        const { keysList } = await import('./remote-only.js');
        return keysList(opts, globals(cmd));
      }),
    );
  keys
    .command('revoke')
    .description('Revoke a key (it gets 401 everywhere afterwards)')
    .argument('<keyId>')
    .addHelpText('after', examples(['folio --server http://localhost:8080 keys revoke key_abc123']))
    .action(
      run(async (keyId: string, _opts: unknown, cmd: Command) => {
        const { keysRevoke } = await import('./remote-only.js');
        return keysRevoke(keyId, globals(cmd));
      }),
    );

  program
    .command('serve')
    .description('Run the API and the telemetry ingest (as `npm start`), or one of them')
    .addArgument(new Argument('[service]', 'api, ingest or all').choices(['api', 'ingest', 'all']).default('all'))
    .option('--host <host>', 'listen address (HOST)')
    .option('--port <port>', 'API port (PORT)')
    .option('--ingest-port <port>', 'ingest port (INGEST_PORT)')
    .option('--data-dir <dir>', 'data folder (DATA_DIR)')
    .addHelpText(
      'after',
      examples([
        'folio serve                      # API :8080 + ingest :8081, data in ./data',
        'folio serve api --port 9000',
        'OFFICE_WORKERS=4 folio serve',
        '',
        'Every setting of README "Configuration" is read from the environment; SIGTERM drains, then exits 0.',
      ]),
    )
    .action(async (service: string, opts: { host?: string; port?: string; ingestPort?: string; dataDir?: string }) => {
      if (opts.host) process.env.HOST = opts.host;
      if (opts.port) process.env.PORT = opts.port;
      if (opts.ingestPort) process.env.INGEST_PORT = opts.ingestPort;
      if (opts.dataDir) process.env.DATA_DIR = opts.dataDir;
      // main.ts reads its mode from argv[2] and runs until SIGTERM.
      process.argv = [process.argv[0]!, new URL('../main.js', import.meta.url).pathname, service];
      serving = true;
      await import('../main.js');
    });

  program
    .command('usage')
    .description('Usage report of the telemetry ingest: unique documents and opens of a license key in a month')
    .option('--license-key <key>', 'the license key')
    .option('--month <YYYY-MM>', 'UTC month (default: the current one)')
    .option('--csv', 'CSV of every key of the month (or of --license-key)')
    .option('--json', 'print JSON')
    .option('--ingest <url>', 'the ingest service (default: FOLIO_INGEST_URL or http://localhost:8081)')
    .option('--admin-token <token>', 'the ingest ADMIN_TOKEN (default: FOLIO_ADMIN_TOKEN)')
    .addHelpText(
      'after',
      examples([
        'FOLIO_ADMIN_TOKEN=… folio usage --license-key community-and-eval-agplv3',
        'folio usage --ingest http://ingest:8081 --month 2026-01 --csv > usage.csv',
      ]),
    )
    .action(
      run(async (opts: Record<string, string | boolean | undefined>, cmd: Command) => {
        const { usageCommand } = await import('./remote-only.js');
        return usageCommand(opts, globals(cmd));
      }),
    );

  for (const cmd of [program, ...program.commands, ...keys.commands]) cmd.exitOverride().showHelpAfterError('(add --help for usage)');
  return program;
}

let serving = false;

async function main(): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(process.argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      // Help and version are not errors; commander has already printed everything else.
      process.exit(e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help' ? 0 : EXIT_USAGE);
    }
    process.stderr.write(`folio: ${formatError(e)}\n`);
    process.exit(e instanceof CliError ? e.exitCode : EXIT_FAILED);
  }
  if (serving) return;
  // Engines are closed by now; exit without waiting for idle handles (keep-alive sockets, timers).
  process.stdout.write('', () => process.exit(exitCode));
}

void main();
