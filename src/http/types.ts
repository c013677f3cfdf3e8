/** What the HTTP layer attaches to requests, and the route options each route declares. */
import type { TSchema } from '@fastify/type-provider-typebox';
import type { AuthenticatedKey } from '../auth/index.js';
import type { Deadline } from '../budget/index.js';

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

export {};
