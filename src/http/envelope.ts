/**
 * The contract's error envelope (CONTRACT §0), used for every error on every path, and the one place that
 * maps whatever was thrown to it: engines throw domain errors (FolioError with a contract code; the code
 * gives the status), Fastify and its plugins throw their own codes, anything else is a 500.
 */
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { FolioError, type ErrorCode, type ErrorDetail } from '../errors.js';
import { ErrorEnvelope, errorResponses } from './schema.js';

export interface ErrorEnvelope {
  code: ErrorCode;
  error: string;
  message: string;
  requestId: string;
  details?: ErrorDetail[];
}

/** The envelope's schema (src/http/schema.ts), registered once per app as the `ErrorEnvelope` component. */
export const errorEnvelopeSchema = ErrorEnvelope;
export { errorResponses };

export function envelopeFor(err: FolioError, requestId: string): ErrorEnvelope {
  const body: ErrorEnvelope = {
    code: err.code,
    error: STATUS_CODES[err.status] ?? 'Error',
    message: err.message,
    requestId,
  };
  if (err.details && err.details.length > 0) body.details = err.details;
  return body;
}

interface FastifyLikeError {
  code?: string;
  statusCode?: number;
  message: string;
  validation?: Array<{ instancePath?: string; message?: string; params?: Record<string, unknown>; keyword?: string }>;
  validationContext?: string;
}

/** Maps Fastify's built-in and plugin errors onto contract codes; anything unknown is a 500. */
export function toFolioError(thrown: unknown): FolioError {
  if (thrown instanceof FolioError) return thrown;
  const e = (thrown ?? {}) as FastifyLikeError;
  if (e.validation) {
    const where = e.validationContext ?? 'body';
    const details: ErrorDetail[] = e.validation.map((v) => {
      let field = (v.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
      if (v.keyword === 'required' && typeof v.params?.missingProperty === 'string') {
        field = field ? `${field}.${v.params.missingProperty}` : v.params.missingProperty;
      }
      if (v.keyword === 'additionalProperties' && typeof v.params?.additionalProperty === 'string') {
        field = field ? `${field}.${v.params.additionalProperty}` : v.params.additionalProperty;
        return { field, issue: 'unknown property' };
      }
      return { field: field || where, issue: v.message ?? 'is invalid' };
    });
    return new FolioError('VALIDATION_ERROR', `Request ${where} is invalid`, { details });
  }
  switch (e.code) {
    case 'FST_FILES_LIMIT':
      // A second file is a malformed request, not a large one (readSingleFile names the field when it can).
      return new FolioError('VALIDATION_ERROR', 'Exactly one file is expected', { details: [{ field: 'file', issue: 'more than one file' }] });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
    case 'FST_PARTS_LIMIT':
      return new FolioError('FILE_TOO_LARGE', 'The request body exceeds the size limit (25 MB per document)');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return new FolioError('UNSUPPORTED_MEDIA_TYPE', 'Unsupported Content-Type for this operation');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new FolioError('VALIDATION_ERROR', 'The request body is not valid JSON', {
        details: [{ field: 'body', issue: e.message }],
      });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_INVALID_TYPE':
    case 'FST_PROTO_VIOLATION':
    case 'FST_CONSTRUCTOR_VIOLATION':
      return new FolioError('VALIDATION_ERROR', e.message);
    case 'FST_ERR_BAD_URL':
      return new FolioError('NOT_FOUND', 'The requested path does not exist');
    default:
      break;
  }
  if (thrown instanceof SyntaxError) {
    return new FolioError('VALIDATION_ERROR', 'The request body is not valid JSON', {
      details: [{ field: 'body', issue: thrown.message }],
    });
  }
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    const status = e.statusCode;
    const code: ErrorCode =
      status === 413 ? 'FILE_TOO_LARGE' : status === 415 ? 'UNSUPPORTED_MEDIA_TYPE' : status === 404 ? 'NOT_FOUND' : 'VALIDATION_ERROR';
    return new FolioError(code, e.message, { status: code === 'VALIDATION_ERROR' ? 400 : status });
  }
  return new FolioError('INTERNAL_ERROR', 'An unexpected error occurred', { cause: thrown });
}

export function sendError(request: FastifyRequest, reply: FastifyReply, err: FolioError): FastifyReply {
  if (err.retryAfter !== undefined) reply.header('Retry-After', String(err.retryAfter));
  return reply.code(err.status).header('Content-Type', 'application/json; charset=utf-8').send(envelopeFor(err, request.id));
}

/**
 * Fastify's `clientErrorHandler` for every server (API and ingest): requests Node's HTTP parser refuses
 * before any route sees them (oversized request line or headers: 431; malformed: 400) still get the error
 * envelope, with a fresh request id, and the connection is closed.
 */
export function clientErrorHandler(err: Error, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const tooLarge = (err as NodeJS.ErrnoException).code === 'HPE_HEADER_OVERFLOW';
  const status = tooLarge ? 431 : 400;
  const reason = STATUS_CODES[status]!;
  const body = JSON.stringify({
    code: 'VALIDATION_ERROR',
    error: reason,
    message: tooLarge ? 'The request line or headers are too large' : 'Malformed HTTP request',
    requestId: randomUUID(),
  } satisfies ErrorEnvelope);
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\n` +
      `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Connection: close\r\n\r\n${body}`,
  );
}
