/**
 * Domain errors shared by every engine. Engines know nothing of HTTP: they throw a FolioError with one of
 * the contract's error codes, and the HTTP layer maps the code to its status (see STATUS_BY_CODE).
 */
export type ErrorCode =
  | 'VALIDATION_ERROR'
  | 'INVALID_FILE_FORMAT'
  | 'UNSUPPORTED_CONVERSION'
  | 'URL_NOT_ALLOWED'
  | 'INVALID_CODE'
  | 'AUTHENTICATION_ERROR'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'FILE_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'UNPROCESSABLE_DOCUMENT'
  | 'URL_FETCH_FAILED'
  | 'RATE_LIMIT_ERROR'
  | 'INTERNAL_ERROR'
  | 'SERVICE_UNAVAILABLE'
  | 'CONVERSION_TIMEOUT';

export const STATUS_BY_CODE: Record<ErrorCode, number> = {
  VALIDATION_ERROR: 400,
  INVALID_FILE_FORMAT: 400,
  UNSUPPORTED_CONVERSION: 400,
  URL_NOT_ALLOWED: 400,
  INVALID_CODE: 400,
  AUTHENTICATION_ERROR: 401,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  FILE_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  UNPROCESSABLE_DOCUMENT: 422,
  URL_FETCH_FAILED: 422,
  RATE_LIMIT_ERROR: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
  CONVERSION_TIMEOUT: 504,
};

export interface ErrorDetail {
  field: string;
  issue: string;
}

export interface FolioErrorOptions {
  details?: ErrorDetail[];
  /** Overrides the code's usual status (e.g. annotate's 422 VALIDATION_ERROR for an unusable value). */
  status?: number;
  /** Seconds for a Retry-After header (429, 503). */
  retryAfter?: number;
  cause?: unknown;
}

export class FolioError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details?: ErrorDetail[];
  readonly retryAfter?: number;

  constructor(code: ErrorCode, message: string, options: FolioErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'FolioError';
    this.code = code;
    this.status = options.status ?? STATUS_BY_CODE[code];
    this.details = options.details;
    this.retryAfter = options.retryAfter;
  }
}

export const isFolioError = (e: unknown): e is FolioError => e instanceof FolioError;

/** Shorthand for the most common error: a 400 VALIDATION_ERROR on one field. */
export function validationError(field: string, issue: string, message?: string): FolioError {
  return new FolioError('VALIDATION_ERROR', message ?? `Invalid ${field}: ${issue}`, {
    details: [{ field, issue }],
  });
}
