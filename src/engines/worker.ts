/**
 * Entry of one engine worker thread (run by piscina from pool.ts). Each job runs one engine call on its own
 * thread, so a slow or hostile document never holds the event loop that answers health checks; the pool
 * owns the time budget and the heap ceiling and replaces this thread when either is crossed.
 *
 * The engines' dependencies that cannot cross threads (the signing key, the trust store, the URL fetcher)
 * are rebuilt here once, lazily, from the plain data in workerData.
 */
import { createPrivateKey } from 'node:crypto';
import { BroadcastChannel, workerData } from 'node:worker_threads';
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { isFolioError } from '../errors.js';
import type { SafeFetcher } from '../fetch/safe-fetch.js';
import { decodeBase64Input, PREDECODED_DOCUMENT } from '../fetch/document-source.js';
import { parseJsonBody } from '../http/json-body.js';
import type { TrustStore } from '../verify/index.js';
import type { SigningIdentity } from '../services.js';
import type { EngineJob, EngineTasks, EngineWorkerData, JobOutcome, TaskName } from './tasks.js';
import { warmUpHtml, warmUpMarkdown } from './warm-up.js';
import { collectWhenIdle } from './idle-gc.js';
import { setNativeJob, useNativeRunner } from '../native/remote.js';

const data = workerData as EngineWorkerData;
/** Warm-up conversions at thread start, and the wall-time cap on them (see warmUp). */
const WARM_UP_ROUNDS = 30;
const WARM_UP_MS = 5000;

// The pool starts a job's time budget when this thread announces it, so a thread's own start-up (module
// loading after a replacement) never counts against the first job it runs.
const startChannel = new BroadcastChannel(data.startChannel);
startChannel.unref();
// Native children (resvg) are started and reaped by the main thread, tied to the job (src/native/runner.ts).
useNativeRunner(data.nativeChannel);

/**
 * The engines, each imported when the first job that needs it comes (NEEDS), before that job is announced,
 * so module loading never runs inside a job's time budget. An idle engine thread holds only what it has
 * used: Markdown/HTML ↔ DOCX (loaded at start, with the warm-up, on engine threads); annotate, sign (pdf-lib,
 * fontkit, the ASN.1 schemas: ~43 MB), verify, merge and the URL fetcher on first use. The body thread
 * (large JSON bodies) loads none of them.
 */
interface Engines {
  convert: typeof import('../convert/index.js');
  text: typeof import('../convert/text.js');
  annotate: typeof import('../annotate/index.js');
  sign: typeof import('../sign/index.js');
  verify: typeof import('../verify/index.js');
  fetch: typeof import('../fetch/safe-fetch.js');
  merge: typeof import('../merge/engine.js');
  preview: typeof import('../preview/page-sizes.js');
}
type EngineName = keyof Engines;
const importers: { [K in EngineName]: () => Promise<Engines[K]> } = {
  convert: () => import('../convert/index.js'),
  text: () => import('../convert/text.js'),
  annotate: () => import('../annotate/index.js'),
  sign: () => import('../sign/index.js'),
  verify: () => import('../verify/index.js'),
  fetch: () => import('../fetch/safe-fetch.js'),
  merge: () => import('../merge/engine.js'),
  preview: () => import('../preview/page-sizes.js'),
};
/** The modules each task uses; runJob loads them before announcing the job. */
const NEEDS: { [N in TaskName]: EngineName[] } = {
  'http.parseJson': [],
  'convert.toDocx': ['convert', 'text'],
  'convert.fromDocx': ['convert'],
  'annotate.fill': ['annotate', 'fetch'],
  'annotate.fields': ['annotate'],
  'sign.seal': ['sign', 'fetch'],
  'verify.pdf': ['verify'],
  'merge.pdfs': ['merge'],
  'preview.pageSizes': ['preview'],
};
const loaded: Partial<Engines> = {};
const loading: Partial<Record<EngineName, Promise<void>>> = {};

function load(name: EngineName): Promise<void> {
  return (loading[name] ??= importers[name]().then((m) => {
    (loaded as Record<EngineName, unknown>)[name] = m;
    // Parsing the audit-page fonts takes most of a second: done with the module, not in the first signature.
    if (name === 'sign') (m as Engines['sign']).warmUpAuditFonts();
  }));
}

