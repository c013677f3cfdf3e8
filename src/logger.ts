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

/** Loggers made by createLogger: their line format is pino's default, so requestLineWriter may build it. */
const ownLoggers = new WeakSet<Logger>();

/** Writes the one line per request: `request completed` with its id, method, route pattern, status and ms. */
export type RequestLineWriter = (debug: boolean, reqId: string, method: string, route: string, status: number, ms: number) => void;

/**
 * The per-request line of `logger`. For a logger of createLogger the line is put together here, byte for
 * byte what pino writes for `logger.info({reqId, method, route, status, ms}, 'request completed')`
 * (level, time, the logger's bindings, the fields, msg): pino's generic path (serializer lookups, string
 * escaping, the redaction pass) is about 1 µs of a request that costs 20–40 µs. Nothing is escaped because
 * nothing can need it: the request id is a UUID or the client's if it matches `[A-Za-z0-9._:-]{1,64}`
 * (request-id.ts), the method is one Node's parser accepted (a token), the route is a pattern Folio
 * registered (JSON-encoded once per pattern) and the rest are numbers. Any other logger (tests pass plain
 * pino) gets the same fields through pino.
 */
export function requestLineWriter(logger: Logger): RequestLineWriter {
  if (!ownLoggers.has(logger)) {
    const lines = logger.child({}, { redact: [] });
    return (debug, reqId, method, route, status, ms) => {
      const line = { reqId, method, route, status, ms };
      if (debug) lines.debug(line, 'request completed');
      else lines.info(line, 'request completed');
    };
  }
  const symbols = pino.symbols;
  const stream = (logger as unknown as Record<symbol, pino.DestinationStream>)[symbols.streamSym]!;
  const bindings = (logger as unknown as Record<symbol, string>)[symbols.chindingsSym]!;
  const time = (logger as unknown as Record<symbol, () => string>)[symbols.timeSym]!;
  const { info, debug: debugLevel } = logger.levels.values as { info: number; debug: number };
  const routeJson = new Map<string, string>();
  return (debug, reqId, method, route, status, ms) => {
    const level = debug ? debugLevel! : info!;
    if (level < logger.levelVal) return;
    let routeField = routeJson.get(route);
    if (routeField === undefined) {
      routeField = JSON.stringify(route);
      if (routeJson.size < 10_000) routeJson.set(route, routeField);
    }
    stream.write(
      `{"level":${level}${time()}${bindings},"reqId":"${reqId}","method":"${method}","route":${routeField},"status":${status},"ms":${ms},"msg":"request completed"}\n`,
    );
  };
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
  const logger = pino(
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
  ownLoggers.add(logger);
  return logger;
}
