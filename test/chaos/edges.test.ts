/**
 * Issue 24, correct answers at the edges, from the outside: the compiled API as a child process on
 * PostgreSQL reached through a switchable TCP proxy (so the test can take the database away, or make it
 * hang), and the compiled ingest. Before: malformed multipart was a 500 with a stack in the log; health while
 * draining a 500 (FST_ERR_FAILED_ERROR_SERIALIZATION); HEAD register sent a code and HEAD verify used it up;
 * registers that failed during a database outage still counted, so clients got 429 once it was back; a
 * request without Host, an unknown Expect and a missing playground asset got bare bodies; HEAD /metrics was
 * 404. Asserted here: each is now the contract's envelope with the right status, without side effects.
 * Runs last: the SIGTERM drain (health 503 in the envelope while an in-flight conversion finishes 200).
 * About a minute.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FolioProcess, ROOT, serverEntry } from '../adversarial/server.js';
import { spawnIngest, type SpawnedIngest } from './ingest-harness.js';
import { rawExchange, type RawAnswer } from './raw-client.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/postgres.js';

const REGISTER_PER_CLIENT = 6;
const EXCHANGE_TIMEOUT_MS = 2000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A TCP proxy to PostgreSQL that can be switched: `up` forwards, `down` refuses and drops every connection
 * (an outage), `stall` accepts and forwards nothing (a database that hangs). Written here because the
 * switch is the point; the ingest harness's proxy only cuts open connections.
 */
