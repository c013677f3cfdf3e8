/**
 * What the CLI prints: one-line errors (the contract's error code, and the request id of a remote call),
 * plain tables, and the exit codes every command shares.
 */

/** Exit codes: 0 success; 1 a document failed (or a signature is not valid); 2 bad usage or configuration. */
export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** An error the CLI reports on one line, with the contract's code when there is one. */
export class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly exitCode = EXIT_FAILED,
    /** The contract's `details` (field, issue), printed after the message by formatError. */
    readonly details?: Array<{ field: string; issue: string }>,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export interface ErrorFacts {
  code: string;
  message: string;
  requestId?: string;
  status?: number;
  details?: Array<{ field: string; issue: string }>;
}

/**
 * The facts of anything thrown: a FolioError (local engines), the API client's error (remote: code,
 * requestId, details, status; read by shape so a renamed class keeps working), a CliError, or a system error.
 */
export function errorFacts(e: unknown): ErrorFacts {
  if (e && typeof e === 'object') {
    const o = e as { code?: unknown; message?: unknown; requestId?: unknown; status?: unknown; details?: unknown; cause?: unknown; name?: unknown };
    const message = typeof o.message === 'string' && o.message ? o.message : String(e);
    const details = Array.isArray(o.details)
      ? (o.details as unknown[]).filter((d): d is { field: string; issue: string } => !!d && typeof d === 'object' && 'field' in d && 'issue' in d)
      : undefined;
    let code = typeof o.code === 'string' ? o.code : 'ERROR';
    // Node's system errors (ENOENT, …) and fetch failures keep their own words.
    if (o.name === 'TypeError' && message === 'fetch failed') {
      const cause = o.cause as { code?: string; message?: string } | undefined;
      return {
        code: 'CONNECTION_FAILED',
        message: `cannot reach the server${cause?.code ? ` (${cause.code})` : cause?.message ? ` (${cause.message})` : ''}`,
      };
    }
    if (code === 'ENOENT') code = 'FILE_NOT_FOUND';
    return {
      code,
      message,
      requestId: typeof o.requestId === 'string' ? o.requestId : undefined,
      status: typeof o.status === 'number' ? o.status : undefined,
      details: details?.length ? details : undefined,
    };
  }
  return { code: 'ERROR', message: String(e) };
}

/** `CODE: message (field: issue; …) [request id …]` — one line. */
export function formatError(e: unknown): string {
  const f = errorFacts(e);
  const details = f.details?.length ? ` (${f.details.map((d) => `${d.field}: ${d.issue}`).join('; ')})` : '';
  const rid = f.requestId ? ` [request id ${f.requestId}]` : '';
  return `${f.code}: ${oneLine(f.message)}${details}${rid}`;
}

export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

/** A plain left-aligned table; columns as wide as their widest cell. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}
