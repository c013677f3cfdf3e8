/**
 * Structured logs (pino). Request logging is our own line per request (route pattern, status, duration,
 * request id); headers and query strings are never logged, and the redaction list is a second guard.
 */
import pino, { type Logger } from 'pino';

/**
 * The lines logged during one turn of the event loop, handed to sonic-boom as one string at the end of the
 * turn. sonic-boom measures the byte length of its pending buffer on every write (a flattening copy of up to
 * 16 KB), which cost more per request line than serialising the line; per turn it is paid once. A line waits
 * at most until the end of the turn it was logged in; `flush`/`flushSync` pass pending lines on first.
 */
class TurnBatch implements pino.DestinationStream {
  private lines: string[] = [];
  private scheduled = false;
  constructor(private readonly out: ReturnType<typeof pino.destination>) {}

  write(line: string): void {
    this.lines.push(line);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.drain);
    }
  }

  private readonly drain = (): void => {
    this.scheduled = false;
    if (this.lines.length === 0) return;
    const text = this.lines.length === 1 ? this.lines[0]! : this.lines.join('');
    this.lines = [];
    this.out.write(text);
  };

  flush(cb?: (err?: Error) => void): void {
    this.drain();
    this.out.flush(cb);
  }

  flushSync(): void {
    this.drain();
    this.out.flushSync();
  }
}

export function createLogger(level: string, name = 'folio', output?: pino.DestinationStream): Logger {
  // Buffered writes: one write(2) per 4 KB of log lines instead of one per request; main.ts flushes on exit.
  let destination = output;
  if (!destination) {
    const stdout = pino.destination({ dest: 1, sync: false, minLength: 4096 });
    // ...and at least once a second, so a quiet server's lines are not held back.
    setInterval(() => stdout.flush(), 1000).unref();
    destination = new TurnBatch(stdout);
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
