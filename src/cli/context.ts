/**
 * The two ways a command reaches the engines. Local: in this process, no server and no key — the engine pool
 * (worker threads, each job bounded in time and memory, as in the API) for Markdown/HTML → DOCX, annotate,
 * sign and verify, and the LibreOffice pool (started once per run with `--jobs` workers, closed at the end)
 * for PDF output. Remote: `--server URL` through @folio/client's FolioClient with the key from `--key` or
 * FOLIO_API_KEY.
 */
import fs from 'node:fs';
import path from 'node:path';
import pino, { type Logger } from 'pino';
import { ConfigError, type Config } from '../config/index.js';
import type { EnginePool, EngineTasks, TaskData, TaskName } from '../engines/index.js';
import type { OfficePool } from '../office/index.js';
import type { SigningIdentity } from '../sign/identity-types.js';
import { loadConfig, loadSettings } from '../modules/config.js';
import { engineWorkerData, runTaskHere } from '../modules/engine.js';
import type { ResolvedLevel } from '../sign/index.js';
import { createClient, type CliClient } from './client.js';
import { CliError, EXIT_USAGE } from './output.js';

export interface GlobalOptions {
  server?: string;
  key?: string;
  jobs?: number;
  verbose?: boolean;
  quiet?: boolean;
}

/** The configuration's reading (src/modules/config.ts): a bad variable is a usage error naming it (exit 2). */
function configured<T>(read: () => T): T {
  try {
    return read();
  } catch (e) {
    if (e instanceof ConfigError) throw new CliError('CONFIGURATION', e.message, EXIT_USAGE);
    throw e;
  }
}

/** Default concurrency: the office pool's size (OFFICE_WORKERS, read through its setting; else the usable CPUs). */
export function defaultJobs(): number {
  return configured(() => loadSettings(['officeWorkers']).officeWorkers);
}

export function isRemote(g: GlobalOptions): boolean {
  return Boolean(g.server);
}

