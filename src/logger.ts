/**
 * Structured logs (pino). Request logging is our own line per request (route pattern, status, duration,
 * request id); headers and query strings are never logged, and the redaction list is a second guard.
 */
import pino, { type Logger } from 'pino';

export function createLogger(level: string, name = 'folio', output?: pino.DestinationStream): Logger {
  // Buffered writes: one write(2) per 4 KB of log lines instead of one per request; main.ts flushes on exit.
  let destination = output;
  if (!destination) {
    const stdout = pino.destination({ dest: 1, sync: false, minLength: 4096 });
    // ...and at least once a second, so a quiet server's lines are not held back.
    setInterval(() => stdout.flush(), 1000).unref();
    destination = stdout;
  }
  return pino(
    {
      name,
      level,
      redact: {
        paths: ['req.headers.authorization', 'req.headers["x-license-key"]', 'apiKey', 'code', 'password', '*.apiKey', '*.code'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
