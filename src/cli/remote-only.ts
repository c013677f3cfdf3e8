/** The commands that only make sense against a running service: `keys …` (the API) and `usage` (the ingest). */
import { remoteClient, type GlobalOptions } from './context.js';
import { CliError, EXIT_OK, EXIT_USAGE, table } from './output.js';

function needServer(g: GlobalOptions, what: string): void {
  if (!g.server) throw new CliError('USAGE', `${what} talks to a server: pass --server URL (or set FOLIO_SERVER)`, EXIT_USAGE);
}

export async function keysRegister(email: string, g: GlobalOptions): Promise<number> {
  needServer(g, 'keys register');
  const r = await (await remoteClient(g, false)).register(email);
  process.stdout.write(
    `${r.message} (${r.email}; the code is valid ${Math.round(r.expiresInSeconds / 60)} minutes)\nthen: folio keys verify ${r.email} <code> --server ${g.server}\n`,
  );
  return EXIT_OK;
}

export async function keysVerify(email: string, code: string, opts: { json?: boolean }, g: GlobalOptions): Promise<number> {
  needServer(g, 'keys verify');
  const r = await (await remoteClient(g, false)).verifyEmail(email, code);
  if (opts.json) process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
  else process.stdout.write(`${r.apiKey}\nkey id ${r.keyId} for ${r.email}; shown only this once: export FOLIO_API_KEY=${r.apiKey}\n`);
  return EXIT_OK;
}

export async function keysList(opts: { json?: boolean }, g: GlobalOptions): Promise<number> {
  needServer(g, 'keys list');
  const keys = await (await remoteClient(g)).listKeys();
  if (opts.json) {
    process.stdout.write(`${JSON.stringify({ keys }, null, 2)}\n`);
    return EXIT_OK;
  }
  process.stdout.write(
    `${table(
      ['key id', 'created', 'last used', 'revoked', 'current'],
      keys.map((k) => [k.keyId, k.createdAt, k.lastUsedAt ?? '-', k.revokedAt ?? '-', k.current ? 'yes' : '']),
    )}\n`,
  );
  return EXIT_OK;
}

export async function keysRevoke(keyId: string, g: GlobalOptions): Promise<number> {
  needServer(g, 'keys revoke');
  await (await remoteClient(g)).revokeKey(keyId);
  process.stdout.write(`revoked ${keyId}\n`);
  return EXIT_OK;
}

export interface UsageOptions {
  licenseKey?: string;
  month?: string;
  csv?: boolean;
  json?: boolean;
  ingest?: string;
  adminToken?: string;
}

/** GET {ingest}/v1/usage with the admin token: unique documents and opens of a license key in a month. */
export async function usageCommand(opts: UsageOptions, g: GlobalOptions): Promise<number> {
  const base = (opts.ingest ?? process.env.FOLIO_INGEST_URL ?? 'http://localhost:8081').replace(/\/+$/, '');
  const token = opts.adminToken ?? process.env.FOLIO_ADMIN_TOKEN ?? process.env.ADMIN_TOKEN;
  if (!token)
    throw new CliError('AUTHENTICATION_ERROR', 'the usage report needs the ingest admin token: --admin-token or FOLIO_ADMIN_TOKEN', EXIT_USAGE);
  if (opts.month !== undefined && !/^\d{4}-(0[1-9]|1[0-2])$/.test(opts.month))
    throw new CliError('VALIDATION_ERROR', '--month must be YYYY-MM', EXIT_USAGE);
  if (!opts.licenseKey && !opts.csv)
    throw new CliError('VALIDATION_ERROR', '--license-key is required (or --csv for every key of the month)', EXIT_USAGE);
  const q = new URLSearchParams();
  if (opts.licenseKey) q.set('licenseKey', opts.licenseKey);
  if (opts.month) q.set('month', opts.month);
  if (opts.csv) q.set('format', 'csv');
  void g;
  const res = await fetch(`${base}/v1/usage?${q}`, {
    headers: { authorization: `Bearer ${token}`, accept: opts.csv ? 'text/csv' : 'application/json' },
  });
  const text = await res.text();
  if (!res.ok) {
    let env: { code?: string; message?: string; requestId?: string } = {};
    try {
      env = JSON.parse(text);
    } catch {
      // not the envelope
    }
    throw Object.assign(new CliError(env.code ?? `HTTP_${res.status}`, env.message ?? text.slice(0, 200)), {
      requestId: env.requestId ?? res.headers.get('x-request-id') ?? undefined,
    });
  }
  if (opts.csv || opts.json) {
    process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
    return EXIT_OK;
  }
  const r = JSON.parse(text) as { licenseKey: string; month: string; documents: number; opens: number; hostnames: string[] };
  process.stdout.write(
    `${table(['license key', 'month', 'documents', 'opens', 'hostnames'], [[r.licenseKey, r.month, String(r.documents), String(r.opens), r.hostnames.join(', ') || '-']])}\n`,
  );
  return EXIT_OK;
}
