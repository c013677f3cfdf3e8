/**
 * `FolioClient`: a typed client for every operation of the Folio API (CONTRACT §1–6). Plain `fetch`, so it
 * runs in browsers and Node 20 alike. Errors come back as `FolioApiError` carrying the contract's envelope
 * (code, message, requestId, details) and the HTTP status.
 */
import { FolioClientError } from './errors.js';
import type * as Api from './api-types.js';

export interface FolioClientOptions {
  /** e.g. `http://localhost:8080` (no trailing `/v1`). */
  baseUrl: string;
  /** `folio_sk_…`; not needed for health, register and verifyEmail. */
  apiKey?: string;
  /** A fetch implementation (default: the global one). */
  fetch?: typeof fetch;
}

export type ErrorDetail = NonNullable<Api.ErrorEnvelope['details']>[number];

export class FolioApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId?: string,
    readonly details?: ErrorDetail[],
    readonly retryAfter?: number,
  ) {
    super(message);
    this.name = 'FolioApiError';
  }
}

/*
 * The request and answer types come from one generated source, ./api-types.ts, which is rendered from the
 * API's OpenAPI document (itself built from the server's TypeBox schemas) and checked against it by
 * test/foundation/openapi.test.ts. Type-only imports: esbuild erases them, so the bundle is unchanged.
 */

/** A document in a JSON body: raw base64 or a data: URI, or an http(s) URL the server fetches. */
export type DocumentSource = Api.VerifyDocumentRequest['document'];
/** What the client accepts where a document goes: bytes (sent as base64), a Blob, or a source as is. */
export type DocumentArg = Uint8Array | ArrayBuffer | Blob | DocumentSource;