async function switchableProxy(targetPort: number) {
  let mode: 'up' | 'down' | 'stall' = 'up';
  const open = new Set<net.Socket>();
  const server = net.createServer((client) => {
    if (mode === 'down') return client.destroy();
    open.add(client);
    client.on('error', () => undefined);
    client.on('close', () => open.delete(client));
    if (mode === 'stall') return;
    const upstream = net.connect(targetPort, '127.0.0.1');
    open.add(upstream);
    upstream.on('error', () => undefined);
    upstream.on('close', () => (open.delete(upstream), client.destroy()));
    client.on('close', () => upstream.destroy());
    client.on('data', (d: Buffer) => {
      if (mode === 'up') upstream.write(d);
    });
    upstream.on('data', (d: Buffer) => {
      if (mode === 'up') client.write(d);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    set(next: 'up' | 'down' | 'stall') {
      mode = next;
      // Down or back up: every connection opened before is gone (as after a failover).
      if (next !== 'stall') for (const s of open) s.destroy();
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

let api: FolioProcess;
let ingest: SpawnedIngest;
let key: string;
let port: number;
let database: TestDatabase | undefined;
let proxy: Awaited<ReturnType<typeof switchableProxy>> | undefined;
const noPostgres = !(await postgresAvailable());

function envelope(response: RawAnswer['responses'][number] | undefined, status: number, code: string) {
  expect(response, 'an answer').toBeDefined();
  expect(response!.status).toBe(status);
  expect(response!.headers['content-type']).toMatch(/^application\/json/);
  const body = JSON.parse(response!.body) as Record<string, unknown>;
  expect(body).toMatchObject({ code, requestId: expect.any(String), message: expect.any(String), error: expect.any(String) });
  return body;
}

async function envelopeOf(r: Response, status: number, code: string) {
  expect(r.status).toBe(status);
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  const body = (await r.json()) as { code: string; details?: Array<{ field: string; issue: string }> };
  expect(body).toMatchObject({ code, requestId: expect.any(String) });
  return body;
}

const outboxCount = () => {
  const dir = path.join(api.dataDir, 'outbox');
  return fs.existsSync(dir) ? fs.readdirSync(dir).length : 0;
};

/** The code mailed to `email` (the default mailer's .eml outbox). */
async function mailedCode(email: string): Promise<string> {
  const dir = path.join(api.dataDir, 'outbox');
  for (let i = 0; i < 100; i++) {
    for (const f of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
      const text = fs.readFileSync(path.join(dir, f), 'utf8').replace(/=\r?\n/g, '');
      const code = text.includes(email) ? /verification code is (\d{6})/.exec(text)?.[1] : undefined;
      if (code) return code;
    }
    await sleep(100);
  }
  throw new Error(`no code mailed to ${email}`);
}

describe('answers at the edges', () => {
  beforeAll(async () => {
    const env: Record<string, string> = {
      OFFICE_WORKERS: '1',
      ENGINE_WORKERS: '1',
      AUTH_REGISTER_PER_CLIENT: String(REGISTER_PER_CLIENT),
      HTTP_EXCHANGE_TIMEOUT_MS: String(EXCHANGE_TIMEOUT_MS),
    };
    if (!noPostgres) {
      database = await createTestDatabase('folio_chaos_edges');
      proxy = await switchableProxy(Number(new URL(database.url).port || 5432));
      const url = new URL(database.url);
      url.port = String(proxy.port);
      env.DATABASE_URL = url.toString();
    }
    api = await FolioProcess.start(env);
    port = Number(new URL(api.url).port);
    key = await api.newKey();
    ingest = await spawnIngest(ROOT, {}, serverEntry().args);
  }, 180_000);

  afterAll(async () => {
    await api?.stop();
    await ingest?.stop();
    await proxy?.close();
    await database?.drop();
  });

  it('malformed multipart is 400 VALIDATION_ERROR naming the boundary or the file, on convert, verify and merge', async () => {
    const part = (field: string) => `--abc\r\nContent-Disposition: form-data; name="${field}"; filename="a.pdf"\r\n\r\n%PDF-1.7 truncated`;
    const cases = [
      { contentType: 'multipart/form-data', field: 'boundary' },
      { contentType: 'multipart/form-data; boundary=', field: undefined },
      { contentType: `multipart/form-data; boundary=${'b'.repeat(300)}`, field: 'boundary' },
      { contentType: 'multipart/form-data; boundary=abc', field: 'file' },
    ];
    for (const [endpoint, fileField] of [
      ['convert', 'file'],
      ['verify', 'file'],
      ['merge', 'files'],
    ] as const) {
      for (const c of cases) {
        const r = await fetch(`${api.url}/v1/${endpoint}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': c.contentType },
          body: part(fileField),
        });
        const body = await envelopeOf(r, 400, 'VALIDATION_ERROR');
        const fields = (body.details ?? []).map((d) => d.field);
        if (c.field) expect(fields, `${endpoint} ${c.contentType.slice(0, 40)}`).toContain(c.field);
        else expect(fields.some((f) => f === 'boundary' || f === 'file')).toBe(true);
      }
    }
    expect(api.logTail()).not.toMatch(/unhandled error|INTERNAL_ERROR/);
  });

  it('HEAD on register and verify is 405 with Allow: GET, sends no mail and leaves the code usable', async () => {
    const email = `head-${Date.now()}@example.com`;
    const before = outboxCount();
    const headRegister = await fetch(`${api.url}/v1/auth/register?email=${encodeURIComponent(email)}`, { method: 'HEAD' });
    expect(headRegister.status).toBe(405);
    expect(headRegister.headers.get('allow')).toBe('GET');
    await sleep(300);
    expect(outboxCount(), 'no mail written by HEAD').toBe(before);

    expect((await fetch(`${api.url}/v1/auth/register?email=${encodeURIComponent(email)}`)).status).toBe(200);
    const code = await mailedCode(email);
    const verifyUrl = `${api.url}/v1/auth/verify?email=${encodeURIComponent(email)}&code=${code}`;
    const headVerify = await fetch(verifyUrl, { method: 'HEAD' });
    expect(headVerify.status).toBe(405);
    expect(headVerify.headers.get('allow')).toBe('GET');
    const verified = await fetch(verifyUrl);
    expect(verified.status, 'the code was not used up by HEAD').toBe(200);
    expect(((await verified.json()) as { apiKey: string }).apiKey).toMatch(/^folio_sk_/);
  });

  it('no Host is 400 and an unknown Expect is 417, in the envelope, on the API and the ingest', async () => {
    for (const target of [port, Number(new URL(ingest.url).port)]) {
      const noHost = await rawExchange(target, ['GET /v1/health HTTP/1.1\r\n\r\n'], 5000);
      envelope(noHost.responses[0], 400, 'VALIDATION_ERROR');
      expect(noHost.closedMs).toBeLessThan(2000);
      const expectFoo = await rawExchange(target, ['GET /v1/health HTTP/1.1\r\nHost: x\r\nExpect: foo\r\n\r\n'], 5000);
      envelope(expectFoo.responses[0], 417, 'VALIDATION_ERROR');
    }
  });

  it('a missing playground asset is 404 in the envelope', async () => {
    for (const p of ['/assets/no-such-file.js', '/assets/..%2Fsecret', '/assets/.hidden']) {
      await envelopeOf(await fetch(`${api.url}${p}`), 404, 'NOT_FOUND');
    }
  });

  it('HEAD /metrics answers 200 as GET does', async () => {
    const get = await fetch(api.metricsUrl);
    expect(get.status).toBe(200);
    expect(await get.text()).toMatch(/^# HELP /m);
    const head = await fetch(api.metricsUrl, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
  });

  it.skipIf(noPostgres)('registers that fail during a database outage do not count against the client (then it may register)', async () => {
    proxy!.set('down');
    try {
      // More failures than the whole window allows: each would have counted before.
      for (let i = 0; i < REGISTER_PER_CLIENT + 2; i++) {
        const r = await fetch(`${api.url}/v1/auth/register?email=outage-${i}@example.com`);
        await envelopeOf(r, 503, 'SERVICE_UNAVAILABLE');
        expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
      }
    } finally {
      proxy!.set('up');
    }
    let r: Response | undefined;
    for (let i = 0; i < 20; i++) {
      r = await fetch(`${api.url}/v1/auth/register?email=after-outage@example.com`);
      if (r.status !== 503) break;
      await sleep(250);
    }
    expect(r!.status, await r!.clone().text()).toBe(200);
  });

  it.skipIf(noPostgres)('a non-document exchange that hangs on the database is answered 503 in the envelope at the exchange timeout', async () => {
    proxy!.set('stall');
    try {
      const t0 = Date.now();
      const r = await fetch(`${api.url}/v1/auth/register?email=stalled@example.com`, { signal: AbortSignal.timeout(20_000) });
      const ms = Date.now() - t0;
      await envelopeOf(r, 503, 'SERVICE_UNAVAILABLE');
      expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(ms).toBeGreaterThanOrEqual(EXCHANGE_TIMEOUT_MS - 100);
      expect(ms).toBeLessThan(EXCHANGE_TIMEOUT_MS + 3000);
    } finally {
      proxy!.set('up');
    }
  });

  it("the ingest's health while draining is 503 in the envelope", async () => {
    const ingestPort = Number(new URL(ingest.url).port);
    // A request begun before SIGTERM (headers half sent) is still answered; it arrives while closing.
    const pending = rawExchange(ingestPort, ['GET /v1/health HTTP/1.1\r\nHost: x\r\n', 600, '\r\n'], 10_000);
    await sleep(300);
    ingest.child.kill('SIGTERM');
    const r = await pending;
    envelope(r.responses[0], 503, 'SERVICE_UNAVAILABLE');
    expect(r.responses[0]!.headers['retry-after']).toMatch(/^\d+$/);
  });

  it("the API's health while draining is 503 in the envelope, and an in-flight conversion finishes 200", async () => {
    // A Markdown → PDF conversion of 4,000 long paragraphs (2.2 MB, ~700 pages) takes several seconds
    // (Markdown → DOCX → LibreOffice); SIGTERM comes 1 s after it was sent.
    const md = Array.from({ length: 4000 }, (_, i) => `Paragraph ${i} ${'lorem ipsum dolor sit amet '.repeat(20)}\n\n`).join('');
    const form = new FormData();
    form.append('file', new Blob([md], { type: 'text/markdown' }), 'long.md');
    let convertedAt = 0;
    const conversion = fetch(`${api.url}/v1/convert?to=pdf`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form }).then(
      async (r) => {
        const bytes = Buffer.from(await r.arrayBuffer());
        convertedAt = Date.now();
        return { status: r.status, bytes };
      },
    );
    await sleep(800);
    let healthAt = 0;
    const health = rawExchange(port, ['GET /v1/health HTTP/1.1\r\nHost: x\r\n', 400, '\r\n'], 30_000).then((r) => ((healthAt = Date.now()), r));
    await sleep(200);
    process.kill(api.pid, 'SIGTERM');
    const h = await health;
    envelope(h.responses[0], 503, 'SERVICE_UNAVAILABLE');
    expect(h.responses[0]!.headers['retry-after']).toMatch(/^\d+$/);
    const c = await conversion;
    expect(c.status).toBe(200);
    expect(c.bytes.subarray(0, 5).toString()).toBe('%PDF-');
    expect(healthAt, 'health answered while the conversion was still running').toBeLessThan(convertedAt);
  }, 60_000);
});
