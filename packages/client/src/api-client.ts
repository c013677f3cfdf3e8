/**
 * `FolioClient`: a typed client for every operation of the Folio API (docs/api.md). Plain `fetch`, so it
 * runs in browsers and Node 20+ alike. Every call goes through ./transport.ts: per-attempt timeout, overall
 * deadline, AbortSignal, and retries on 429/503 honouring `Retry-After` (see there for what is retried).
 * Errors are typed classes (./errors.ts) carrying the contract's envelope (code, message, requestId, details),
 * the HTTP status and `retryAfter`. Uploads (convert, verify) take bytes, Blobs, `{ path }` (Node, streamed
 * from disk) or `{ stream }` (./upload.ts).
 */
import { FolioClientError, errorClassFor } from './errors.js';
import { perform, type Call, type RequestOptions, type RetryOptions, type Transport } from './transport.js';
import { baseName, isPathSource, isStreamSource, multipartBody, multipartFilesBody, prepareFile, readAll, type FileInput } from './upload.js';
import type * as Api from './api-types.js';

export { FolioApiError } from './errors.js';
export type { ErrorDetail } from './errors.js';
export type { RequestOptions, RetryOptions, RetryEvent } from './transport.js';
export type { FileInput, PathSource, StreamSource } from './upload.js';

export interface FolioClientOptions {
  /** e.g. `http://localhost:8080` (no trailing `/v1`). */
  baseUrl: string;
  /** `folio_sk_…`; not needed for health, register and verifyEmail. */
  apiKey?: string;
  /** A fetch implementation (default: the global one). */
  fetch?: typeof fetch;
  /** Default retry policy for every call (default: 4 attempts, 500 ms base, 30 s cap); `false`: never retry. */
  retry?: RetryOptions | false;
  /** Default per-attempt timeout in ms, the answer's download included (default 120 000; 0: none). */
  timeoutMs?: number;
  /** Default overall deadline per call in ms, attempts and waits included (default 300 000; 0: none). */
  deadlineMs?: number;
  /** Headers sent with every call (e.g. a User-Agent in Node). */
  headers?: Record<string, string>;
  /** Called before each back-off sleep of any call. */
  onRetry?: RequestOptions['onRetry'];
}

/*
 * The request and answer types come from one generated source, ./api-types.ts, which is rendered from the
 * API's OpenAPI document (itself built from the server's TypeBox schemas) and checked against it by
 * test/foundation/openapi.test.ts. Type-only imports: esbuild erases them, so the bundle is unchanged.
 */

/** A document in a JSON body: raw base64 or a data: URI, or an http(s) URL the server fetches. */
export type DocumentSource = Api.VerifyDocumentRequest['document'];
/** What the client accepts where a document goes: bytes (sent as base64), a Blob, or a source as is. */
export type DocumentArg = Uint8Array | ArrayBuffer | Blob | DocumentSource | FileInput;

export type HealthResponse = Api.GetHealthResponse;
export type RegisterResponse = Api.RegisterResponse;
export type VerifyEmailResponse = Api.VerifyEmailResponse;
export type KeyInfo = Api.ListKeysResponse['keys'][number];
export type ConvertOptions = Omit<Api.ConvertDocumentQuery, 'tagged'> &
  RequestOptions & {
    /** File name sent with the upload (used to infer `from` and to name the result). */
    filename?: string;
    tagged?: boolean;
  };
export interface ConvertResult {
  bytes: Uint8Array;
  contentType: string;
  /** From Content-Disposition. */
  filename?: string;
  /** What the target format could not keep (DOCX→md|html), from `X-Folio-Warnings`. */
  warnings?: string[];
}
export type AnnotateField = Api.AnnotateDocumentRequest['fields'][number];
export type AnnotateFieldType = AnnotateField['type'];
export interface AnnotateOptions extends RequestOptions {
  to?: Api.AnnotateDocumentQuery['to'];
  strict?: boolean;
}
export type AnnotateResponse = Api.AnnotateDocumentResponse;
export type TemplateField = Api.ListTemplateFieldsResponse['fields'][number];
export type SignRequest = Omit<Api.SignDocumentRequest, 'document'> & { document: DocumentArg };
export type SignResponse = Api.SignDocumentResponse;
export type VerifyKeyResponse = Api.GetSigningKeyResponse;
export type VerifyResponse = Api.VerifyDocumentResponse;
export type Indication = VerifyResponse['indication'];
type MergeDocument = Api.MergeDocumentsRequest['documents'][number];
/** One input of a merge with what names it: `fileName` (errors, and the outline without a title), `title`, `labelPrefix`. */
export interface MergeItem extends Pick<MergeDocument, 'fileName' | 'title' | 'labelPrefix'> {
  document: DocumentArg;
}
/** A merge input: a PDF or DOCX as bytes, Blob, `{ path }`, `{ stream }`, `{ base64 }`, `{ url }`, or a `MergeItem`. */
export type MergeInput = DocumentArg | MergeItem;
export type MergeOptions = NonNullable<Api.MergeDocumentsRequest['options']> & RequestOptions;
export interface MergeResult {
  /** The merged PDF. */
  bytes: Uint8Array;
  /** From `X-Folio-Pages`. */
  pageCount: number;
  /** The server's warnings (from `Warning`), e.g. that a signed input's signature did not survive; empty when none. */
  warnings: string[];
  filename?: string;
}

