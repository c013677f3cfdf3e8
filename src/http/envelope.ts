/**
 * The contract's error envelope (docs/api.md § Common rules), used for every error on every path, and the one place that
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
      // A second file is a malformed request, not a large one (readForm names the field when it can).
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
  const multipart = malformedMultipart(thrown);
  if (multipart) return multipart;
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

/**
 * busboy (under @fastify/multipart) reports a malformed multipart body with plain Errors that carry no code,
 * only these messages: the Content-Type's boundary is missing, empty or longer than its search accepts (RFC
 * 2046 allows 70 characters), or the body ends before its closing boundary. Each is the client's mistake.
 */
const MULTIPART_BOUNDARY_ERRORS = [
  'Multipart: Boundary not found',
  'The needle cannot be an empty String/Buffer.',
  'The needle cannot have a length bigger than 256.',
];
const MULTIPART_TRUNCATED = /^(?:Unexpected end of multipart data|.* terminated early due to unexpected end of multipart data)$/;

function malformedMultipart(thrown: unknown): FolioError | undefined {
  if (!(thrown instanceof Error) || (thrown as { code?: unknown }).code !== undefined) return undefined;
  if (MULTIPART_BOUNDARY_ERRORS.includes(thrown.message)) {
    return new FolioError('VALIDATION_ERROR', 'The multipart/form-data Content-Type needs a boundary of 1 to 70 characters', {
      details: [{ field: 'boundary', issue: 'missing, empty or too long in the Content-Type header' }],
    });
  }
  if (MULTIPART_TRUNCATED.test(thrown.message)) {
    return new FolioError('VALIDATION_ERROR', 'The multipart body ended before its closing boundary', {
      details: [{ field: 'file', issue: 'the multipart body is truncated or malformed' }],
    });
  }
  return undefined;
}

export function sendError(request: FastifyRequest, reply: FastifyReply, err: FolioError): FastifyReply {
  if (err.retryAfter !== undefined) reply.header('Retry-After', String(err.retryAfter));
  // Serialised here, not by the route's response schema: a route whose schema for that status is not the
  // envelope (health's 503 is its own body) would otherwise fail to serialise a refusal while draining.
  return reply
    .code(err.status)
    .header('Content-Type', 'application/json; charset=utf-8')
    .send(JSON.stringify(envelopeFor(err, request.id)));
}

/**
 * A whole raw HTTP/1.1 error answer carrying the envelope, for the places that answer before or outside
 * Fastify (Node's parser refusals, the missing Host, an unknown Expect, the server's timeouts): the same
 * body every other error has, a fresh request id, and `Connection: close`.
 */
export function rawErrorEnvelope(
  status: number,
  message: string,
  code: ErrorCode = 'VALIDATION_ERROR',
): { head: Record<string, string>; body: string } {
  const requestId = randomUUID();
  const body = JSON.stringify({ code, error: STATUS_CODES[status] ?? 'Error', message, requestId } satisfies ErrorEnvelope);
  return {
    head: {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': String(Buffer.byteLength(body)),
      'X-Request-Id': requestId,
      Connection: 'close',
    },
    body,
  };
}

/** What Node's parser refusals and its own timeouts become (status and message of the envelope). */
function clientErrorAnswer(code: string | undefined): { status: number; message: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, message: 'The request line or headers are too large' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      // headersTimeout or requestTimeout (src/http/server-limits.ts): the client did not send its request in time.
      return { status: 408, message: 'The request was not received in time (headers or body too slow)' };
    default:
      return { status: 400, message: 'Malformed HTTP request' };
  }
}

/**
 * Fastify's `clientErrorHandler` for every server (API and ingest): requests Node's HTTP parser refuses
 * before any route sees them (oversized request line or headers: 431; malformed: 400) and requests Node's
 * headers/request timeouts end (408) still get the error envelope, with a fresh request id, and the
 * connection is closed. As Node itself does, nothing is written over an answer already under way.
 */
export function clientErrorHandler(err: Error, socket: Duplex): void {
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  if (!socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const { status, message } = clientErrorAnswer((err as NodeJS.ErrnoException).code);
  const { head, body } = rawErrorEnvelope(status, message);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]!}\r\n` +
      Object.entries(head)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('') +
      `\r\n${body}`,
  );
}