export type HealthResponse = Api.GetHealthResponse;
export type RegisterResponse = Api.RegisterResponse;
export type VerifyEmailResponse = Api.VerifyEmailResponse;
export type KeyInfo = Api.ListKeysResponse['keys'][number];
export type ConvertOptions = Omit<Api.ConvertDocumentQuery, 'tagged' | 'pageSize'> & {
  /** File name sent with the upload (used to infer `from` and to name the result). */
  filename?: string;
  tagged?: boolean;
};
export interface ConvertResult {
  bytes: Uint8Array;
  contentType: string;
  /** From Content-Disposition. */
  filename?: string;
}
export type AnnotateField = Api.AnnotateDocumentRequest['fields'][number];
export type AnnotateFieldType = AnnotateField['type'];
export interface AnnotateOptions {
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

/** base64 of bytes without Node's Buffer (btoa over chunks keeps the argument list bounded). */
export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

export function fromBase64(text: string): Uint8Array {
  const raw = text.replace(/^data:[^,]*;base64,/, '');
  const binary = atob(raw);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

async function bytesOf(input: Uint8Array | ArrayBuffer | Blob): Promise<Uint8Array> {
  if (input instanceof Uint8Array) return input;
  if (input instanceof ArrayBuffer) return new Uint8Array(input);
  if (typeof (input as Blob).arrayBuffer === 'function') return new Uint8Array(await (input as Blob).arrayBuffer());
  throw new FolioClientError('INVALID_INPUT', 'Expected a Uint8Array, ArrayBuffer or Blob');
}

async function documentSource(doc: DocumentArg): Promise<DocumentSource> {
  if (doc && typeof doc === 'object' && ('base64' in doc || 'url' in doc) && !(doc instanceof Uint8Array)) {
    return doc as DocumentSource;
  }
  return { base64: toBase64(await bytesOf(doc as Uint8Array | ArrayBuffer | Blob)) };
}

export class FolioClient {
  private readonly baseUrl: string;
  private readonly apiKey?: string;
  private readonly fetchImpl: typeof fetch;

  constructor(options: FolioClientOptions) {
    if (!options?.baseUrl) throw new FolioClientError('INVALID_INPUT', 'FolioClient needs a baseUrl');
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    this.fetchImpl = options.fetch ?? ((...args) => fetch(...args));
  }

  private async request(method: string, path: string, init: { body?: BodyInit; json?: unknown; auth?: boolean } = {}): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (init.auth !== false) {
      if (!this.apiKey) throw new FolioClientError('INVALID_INPUT', `${method} ${path} needs an apiKey`);
      headers.authorization = `Bearer ${this.apiKey}`;
    }
    let body = init.body;
    if (init.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(init.json);
    }
    const res = await this.fetchImpl(`${this.baseUrl}${path}`, { method, headers, body, credentials: 'omit' });
    if (res.ok) return res;
    const text = await res.text().catch(() => '');
    let env: { code?: string; message?: string; requestId?: string; details?: ErrorDetail[] } = {};
    try {
      env = JSON.parse(text);
    } catch {
      // Not the envelope (a proxy's page, say): keep the status and the text.
    }
    const retry = res.headers.get('retry-after');
    throw new FolioApiError(
      res.status,
      env.code ?? 'HTTP_ERROR',
      env.message ?? (text.slice(0, 200) || res.statusText),
      env.requestId ?? res.headers.get('x-request-id') ?? undefined,
      env.details,
      retry !== null && /^\d+$/.test(retry) ? Number(retry) : undefined,
    );
  }

  private async json<T>(method: string, path: string, init: { body?: BodyInit; json?: unknown; auth?: boolean } = {}): Promise<T> {
    return (await (await this.request(method, path, init)).json()) as T;
  }

  /** GET /v1/health (no key). A 503 "unhealthy" answer is returned, not thrown. */
  async health(): Promise<HealthResponse> {
    const res = await this.fetchImpl(`${this.baseUrl}/v1/health`, { headers: { accept: 'application/json' }, credentials: 'omit' });
    if (res.status === 200 || res.status === 503) return (await res.json()) as HealthResponse;
    throw new FolioApiError(res.status, 'HTTP_ERROR', `health answered ${res.status}`, res.headers.get('x-request-id') ?? undefined);
  }

  /** GET /v1/auth/register: e-mails a 6-digit code. */
  register(email: string): Promise<RegisterResponse> {
    return this.json('GET', `/v1/auth/register?email=${encodeURIComponent(email)}`, { auth: false });
  }

  /** GET /v1/auth/verify: exchanges the code for an API key (shown only this once). */
  verifyEmail(email: string, code: string): Promise<VerifyEmailResponse> {
    return this.json('GET', `/v1/auth/verify?email=${encodeURIComponent(email)}&code=${encodeURIComponent(code)}`, { auth: false });
  }

  /** GET /v1/auth/keys: every key issued to the calling key's e-mail (never the secrets). */
  async listKeys(): Promise<KeyInfo[]> {
    return (await this.json<{ keys: KeyInfo[] }>('GET', '/v1/auth/keys')).keys;
  }

  /** DELETE /v1/auth/keys/{keyId}. */
  async revokeKey(keyId: string): Promise<void> {
    await this.request('DELETE', `/v1/auth/keys/${encodeURIComponent(keyId)}`);
  }

  /** POST /v1/convert (multipart `file`). */
  async convert(file: Uint8Array | ArrayBuffer | Blob, options: ConvertOptions = {}): Promise<ConvertResult> {
    const q = new URLSearchParams();
    if (options.from) q.set('from', options.from);
    if (options.to) q.set('to', options.to);
    if (options.trackedChanges) q.set('trackedChanges', options.trackedChanges);
    if (options.pdfa) q.set('pdfa', options.pdfa);
    if (options.tagged !== undefined) q.set('tagged', String(options.tagged));
    const form = new FormData();
    const blob = file instanceof Blob ? file : new Blob([(await bytesOf(file)) as BlobPart]);
    const name = options.filename ?? (typeof File !== 'undefined' && file instanceof File ? file.name : `document.${options.from ?? 'docx'}`);
    form.append('file', blob, name);
    const res = await this.request('POST', `/v1/convert${q.size ? `?${q}` : ''}`, { body: form });
    const disposition = res.headers.get('content-disposition') ?? '';
    return {
      bytes: new Uint8Array(await res.arrayBuffer()),
      contentType: (res.headers.get('content-type') ?? '').split(';')[0]!,
      filename: /filename="([^"]*)"/.exec(disposition)?.[1],
    };
  }

  /** POST /v1/annotate: fills a template's fields. */
  async annotate(document: DocumentArg, fields: AnnotateField[], options: AnnotateOptions = {}): Promise<AnnotateResponse> {
    const q = new URLSearchParams();
    if (options.to) q.set('to', options.to);
    if (options.strict !== undefined) q.set('strict', String(options.strict));
    return this.json('POST', `/v1/annotate${q.size ? `?${q}` : ''}`, { json: { document: await documentSource(document), fields } });
  }

  /** POST /v1/annotate/fields: lists a template's fillable fields. */
  async annotateFields(document: DocumentArg): Promise<TemplateField[]> {
    return (await this.json<{ fields: TemplateField[] }>('POST', '/v1/annotate/fields', { json: { document: await documentSource(document) } }))
      .fields;
  }

  /** POST /v1/sign: audit-trail page(s) and a PAdES signature. */
  async sign(request: SignRequest): Promise<SignResponse> {
    return this.json('POST', '/v1/sign', { json: { ...request, document: await documentSource(request.document) } });
  }

  /** GET /v1/verify/key: the service's signing certificate. */
  verifyKey(): Promise<VerifyKeyResponse> {
    return this.json('GET', '/v1/verify/key');
  }

  /** POST /v1/verify: validates a PDF's signatures (200 also when they fail). */
  async verify(document: DocumentArg): Promise<VerifyResponse> {
    return this.json('POST', '/v1/verify', { json: { document: await documentSource(document) } });
  }
}
