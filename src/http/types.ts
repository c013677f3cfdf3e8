/** What the HTTP layer attaches to requests, and the route options each route declares. */
import type { TSchema } from '@fastify/type-provider-typebox';
import type { Deadline } from '../budget/index.js';

/**
 * What the auth hook needs to admit a key. Declared here, below the capabilities, so the HTTP layer does not
 * depend on src/auth; src/auth's service implements it (and re-exports both types).
 */
export interface AuthenticatedKey {
  keyId: string;
  email: string;
}

export interface KeyAuthenticator {
  /** Resolves a raw `folio_sk_…` key to its owner, or null when malformed, unknown or revoked. */
  authenticate(rawKey: string): Promise<AuthenticatedKey | null>;
  /**
   * Optional synchronous answer from an in-process cache: the owner, null (known revoked), or undefined
   * when only `authenticate` can tell. Lets the HTTP hook admit a cached key without a promise.
   */
  authenticateCached?(rawKey: string): AuthenticatedKey | null | undefined;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook on routes with `config.auth = true`. */
    apiKey?: AuthenticatedKey;
    /** Set while the request holds one of its key's document-endpoint slots. */
    holdsDocumentSlot?: boolean;
    startedAt?: bigint;
    /** Document endpoints: the request's one time budget (REQUEST_TIMEOUT_MS), started when it arrived. */
    deadline?: Deadline;
  }
  interface FastifyContextConfig {
    /** Requires `Authorization: Bearer <API key>`. */
    auth?: boolean;
    /** Counts toward the per-key limit of requests in flight (convert, annotate, sign, verify). */
    documentEndpoint?: boolean;
    /** Name used in metrics and logs for the in-flight gauge. */
    endpoint?: string;
    /**
     * The multipart/form-data body as OpenAPI describes it. Read by the route itself (request.parts()), so
     * not validated by Fastify; @fastify/swagger's transform (app.ts) adds it to the operation's requestBody.
     */
    multipartBody?: TSchema;
  }
}
