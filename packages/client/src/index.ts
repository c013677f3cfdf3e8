/**
 * @folio/client — runs unchanged in browsers and Node 20+ (ESM; WebCrypto, fetch; no static Node import:
 *   `node:fs` is loaded dynamically, only when a file is uploaded from a path).
 * - `new Folio(options)`, `folio.open(input)` → `FolioDocument` (documentId, guid, createdAt, export()).
 * - `new FolioClient({ baseUrl, apiKey })` for the Folio API.
 */
export { Folio, FolioDocument, COMMUNITY_LICENSE_KEY, DEFAULT_TELEMETRY_ENDPOINT } from './folio.js';
export type { FolioOptions, FolioTelemetryOptions, DocumentInput } from './folio.js';
export { FolioClient, toBase64, fromBase64 } from './api-client.js';
export type * from './api-client.js';
export { parseRetryAfter, backoffDelay, DEFAULT_RETRY, DEFAULT_TIMEOUT_MS, DEFAULT_DEADLINE_MS } from './transport.js';
/** Every request and answer of the API, generated from its OpenAPI document. */
export type * as ApiTypes from './api-types.js';
export {
  FolioClientError,
  FolioApiError,
  FolioValidationError,
  FolioAuthenticationError,
  FolioNotFoundError,
  FolioUnprocessableError,
  FolioRateLimitError,
  FolioServerError,
  FolioUnavailableError,
  FolioTimeoutError,
  FolioNetworkError,
} from './errors.js';
export type { ErrorDetail, FolioApiErrorExtra } from './errors.js';
export { readDocxMetadata, writeDocxMetadata, type DocxMetadata } from './docx.js';
export { sha256Hex, documentIdOf, type IdentityRule } from './identity.js';
export { openEventBody, type OpenEvent } from './telemetry.js';
export { LIBRARY_VERSION } from './version.js';
