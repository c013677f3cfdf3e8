/** Shared by the entry-point and container tests: an API key through the public flow, a conversion, a P12. */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export const ROOT = path.resolve(import.meta.dirname, '../..');

/** GET /v1/health until it answers 200 (healthy or degraded) or the process gives up; returns the body. */
export async function waitHealthy(url: string, timeoutMs: number, alive: () => boolean, log: () => string): Promise<{ status: string }> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (!alive()) throw new Error(`the server exited during start-up: ${log()}`);
    const r = await fetch(`${url}/v1/health`, { signal: AbortSignal.timeout(3000) }).catch((e: Error) => e);
    if (!(r instanceof Error)) {
      const body = (await r.json()) as { status: string };
      if (r.status === 200 && body.status === 'healthy') return body;
      last = `${r.status} ${JSON.stringify(body)}`;
    } else last = r.message;
    await sleep(500);
  }
  throw new Error(`/v1/health not healthy within ${timeoutMs} ms (last: ${last}): ${log()}`);
}

/** Register → the code from the .eml outbox → verify: a fresh API key. */
export async function newKey(url: string, outbox: string): Promise<string> {
  const email = `deploy-${Date.now().toString(36)}@example.com`;
  const reg = await fetch(`${url}/v1/auth/register?email=${encodeURIComponent(email)}`);
  if (reg.status !== 200) throw new Error(`register answered ${reg.status}: ${await reg.text()}`);
  const deadline = Date.now() + 15_000;
  let code: string | undefined;
  while (!code) {
    if (Date.now() > deadline) throw new Error(`no verification mail for ${email} in ${outbox}`);
    for (const f of fs.existsSync(outbox) ? fs.readdirSync(outbox) : []) {
      const text = fs.readFileSync(path.join(outbox, f), 'utf8');
      if (text.includes(email)) code = /verification code is (\d{6})/.exec(text.replace(/=\r?\n/g, ''))?.[1];
    }
    if (!code) await sleep(200);
  }
  const ver = await fetch(`${url}/v1/auth/verify?email=${encodeURIComponent(email)}&code=${code}`);
  if (ver.status !== 200) throw new Error(`verify answered ${ver.status}: ${await ver.text()}`);
  return ((await ver.json()) as { apiKey: string }).apiKey;
}

/** POST /v1/convert with one file; the status and the answer's bytes. */
export async function convert(url: string, key: string, query: string, name: string, bytes: Uint8Array, timeoutMs = 120_000) {
  const fd = new FormData();
  fd.append('file', new Blob([new Uint8Array(bytes)]), name);
  const r = await fetch(`${url}/v1/convert?${query}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: fd,
    signal: AbortSignal.timeout(timeoutMs),
  });
  return { status: r.status, body: Buffer.from(await r.arrayBuffer()), contentType: r.headers.get('content-type') ?? '' };
}

export const SAMPLE_MARKDOWN = '# Deployed\n\nFolio in a **container**: a list\n\n1. one\n2. two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n';

/** A signing identity made the way operators are told to (scripts/container-signing-key.sh) into `dir`. */
export function makeSigningKey(dir: string): { p12: string; passwordFile: string; subject: string } {
  execFileSync('bash', [path.join(ROOT, 'scripts/container-signing-key.sh'), dir], {
    env: { ...process.env, POSTGRES_PASSWORD: 'unused', FOLIO_SIGNER_SUBJECT: '/O=Folio deploy test/CN=Folio deploy test signer' },
    stdio: 'ignore',
  });
  return { p12: path.join(dir, 'signing.p12'), passwordFile: path.join(dir, 'signing.p12.password'), subject: 'Folio deploy test signer' };
}
