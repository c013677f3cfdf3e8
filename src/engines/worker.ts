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
import { isFolioError } from '../errors.js';
import type { SafeFetcher } from '../fetch/safe-fetch.js';
import { decodeBase64Input, PREDECODED_DOCUMENT } from '../fetch/document-source.js';
import { parseJsonBody } from '../http/json-body.js';
import type { TrustStore } from '../verify/index.js';
import type { OfficeEngine } from '../office/types.js';
import type { SigningIdentity } from '../services.js';
import type { EngineJob, EngineTasks, EngineWorkerData, JobOutcome, TaskName } from './tasks.js';
import { warmUpHtml, warmUpMarkdown } from './warm-up.js';

const data = workerData as EngineWorkerData;
/** Warm-up conversions at thread start, and the wall-time cap on them (see warmUp). */
const WARM_UP_ROUNDS = 30;
const WARM_UP_MS = 5000;

// The pool starts a job's time budget when this thread announces it, so a thread's own start-up (module
// loading after a replacement) never counts against the first job it runs.
const startChannel = new BroadcastChannel(data.startChannel);
startChannel.unref();

/**
 * The engines, imported on demand: the body thread (large JSON bodies) never needs them and stays small;
 * engine threads load them at start (preloadEngines), so a job does not pay for module loading.
 */
let enginesLoading: Promise<Engines> | undefined;
interface Engines {
  convert: typeof import('../convert/index.js');
  text: typeof import('../convert/text.js');
  annotate: typeof import('../annotate/index.js');
  sign: typeof import('../sign/index.js');
  verify: typeof import('../verify/index.js');
  fetch: typeof import('../fetch/safe-fetch.js');
  merge: typeof import('../merge/engine.js');
}
const engines = (): Promise<Engines> =>
  (enginesLoading ??= Promise.all([
    import('../convert/index.js'),
    import('../convert/text.js'),
    import('../annotate/index.js'),
    import('../sign/index.js'),
    import('../verify/index.js'),
    import('../fetch/safe-fetch.js'),
    import('../merge/engine.js'),
  ]).then(([convert, text, annotate, sign, verify, fetch, merge]) => ({ convert, text, annotate, sign, verify, fetch, merge })));

if (data.preloadEngines) {
  // Top-level await: piscina counts the thread ready only once this module has loaded, engines included,
  // so module loading never runs inside a job's time budget. The audit-page fonts follow in the background.
  const loaded = await engines();
  if (data.warmUp) warmUp(loaded);
  setTimeout(loaded.sign.warmUpAuditFonts, 0);
}

/**
 * Converts the built-in warm-up documents (warm-up.ts) until V8 has compiled the Markdown/HTML → DOCX path:
 * WARM_UP_ROUNDS rounds, or fewer when they take longer than WARM_UP_MS of wall time (a loaded host). Runs
 * before the thread counts as ready, so it is never inside a job's budget; a failure here only leaves the
 * thread cold.
 */
function warmUp(e: Engines): void {
  const t0 = performance.now();
  try {
    for (let i = 0; i < WARM_UP_ROUNDS && performance.now() - t0 < WARM_UP_MS; i++) {
      e.convert.markdownToDocx(warmUpMarkdown(i), { pageSize: i % 2 ? 'Letter' : 'A4' });
      e.convert.htmlToDocx(warmUpHtml(i), { pageSize: 'A4' });
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
    const e = await engines();
    const text = e.text.decodeText(bytes);
    return from === 'md' ? e.convert.markdownToDocx(text, { pageSize }) : e.convert.htmlToDocx(text, { pageSize });
  },
  'convert.fromDocx': async ({ to, bytes, images }) => {
    const e = await engines();
    if (to === 'md') {
      const r = e.convert.docxToMarkdown(bytes, { images });
      return { text: r.markdown, warnings: r.warnings };
    }
    const r = e.convert.docxToHtml(bytes, { images });
    return { text: r.html, warnings: r.warnings };
  },
  'annotate.fill': async ({ template, fields, strict, flatten }) => {
    const e = await engines();
    const result = await e.annotate.annotateDocx(template, fields, { strict, flatten, fetcher: getFetcher(e) });
    return { docx: result.docx, report: result.report };
  },
  'annotate.fields': async ({ template }) => (await engines()).annotate.listTemplateFields(template),
  'sign.seal': async (input) => {
    const e = await engines();
    const signing = getIdentity();
    if (!signing) throw new Error('the engine worker has no signing identity');
    // The DOCX was converted by the office engine before this job (its own supervised processes); the sign
    // engine asks for that conversion through this adapter and receives the PDF already made.
    const converted: OfficeEngine | undefined = input.pdfOfDocx
      ? {
          docxToPdf: async () => input.pdfOfDocx!,
          status: () => ({ status: 'healthy', workers: 0, busy: 0, queued: 0 }),
          close: async () => undefined,
        }
      : undefined;
    let timestampSkipped: string | undefined;
    const result = await e.sign.signDocument(
      {
        document: input.document,
        signer: input.signer,
        auditTrail: input.auditTrail,
        eventId: input.eventId,
        metadata: input.metadata,
        auditPages: input.auditPages,
        level: input.level,
      },
      {
        identity: signing,
        fetcher: getFetcher(e),
        urlFetchAllowlist: data.urlFetchAllowlist,
        office: converted,
        tsaUrl: data.tsaUrl,
        tsaOptional: data.tsaOptional,
        onTimestampSkipped: (reason) => {
          timestampSkipped = reason;
        },
      },
    );
    return { pdf: result.pdf, ...(timestampSkipped !== undefined ? { timestampSkipped } : {}) };
  },
  'verify.pdf': async ({ bytes }) => {
    const e = await engines();
    // Revocation data is fetched online only from URL_FETCH_ALLOWLIST hosts (10 s at most per document).
    return e.verify.verifyPdfWithRevocation(bytes, { trust: getTrust(e) }, getRevocationFetcher(e));
  },
  'merge.pdfs': async ({ inputs, options }) => (await engines()).merge.mergePdfs(inputs, options),
};

export default async function runJob(job: EngineJob): Promise<JobOutcome> {
  startChannel.postMessage(job.jobId);
  const handler = handlers[job.task] as (input: unknown) => unknown;
  if (!handler) return { ok: false, error: { code: 'INTERNAL_ERROR', message: `Unknown engine task ${String(job.task)}` } };
  try {
    const value = await handler(job.input);
    // Copied back by structured clone (piscina moves only a bare top-level value); at the 25 MB upload
    // limit the copy costs milliseconds.
    return { ok: true, value: value as never };
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
  }
}
