/**
 * Errors thrown by the library.
 *
 * - `FolioClientError`: a problem found before anything was sent (bad input, unsupported environment).
 *   Telemetry never throws: only reading or writing the document can.
 * - `FolioApiError` and its subclasses: the API answered with an error (they carry the contract's envelope:
 *   `status`, `code`, `message`, `requestId`, `details`, and `retryAfter` from the `Retry-After` header), or
 *   no usable answer came (`FolioNetworkError`, `FolioTimeoutError` with `status` 0).
 *
 * `instanceof` works across copies of the library (the ESM build and the browser bundle loaded side by side,
 * or two versions in one app): each error carries a brand under `Symbol.for('@folio/client.error')` listing
 * its class and every ancestor, and each class's `Symbol.hasInstance` also accepts that brand.
 */
const BRAND = Symbol.for('@folio/client.error');

/** Class names survive minification only when written down: each class declares its own. */
type Branded = { readonly [BRAND]?: readonly string[] };

function brandOf(ctor: unknown): string[] {
  const kinds: string[] = [];
  let c = ctor;
  while (typeof c === 'function' && c !== Error) {
    const kind = Object.prototype.hasOwnProperty.call(c, 'kind') ? (c as unknown as { kind: string }).kind : undefined;
    if (kind) kinds.push(kind);
    c = Object.getPrototypeOf(c);
  }
  return kinds;
}

function hasBrand(value: unknown, kind: string): boolean {
  const brand = value !== null && typeof value === 'object' ? (value as Branded)[BRAND] : undefined;
  return Array.isArray(brand) && brand.includes(kind);
}

export class FolioClientError extends Error {
  static readonly kind: string = 'FolioClientError';
  declare readonly [BRAND]: readonly string[];

  constructor(
    readonly code: 'INVALID_FILE_FORMAT' | 'INVALID_INPUT' | 'UNSUPPORTED_ENVIRONMENT',
    message: string,
  ) {
    super(message);
    this.name = 'FolioClientError';
    Object.defineProperty(this, BRAND, { value: brandOf(new.target) });
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return Function.prototype[Symbol.hasInstance].call(this, value) || hasBrand(value, (this as { kind: string }).kind);
  }
}

/** One entry of the envelope's `details`: the offending field and what is wrong with it. */
export interface ErrorDetail {
  field: string;
  issue: string;
}

/** What an error knows beyond the envelope. */
export interface FolioApiErrorExtra {
  /** The envelope's `error` (HTTP reason phrase). */
  error?: string;
  /** How many attempts were made before this error was thrown (1 = no retry). */
  attempts?: number;
  /** `GET`, `POST`, … */
  method?: string;
  /** The path (and query) that was called. */
  path?: string;
  /** The underlying error (network failures). */
  cause?: unknown;
}

/**
 * The API answered with an error, or no usable answer came. `status` is the HTTP status (0 when there was no
 * answer); `code` the envelope's code (`RATE_LIMIT_ERROR`, …; `HTTP_ERROR` when the body was not the
 * envelope, `NETWORK_ERROR` / `CLIENT_TIMEOUT` for the client-side failures); `requestId` the server's
 * `X-Request-Id` (for client-side failures, the id the client sent); `retryAfter` seconds, from `Retry-After`.
 */
export class FolioApiError extends Error {
  static readonly kind: string = 'FolioApiError';
  declare readonly [BRAND]: readonly string[];
  readonly error?: string;
  readonly attempts?: number;
  readonly method?: string;
  readonly path?: string;

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId?: string,
    readonly details?: ErrorDetail[],
    readonly retryAfter?: number,
    extra: FolioApiErrorExtra = {},
  ) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.name = (new.target as unknown as { kind: string }).kind;
    this.error = extra.error;
    this.attempts = extra.attempts;
    this.method = extra.method;
    this.path = extra.path;
    Object.defineProperty(this, BRAND, { value: brandOf(new.target) });
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return Function.prototype[Symbol.hasInstance].call(this, value) || hasBrand(value, (this as { kind: string }).kind);
  }

  /** The envelope as the server sent it (for logs and bug reports). */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      status: this.status,
      code: this.code,
      message: this.message,
      requestId: this.requestId,
      details: this.details,
      retryAfter: this.retryAfter,
      attempts: this.attempts,
    };
  }
}