/** The API client for remote mode; `needsKey` false for the calls that issue keys. */
export async function remoteClient(g: GlobalOptions, needsKey = true): Promise<CliClient> {
  if (!g.server) throw new CliError('USAGE', 'this command needs --server URL (or FOLIO_SERVER)', EXIT_USAGE);
  let url: URL;
  try {
    url = new URL(g.server);
  } catch {
    throw new CliError('USAGE', `--server ${g.server} is not a URL`, EXIT_USAGE);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError('USAGE', `--server must be http(s), got ${url.protocol}`, EXIT_USAGE);
  const apiKey = g.key ?? process.env.FOLIO_API_KEY;
  if (needsKey && !apiKey) throw new CliError('AUTHENTICATION_ERROR', 'an API key is needed: --key folio_sk_… or FOLIO_API_KEY', EXIT_USAGE);
  return createClient(g.server, apiKey);
}

/** The local engines of one CLI run, each started on first use and all closed by close(). */
export class LocalEngines {
  readonly config: Config;
  readonly logger: Logger;
  private office?: Promise<OfficePool>;
  private officePool?: OfficePool;
  private engines?: Promise<EnginePool>;
  private enginePool?: EnginePool;
  private signing?: Promise<SigningIdentity | undefined>;
  private data?: Promise<TaskData>;

  constructor(
    private readonly jobs: number,
    opts: { verbose?: boolean; withSigning?: 'create' | 'ifPresent'; inProcess?: boolean } = {},
  ) {
    this.inProcess = opts.inProcess === true;
    this.config = configured(() => loadConfig());
    // Logs go to stderr (stdout holds results and --json), only warnings and errors unless --verbose.
    this.logger = pino(
      { name: 'folio-cli', level: opts.verbose ? 'info' : process.env.LOG_LEVEL ? this.config.logLevel : 'error' },
      pino.destination(2),
    );
    this.withSigning = opts.withSigning;
    // Ctrl-C or a kill: stop the LibreOffice workers and remove their private folders before leaving.
    const stop = (signal: NodeJS.Signals) => {
      process.stderr.write(`\nfolio: ${signal}, stopping the engines\n`);
      void this.close().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  }

  private readonly withSigning?: 'create' | 'ifPresent';
  private readonly inProcess: boolean;

  /** The LibreOffice pool, booted once (all `--jobs` workers in parallel); later callers share it. */
  officeEngine(): Promise<OfficePool> {
    this.office ??= (async () => {
      const { OfficePool } = await import('../office/index.js');
      const pool = new OfficePool({
        workers: this.jobs,
        // Every batch job holds at most one conversion, so the queue never grows past --jobs.
        queueSize: Math.max(64, this.jobs * 2),
        timeoutMs: this.config.officeTimeoutMs,
        maxJobRssBytes: this.config.officeMemoryBytes,
        logger: this.logger,
      });
      this.officePool = pool;
      await pool.start();
      return pool;
    })();
    return this.office;
  }

  /** The signing identity: a PKCS#11 token (SIGNING_PKCS11_*), SIGNING_P12, else the one generated in DATA_DIR (created when `create`). */
  signingIdentity(): Promise<SigningIdentity | undefined> {
    this.signing ??= (async () => {
      const mode = this.withSigning ?? 'ifPresent';
      const present =
        this.config.signingPkcs11Module !== undefined ||
        this.config.signingP12 !== undefined ||
        fs.existsSync(path.join(this.config.dataDir, 'signing'));
      if (mode === 'ifPresent' && !present) return undefined;
      const { loadSigningIdentity } = await import('../sign/index.js');
      try {
        return await loadSigningIdentity(this.config, this.logger);
      } catch (e) {
        if (e instanceof ConfigError) throw new CliError('CONFIGURATION', e.message, EXIT_USAGE);
        throw e;
      }
    })();
    return this.signing;
  }

  /**
   * The checks the API makes on `level` before any work, with this machine's configuration: every level above
   * B-B needs TSA_URL, and B-LT/B-LTA need revocation data for the signing certificate (Folio's generated CA
   * makes its own; a SIGNING_P12's OCSP/CRL hosts must be on URL_FETCH_ALLOWLIST). Both are configuration,
   * so they exit 2 with the contract's code and the `level` detail.
   */
  async checkSignatureLevel(level: 'B-B' | 'B-T' | 'B-LT' | 'B-LTA' | undefined): Promise<ResolvedLevel> {
    if (level !== undefined && level !== 'B-B' && !this.config.tsaUrl) {
      throw new CliError(
        'VALIDATION_ERROR',
        `PAdES ${level} needs a timestamp authority and TSA_URL is not set (local mode reads it from the environment); set TSA_URL or use --level B-B`,
        EXIT_USAGE,
        [{ field: 'level', issue: `${level} needs TSA_URL` }],
      );
    }
    const identity = await this.signingIdentity();
    if (!identity) throw new CliError('CONFIGURATION', 'no signing identity (SIGNING_P12 or DATA_DIR/signing)', EXIT_USAGE);
    const [{ resolveLevel }, { FolioError }] = await Promise.all([import('../sign/index.js'), import('../errors.js')]);
    try {
      return resolveLevel(level, { tsaUrl: this.config.tsaUrl, identity, urlFetchAllowlist: this.config.urlFetchAllowlist });
    } catch (e) {
      if (e instanceof FolioError) throw new CliError(e.code, e.message, EXIT_USAGE, e.details);
      throw e;
    }
  }

  /**
   * Runs one engine job. Batches go to the engine pool (threads bounded in time and memory, as in the API);
   * a command on a single document (`inProcess`) calls the engine here, which spares starting threads that
   * each load every engine (seconds on a busy machine) for one call.
   */
  async run<N extends TaskName>(task: N, input: EngineTasks[N]['input']): Promise<EngineTasks[N]['output']> {
    if (!this.inProcess) return (await this.enginePoolFor()).run(task, input);
    // The handler an engine thread would run (the module's tasks file), on this thread.
    return runTaskHere(task, input, await this.taskData());
  }

  /** What the modules' tasks are given (src/modules/engine.ts): the same data as the engine threads of the API. */
  private taskData(): Promise<TaskData> {
    this.data ??= this.signingIdentity().then((signing) => engineWorkerData({ config: this.config, logger: this.logger, services: { signing } }));
    return this.data;
  }

  /** The engine pool (worker threads with the API's time and memory bounds), at most `--jobs` threads. */
  enginePoolFor(): Promise<EnginePool> {
    this.engines ??= (async () => {
      const data = await this.taskData();
      const { createEnginePool } = await import('../engines/index.js');
      const pool = createEnginePool(this.config, this.logger, data, {
        workers: Math.max(1, Math.min(this.jobs, this.config.engineWorkers)),
        queueSize: Math.max(64, this.jobs * 2),
      });
      this.enginePool = pool;
      return pool;
    })();
    return this.engines;
  }

  async close(): Promise<void> {
    const closing: Array<Promise<unknown>> = [];
    if (this.office) closing.push(this.office.then((p) => p.close()).catch(() => this.officePool?.close()));
    if (this.engines) closing.push(this.engines.then((p) => p.close()).catch(() => undefined));
    await Promise.allSettled(closing);
  }
}
