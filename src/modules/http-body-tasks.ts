/** The body thread's task (src/engines/worker.ts): a large JSON request body parsed off the event loop. */
import type { TaskFile, TaskHandlers } from '../engines/tasks.js';
import { decodedBuffers, parseJsonDecoding, type Base64Path, type DecodedField } from '../http/binary-fields.js';

declare module '../engines/tasks.js' {
  interface EngineTasks {
    /**
     * A large JSON request body, parsed off the request thread: the bounded scan and JSON.parse, and every
     * base64 document its route's schema marks decoded to bytes (src/http/binary-fields.ts).
     */
    'http.parseJson': {
      input: { body: Uint8Array; base64Paths: readonly Base64Path[] };
      output: { value: unknown; decoded: DecodedField[] };
    };
  }
}

export const handlers = {
  'http.parseJson': ({ body, base64Paths }) => parseJsonDecoding(body, base64Paths),
} satisfies TaskHandlers<'http.parseJson'>;

/** The decoded documents (up to 25 MB together) are moved back, not copied (issue 24: no second copy). */
export const transfer: TaskFile<'http.parseJson'>['transfer'] = {
  'http.parseJson': ({ decoded }) => decodedBuffers(decoded),
};