/** 400 `VALIDATION_ERROR`, `INVALID_FILE_FORMAT`, `UNSUPPORTED_CONVERSION`, `URL_NOT_ALLOWED`, `INVALID_CODE`; 413; 415; 422 `VALIDATION_ERROR`. */
export class FolioValidationError extends FolioApiError {
  static override readonly kind: string = 'FolioValidationError';
}
/** 401 `AUTHENTICATION_ERROR` (missing, malformed, unknown or revoked key). */
export class FolioAuthenticationError extends FolioApiError {
  static override readonly kind: string = 'FolioAuthenticationError';
}
/** 404 `NOT_FOUND`, 405 `METHOD_NOT_ALLOWED`. */
export class FolioNotFoundError extends FolioApiError {
  static override readonly kind: string = 'FolioNotFoundError';
}
/** 422 `UNPROCESSABLE_DOCUMENT`, `URL_FETCH_FAILED`: a well-formed request whose document cannot be processed. */
export class FolioUnprocessableError extends FolioApiError {
  static override readonly kind: string = 'FolioUnprocessableError';
}
/** 429 `RATE_LIMIT_ERROR` (10 in flight per key, or the auth limits); `retryAfter` says when to come back. */
export class FolioRateLimitError extends FolioApiError {
  static override readonly kind: string = 'FolioRateLimitError';
}
/** 500 `INTERNAL_ERROR` and any other 5xx that is not 503/504. */
export class FolioServerError extends FolioApiError {
  static override readonly kind: string = 'FolioServerError';
}
/** 503 `SERVICE_UNAVAILABLE` (saturated, shutting down, engine missing); `retryAfter` says when to come back. */
export class FolioUnavailableError extends FolioApiError {
  static override readonly kind: string = 'FolioUnavailableError';
}
/**
 * 504 `CONVERSION_TIMEOUT` (the server's budget), or a client-side timeout (`status` 0, `code`
 * `CLIENT_TIMEOUT`): `timeout` says which of the client's limits ran out.
 */
export class FolioTimeoutError extends FolioApiError {
  static override readonly kind: string = 'FolioTimeoutError';
  /** 'server' for a 504; 'attempt' (timeoutMs) or 'deadline' (deadlineMs) for the client's own limits. */
  timeout: 'server' | 'attempt' | 'deadline' = 'server';
}
/** No HTTP answer: connection refused or reset, DNS failure, CORS refusal in a browser, … (`status` 0, `cause` set). */
export class FolioNetworkError extends FolioApiError {
  static override readonly kind: string = 'FolioNetworkError';
}

type ApiErrorClass = new (...args: ConstructorParameters<typeof FolioApiError>) => FolioApiError;

const BY_CODE: Record<string, ApiErrorClass> = {
  VALIDATION_ERROR: FolioValidationError,
  INVALID_FILE_FORMAT: FolioValidationError,
  UNSUPPORTED_CONVERSION: FolioValidationError,
  URL_NOT_ALLOWED: FolioValidationError,
  INVALID_CODE: FolioValidationError,
  FILE_TOO_LARGE: FolioValidationError,
  UNSUPPORTED_MEDIA_TYPE: FolioValidationError,
  AUTHENTICATION_ERROR: FolioAuthenticationError,
  NOT_FOUND: FolioNotFoundError,
  METHOD_NOT_ALLOWED: FolioNotFoundError,
  UNPROCESSABLE_DOCUMENT: FolioUnprocessableError,
  URL_FETCH_FAILED: FolioUnprocessableError,
  RATE_LIMIT_ERROR: FolioRateLimitError,
  INTERNAL_ERROR: FolioServerError,
  SERVICE_UNAVAILABLE: FolioUnavailableError,
  CONVERSION_TIMEOUT: FolioTimeoutError,
};

function classForStatus(status: number): ApiErrorClass {
  if (status === 429) return FolioRateLimitError;
  if (status === 503) return FolioUnavailableError;
  if (status === 504) return FolioTimeoutError;
  if (status === 401 || status === 403) return FolioAuthenticationError;
  if (status === 404 || status === 405) return FolioNotFoundError;
  if (status === 422) return FolioUnprocessableError;
  if (status >= 500) return FolioServerError;
  if (status >= 400) return FolioValidationError;
  return FolioApiError;
}

/** The class for an answer: by the envelope's code when the contract knows it, else by the status. */
export function errorClassFor(status: number, code: string | undefined): ApiErrorClass {
  const byCode = code ? BY_CODE[code] : undefined;
  // 422 VALIDATION_ERROR (annotate: a value that cannot be used) is still a validation error.
  return byCode ?? classForStatus(status);
}