/** A module that runJob has loaded for the current task. */
function engine<K extends EngineName>(name: K): Engines[K] {
  const m = loaded[name];
  if (!m) throw new Error(`engine module ${name} used before it was loaded`);
  return m;
}

if (data.preloadEngines) {
  // Top-level await: piscina counts the thread ready only once this module has loaded, so the conversion
  // modules and their warm-up never run inside a job's time budget.
  await Promise.all([load('convert'), load('text')]);
  if (data.warmUp) warmUp(engine('convert'));
}

/**
 * Converts the built-in warm-up documents (warm-up.ts) until V8 has compiled the Markdown/HTML → DOCX path:
 * WARM_UP_ROUNDS rounds, or fewer when they take longer than WARM_UP_MS of wall time (a loaded host). Runs
 * before the thread counts as ready, so it is never inside a job's budget; a failure here only leaves the
 * thread cold.
 */
function warmUp(convert: Engines['convert']): void {
  const t0 = performance.now();
  try {
    for (let i = 0; i < WARM_UP_ROUNDS && performance.now() - t0 < WARM_UP_MS; i++) {
      convert.markdownToDocx(warmUpMarkdown(i), { pageSize: i % 2 ? 'Letter' : 'A4' });
      convert.htmlToDocx(warmUpHtml(i), { pageSize: 'A4' });
    }
  } catch {
    /* a cold thread still works */
  }
}

let fetcher: SafeFetcher | undefined;
let identity: SigningIdentity | undefined;
let trust: TrustStore | undefined;

const getFetcher = (e: Engines) => (fetcher ??= new e.fetch.SafeFetcher({ allowlist: data.urlFetchAllowlist }));

function getIdentity(): SigningIdentity | undefined {
  if (!identity && data.signing) {
    const s = data.signing;
    identity = {
      privateKey: createPrivateKey(s.privateKeyPem),
      keyAlgorithm: s.keyAlgorithm,
      chainDer: s.chainDer,
      certificatePem: s.certificatePem,
      rootCertificatePem: s.rootCertificatePem,
      ...(s.ca ? { ca: { privateKey: createPrivateKey(s.ca.privateKeyPem), certificateDer: s.ca.certificateDer } } : {}),
    };
  }
  return identity;
}

const getTrust = (e: Engines) => (trust ??= e.verify.loadTrustStore(data.trust));
let revocationFetcher: InstanceType<Engines['verify']['RevocationFetcher']> | undefined;
const getRevocationFetcher = (e: Engines) => (revocationFetcher ??= new e.verify.RevocationFetcher({ allowlist: data.urlFetchAllowlist }));

type Handlers = { [N in TaskName]: (input: EngineTasks[N]['input']) => Promise<EngineTasks[N]['output']> | EngineTasks[N]['output'] };

