/**
 * A raw TCP HTTP/1.1 client for the chaos suites: what fetch cannot send (no Host, a body that stops, a
 * trickle, an `Expect` header and a wait for `100 Continue`), with the time each answer and the close came.
 */
import net from 'node:net';

export interface RawAnswer {
  /** Every byte the server sent, as text. */
  text: string;
  /** The responses in order (a `100 Continue` is one), each with its status, lower-cased headers and body. */
  responses: Array<{ status: number; headers: Record<string, string>; body: string; complete: boolean }>;
  /** Milliseconds from connecting to the first byte of the answer, and to the server closing. */
  firstByteMs?: number;
  closedMs?: number;
}

/** A step: bytes to write, or a pause in milliseconds. */
export type Step = string | Buffer | number;

/**
 * Connects, runs `steps` (writes and pauses; a write after the server closed is skipped), and resolves
 * when the server closes (or, with `until: 'answer'`, once a final answer is complete) or `waitMs` after
 * connecting, whichever is first.
 */
export function rawExchange(port: number, steps: Step[], waitMs: number, until: 'close' | 'answer' = 'close'): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let firstByteMs: number | undefined;
    let closedMs: number | undefined;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      resolve({ text, responses: parseResponses(text), firstByteMs, closedMs });
    };
    const timer = setTimeout(finish, waitMs);
    socket.on('data', (d: Buffer) => {
      firstByteMs ??= Date.now() - t0;
      chunks.push(d);
      if (until === 'answer') {
        const last = parseResponses(Buffer.concat(chunks).toString('latin1')).at(-1);
        if (last && last.status >= 200 && last.complete) finish();
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      closedMs = Date.now() - t0;
      finish();
    });
    socket.on('connect', () => {
      void (async () => {
        for (const step of steps) {
          if (typeof step === 'number') await new Promise((r) => setTimeout(r, step));
          else if (!socket.destroyed && socket.writable) socket.write(step);
        }
      })();
    });
  });
}

/** Splits what a server sent into responses (by Content-Length; the 1xx ones have no body). */
export function parseResponses(text: string): RawAnswer['responses'] {
  const out: RawAnswer['responses'] = [];
  let rest = text;
  while (rest.startsWith('HTTP/1.')) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) break;
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const status = Number(statusLine!.split(' ')[1]);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const i = line.indexOf(':');
      headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    const length = status < 200 ? 0 : Number(headers['content-length'] ?? rest.length - end - 4);
    const body = rest.slice(end + 4, end + 4 + length);
    out.push({ status, headers, body, complete: body.length === length });
    rest = rest.slice(end + 4 + length);
  }
  return out;
}