/** base64 of bytes (Node's Buffer when there is one; else btoa over chunks, which keeps the argument list bounded). */
export function toBase64(bytes: Uint8Array): string {
  const B = (globalThis as { Buffer?: { from(b: ArrayBufferLike, o: number, l: number): { toString(e: string): string } } }).Buffer;
  if (B) return B.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

export function fromBase64(text: string): Uint8Array {
  const raw = text.replace(/^data:[^,]*;base64,/, '');
  const B = (globalThis as { Buffer?: { from(s: string, e: string): Uint8Array } }).Buffer;
  if (B) {
    const b = B.from(raw, 'base64');
    return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  }
  const binary = atob(raw);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

function isDocumentSource(doc: unknown): doc is DocumentSource {
  return !!doc && typeof doc === 'object' && !(doc instanceof Uint8Array) && ('base64' in doc || 'url' in doc);
}

function checkInput(doc: unknown): void {
  const ok =
    doc instanceof Uint8Array ||
    doc instanceof ArrayBuffer ||
    (typeof Blob !== 'undefined' && doc instanceof Blob) ||
    isDocumentSource(doc) ||
    isPathSource(doc) ||
    isStreamSource(doc);
  if (!ok) throw new FolioClientError('INVALID_INPUT', 'Expected a Uint8Array, ArrayBuffer, Blob, { path }, { stream }, { base64 } or { url }');
}

/** A document for a JSON body: a source as is, anything else read once and sent as base64. */
async function documentSource(doc: DocumentArg): Promise<DocumentSource> {
  checkInput(doc);
  if (isDocumentSource(doc)) return doc;
  return { base64: toBase64(await readAll(doc as FileInput)) };
}

const json = <T>(res: Response): Promise<T> => res.json() as Promise<T>;

const isMergeItem = (v: unknown): v is MergeItem => !!v && typeof v === 'object' && 'document' in v && !(v instanceof Uint8Array);

/** The name an upload carries by itself: a File's, a path's base name, a source's `filename`. */
function ownName(doc: DocumentArg): string | undefined {
  if (typeof File !== 'undefined' && doc instanceof File) return doc.name || undefined;
  if (isPathSource(doc)) return doc.filename ?? baseName(doc.path);
  if (isStreamSource(doc)) return doc.filename;
  return undefined;
}

/**
 * The texts of RFC 9110 `Warning` values (`299 folio "text", …`). The server writes each text without
 * double quotes, so a quoted string ends at the next quote. (`X-Folio-Warnings` joins the same texts with
 * `; `, which a text may itself contain, so it is read only when `Warning` is absent.)
 */
export function parseWarnings(warning: string | null, joined: string | null): string[] {
  if (warning) return [...warning.matchAll(/\d{3} \S+ "([^"]*)"/g)].map((m) => m[1]!);
  return joined ? [joined] : [];
}

function query(params: Record<string, string | boolean | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, String(v));
  const text = q.toString();
  return text ? `?${text}` : '';
}

/** Splits the call options (signal, timeouts, retry, …) from an operation's own options. */
function callOptions(o: RequestOptions): RequestOptions {
  const { signal, timeoutMs, deadlineMs, retry, requestId, onRetry, headers } = o;
  return { signal, timeoutMs, deadlineMs, retry, requestId, onRetry, headers };
}

export class FolioClient {
  readonly baseUrl: string;
  private readonly apiKey?: string;
  private readonly transport: Transport;

  constructor(options: FolioClientOptions) {
    if (!options?.baseUrl) throw new FolioClientError('INVALID_INPUT', 'FolioClient needs a baseUrl');
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    const fetchImpl = options.fetch ?? ((...args: Parameters<typeof fetch>) => fetch(...args));
    this.transport = {
      baseUrl: this.baseUrl,
      fetch: fetchImpl,
      defaults: {
        retry: options.retry,
        timeoutMs: options.timeoutMs,
        deadlineMs: options.deadlineMs,
        headers: options.headers,
        onRetry: options.onRetry,
      },
    };
  }

  private headers(method: string, path: string, auth: boolean): Record<string, string> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (auth) {
      if (!this.apiKey) throw new FolioClientError('INVALID_INPUT', `${method} ${path} needs an apiKey`);
      headers.authorization = `Bearer ${this.apiKey}`;
    }
    return headers;
  }

  private call<T>(
    method: string,
    path: string,
    read: (res: Response) => Promise<T>,
    options: RequestOptions,
    init: { auth?: boolean; json?: unknown; body?: Call<T>['body']; idempotent?: boolean; answers?: Call<T>['answers'] } = {},
  ): Promise<T> {
    const headers = this.headers(method, path, init.auth !== false);
    let body = init.body;
    if (init.json !== undefined) {
      const text = JSON.stringify(init.json);
      body = { replayable: true, make: () => text, headers: { 'content-type': 'application/json' } };
    }
    return perform(this.transport, { method, path, headers, body, read, idempotent: init.idempotent, answers: init.answers }, callOptions(options));
  }

  /** GET /v1/health (no key). A 503 "unhealthy" answer is returned, not thrown. */
  health(options: RequestOptions = {}): Promise<HealthResponse> {
    return this.call(
      'GET',
      '/v1/health',
      async (res) => {
        const body = (await res.json().catch(() => ({}))) as HealthResponse & { code?: string; message?: string; requestId?: string };
        if (res.status === 200 || typeof body.status === 'string') return body;
        // A 503 that is not a health answer (the server draining, a proxy): the typed error.
        const Class = errorClassFor(res.status, body.code);
        throw new Class(
          res.status,
          body.code ?? 'HTTP_ERROR',
          body.message ?? `health answered ${res.status}`,
          body.requestId ?? res.headers.get('x-request-id') ?? undefined,
        );
      },
      options,
      { auth: false, answers: (s) => s === 200 || s === 503 },
    );
  }

  /** GET /v1/auth/register: e-mails a 6-digit code. Not retried after a network error (it sends mail). */
  register(email: string, options: RequestOptions = {}): Promise<RegisterResponse> {
    return this.call('GET', `/v1/auth/register${query({ email })}`, json<RegisterResponse>, options, { auth: false, idempotent: false });
  }

  /** GET /v1/auth/verify: exchanges the code for an API key (shown only this once). Not retried after a network error (it spends the code). */
  verifyEmail(email: string, code: string, options: RequestOptions = {}): Promise<VerifyEmailResponse> {
    return this.call('GET', `/v1/auth/verify${query({ email, code })}`, json<VerifyEmailResponse>, options, { auth: false, idempotent: false });
  }

  /** GET /v1/auth/keys: every key issued to the calling key's e-mail (never the secrets). */
  async listKeys(options: RequestOptions = {}): Promise<KeyInfo[]> {
    return (await this.call('GET', '/v1/auth/keys', json<{ keys: KeyInfo[] }>, options)).keys;
  }

  /** DELETE /v1/auth/keys/{keyId} (204). */
  async revokeKey(keyId: string, options: RequestOptions = {}): Promise<void> {
    await this.call(
      'DELETE',
      `/v1/auth/keys/${encodeURIComponent(keyId)}`,
      async (res) => {
        await res.body?.cancel().catch(() => undefined);
      },
      options,
    );
  }

  /**
   * POST /v1/convert (multipart `file`). `file`: bytes, a Blob/File, `{ path }` (Node: streamed from disk,
   * re-read only for a retry) or `{ stream }` (sent once, not retried after any of it was read).
   */
  async convert(file: FileInput, options: ConvertOptions = {}): Promise<ConvertResult> {
    checkInput(file);
    const path = `/v1/convert${query({
      from: options.from,
      to: options.to,
      width: options.width,
      pages: options.pages,
      trackedChanges: options.trackedChanges,
      pdfa: options.pdfa,
      tagged: options.tagged,
      comments: options.comments,
      pageSize: options.pageSize,
      images: options.images,
    })}`;
    const prepared = await prepareFile(file);
    const body = multipartBody(prepared, options.filename ?? prepared.name ?? `document.${options.from ?? 'docx'}`);
    return this.call(
      'POST',
      path,
      async (res) => {
        const disposition = res.headers.get('content-disposition') ?? '';
        return {
          bytes: new Uint8Array(await res.arrayBuffer()),
          contentType: (res.headers.get('content-type') ?? '').split(';')[0]!,
          filename: /filename="([^"]*)"/.exec(disposition)?.[1],
          warnings: res.headers.get('x-folio-warnings')?.split('; ').filter(Boolean),
        };
      },
      options,
      { body },
    );
  }

  /** POST /v1/annotate: fills a template's fields. */
  async annotate(document: DocumentArg, fields: AnnotateField[], options: AnnotateOptions = {}): Promise<AnnotateResponse> {
    const source = await documentSource(document);
    return this.call('POST', `/v1/annotate${query({ to: options.to, strict: options.strict })}`, json<AnnotateResponse>, options, {
      json: { document: source, fields },
    });
  }

  /** POST /v1/annotate/fields: lists a template's fillable fields. */
  async annotateFields(document: DocumentArg, options: RequestOptions = {}): Promise<TemplateField[]> {
    const source = await documentSource(document);
    return (await this.call('POST', '/v1/annotate/fields', json<{ fields: TemplateField[] }>, options, { json: { document: source } })).fields;
  }

  /** POST /v1/sign: audit-trail page(s) and a PAdES signature. */
  async sign(request: SignRequest, options: RequestOptions = {}): Promise<SignResponse> {
    const source = await documentSource(request.document);
    return this.call('POST', '/v1/sign', json<SignResponse>, options, { json: { ...request, document: source } });
  }

  /** GET /v1/verify/key: the service's signing certificate. */
  verifyKey(options: RequestOptions = {}): Promise<VerifyKeyResponse> {
    return this.call('GET', '/v1/verify/key', json<VerifyKeyResponse>, options);
  }

  /**
   * POST /v1/merge: 2–50 PDF and DOCX inputs → one PDF, in the order given. Inputs that are all uploads
   * (bytes, Blob, `{ path }`, `{ stream }`, optionally wrapped in a `MergeItem` with a `fileName`) go as one
   * multipart request with `files` repeated; when any input is `{ base64 }`/`{ url }` or has a `title` or
   * `labelPrefix`, the JSON form is sent (uploads then go as base64). The answer's warnings (a signed input
   * merged as content) are in `warnings`; errors name the failing input by index (`details[].field` =
   * `documents.<i>`).
   */
  async merge(inputs: MergeInput[], options: MergeOptions = {}): Promise<MergeResult> {
    if (!Array.isArray(inputs)) throw new FolioClientError('INVALID_INPUT', 'merge takes an array of inputs');
    const items = inputs.map((input) => (isMergeItem(input) ? input : { document: input }));
    for (const item of items) checkInput(item.document);
    const read = async (res: Response): Promise<MergeResult> => {
      const bytes = new Uint8Array(await res.arrayBuffer());
      return {
        bytes,
        pageCount: Number(res.headers.get('x-folio-pages') ?? NaN),
        warnings: parseWarnings(res.headers.get('warning'), res.headers.get('x-folio-warnings')),
        filename: /filename="([^"]*)"/.exec(res.headers.get('content-disposition') ?? '')?.[1],
      };
    };
    const { outline, pageLabels, pdfa } = options;
    const asJson = items.some((i) => isDocumentSource(i.document) || i.title !== undefined || i.labelPrefix !== undefined);
    if (asJson) {
      const documents: MergeDocument[] = [];
      for (const item of items) {
        const fileName = item.fileName ?? ownName(item.document);
        documents.push({
          ...(await documentSource(item.document)),
          ...(fileName !== undefined ? { fileName } : {}),
          ...(item.title !== undefined ? { title: item.title } : {}),
          ...(item.labelPrefix !== undefined ? { labelPrefix: item.labelPrefix } : {}),
        } as MergeDocument);
      }
      const body: Api.MergeDocumentsRequest = { documents };
      if (outline !== undefined || pageLabels !== undefined || pdfa !== undefined) body.options = { outline, pageLabels, pdfa };
      return this.call('POST', '/v1/merge', read, options, { json: body });
    }
    const files = items.map((item, i) => ({
      input: item.document as FileInput,
      name: item.fileName ?? ownName(item.document) ?? `document-${i + 1}`,
    }));
    // The form's text fields as the server's schema declares them (api-types.ts, MergeDocumentsForm).
    const fields: Omit<Api.MergeDocumentsForm, 'files'> = {
      outline: outline === undefined ? undefined : outline ? 'true' : 'false',
      pageLabels: pageLabels === undefined ? undefined : pageLabels ? 'true' : 'false',
      pdfa,
    };
    const body = await multipartFilesBody('files', files, fields);
    return this.call('POST', '/v1/merge', read, options, { body });
  }

  /**
   * POST /v1/verify: validates a PDF's signatures (200 also when they fail). `{ base64 }`/`{ url }` go as JSON;
   * bytes, Blobs, `{ path }` and `{ stream }` as a multipart upload (no base64 inflation).
   */
  async verify(document: DocumentArg, options: RequestOptions = {}): Promise<VerifyResponse> {
    checkInput(document);
    if (isDocumentSource(document)) {
      return this.call('POST', '/v1/verify', json<VerifyResponse>, options, { json: { document } });
    }
    const prepared = await prepareFile(document as FileInput);
    return this.call('POST', '/v1/verify', json<VerifyResponse>, options, { body: multipartBody(prepared, prepared.name ?? 'document.pdf') });
  }
}