const handlers: Handlers = {
  'http.parseJson': ({ body }) => {
    const value = parseJsonBody(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
    const document = (value as { document?: { base64?: unknown; url?: unknown } } | null)?.document;
    if (document && typeof document === 'object' && typeof document.base64 === 'string' && document.url === undefined) {
      try {
        const { bytes } = decodeBase64Input(document.base64, 'document.base64');
        document.base64 = PREDECODED_DOCUMENT;
        return { value, document: bytes };
      } catch {
        // Left as it came: the route decodes it again and reports the problem exactly as for a small body.
      }
    }
    return { value };
  },
  'convert.toDocx': async ({ from, bytes, pageSize }) => {
    const e = loaded as Engines; // its NEEDS are loaded
    const text = e.text.decodeText(bytes);
    return from === 'md' ? e.convert.markdownToDocxWithWarnings(text, { pageSize }) : e.convert.htmlToDocxWithWarnings(text, { pageSize });
  },
  'convert.fromDocx': async ({ to, bytes, images, outputMaxBytes }) => engine('convert').docxToText(bytes, to, { images, outputMaxBytes }),
  'annotate.fill': async ({ template, fields, strict, flatten }) => {
    const e = loaded as Engines; // its NEEDS are loaded
    const result = await e.annotate.annotateDocx(template, fields, { strict, flatten, fetcher: getFetcher(e) });
    return { docx: result.docx, report: result.report };
  },
  'annotate.fields': async ({ template }) => engine('annotate').listTemplateFields(template),
  'sign.seal': async (input) => {
    const e = loaded as Engines; // its NEEDS are loaded
    const signing = getIdentity();
    if (!signing) throw new Error('the engine worker has no signing identity');
    // The request is the engine's own, checked where it came in (a DOCX already converted: input.pdfOfDocx).
    let timestampSkipped: string | undefined;
    const result = await e.sign.signDocument(input, {
      identity: signing,
      fetcher: getFetcher(e),
      urlFetchAllowlist: data.urlFetchAllowlist,
      tsaUrl: data.tsaUrl,
      tsaOptional: data.tsaOptional,
      onTimestampSkipped: (reason) => {
        timestampSkipped = reason;
      },
    });
    return { pdf: result.pdf, ...(timestampSkipped !== undefined ? { timestampSkipped } : {}) };
  },
  'verify.pdf': async ({ bytes }) => {
    const e = loaded as Engines; // its NEEDS are loaded
    // Revocation data is fetched online only from URL_FETCH_ALLOWLIST hosts (10 s at most per document).
    return e.verify.verifyPdfWithRevocation(bytes, { trust: getTrust(e) }, getRevocationFetcher(e));
  },
  'preview.pageSizes': async ({ pdf, pages }) =>
    engine('preview')
      .pageSizes(pdf, pages)
      .map((s) => s ?? null),
  'merge.pdfs': async ({ inputs, options }) => engine('merge').mergePdfs(inputs, options),
};

/**
 * Tasks whose answer carries `bytes` as large as the output budget: the buffer is transferred to the main
 * thread, not copied (a copy would double the memory of the largest answers). The writers give it a buffer
 * of its own (src/convert/output-sink.ts).
 */
const TRANSFER: ReadonlySet<TaskName> = new Set(['convert.fromDocx', 'http.parseJson']);

function transferred(task: TaskName, outcome: JobOutcome): JobOutcome {
  if (!TRANSFER.has(task) || !outcome.ok) return outcome;
  // A large JSON body's decoded document (up to 25 MB) is moved back too (issue 24: no second copy).
  const bytes = (outcome.value as { bytes?: unknown; document?: unknown })[task === 'http.parseJson' ? 'document' : 'bytes'];
  const whole = bytes instanceof Uint8Array && bytes.buffer instanceof ArrayBuffer && bytes.byteLength === bytes.buffer.byteLength;
  if (!whole) return outcome;
  // piscina's Transferable: the value sent, and the list of what to move with it.
  return move({ [transferableSymbol]: [bytes.buffer], [valueSymbol]: outcome }) as unknown as JobOutcome;
}

export default async function runJob(job: EngineJob): Promise<JobOutcome> {
  const handler = handlers[job.task] as (input: unknown) => unknown;
  if (!handler) {
    startChannel.postMessage(job.jobId);
    return { ok: false, error: { code: 'INTERNAL_ERROR', message: `Unknown engine task ${String(job.task)}` } };
  }
  try {
    // The task's modules first (the first job of a kind on this thread), then the announcement that starts
    // the job's time budget.
    await Promise.all(NEEDS[job.task].map(load));
    startChannel.postMessage(job.jobId);
    setNativeJob(job.jobId);
    const value = await handler(job.input);
    // Copied back by structured clone (piscina moves only a bare top-level value); at the 25 MB upload
    // limit the copy costs milliseconds. Output bytes as large as OUTPUT_MAX_MB are moved instead (TRANSFER).
    return transferred(job.task, { ok: true, value: value as never });
  } catch (e) {
    if (isFolioError(e)) {
      return {
        ok: false,
        error: { code: e.code, message: e.message, status: e.status, details: e.details, retryAfter: e.retryAfter },
      };
    }
    if (e instanceof RangeError && /call stack/i.test(e.message)) {
      // Recursion deeper than the thread's stack: the document nests too deeply, not a fault of ours.
      return { ok: false, error: { code: 'UNPROCESSABLE_DOCUMENT', message: 'The document is too deeply nested to process' } };
    }
    // A stack trace names code, never document content; the main thread logs it with the request id.
    const err = e as Error;
    return { ok: false, error: { code: 'INTERNAL_ERROR', message: 'Internal error' }, internal: { name: err?.name ?? 'Error', stack: err?.stack } };
  } finally {
    setNativeJob(undefined);
    // Once this thread has had nothing to do for a second, its jobs' garbage goes back (idle-gc.ts: a thread
    // that goes idle after a burst would otherwise keep it for minutes).
    collectWhenIdle();
  }
}
