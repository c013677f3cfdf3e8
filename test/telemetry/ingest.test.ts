/**
 * The ingest over HTTP (docs/api.md § Telemetry ingest) against both stores: SQLite (default) and PostgreSQL (a fresh database
 * per run; skipped with a printed reason when the server is absent).
 */
import Database from 'better-sqlite3';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/postgres.js';
import { ADMIN_TOKEN, collect, event, metricValue, payload, startTestIngest, usage, type TestIngest } from './helpers.js';

const pgUp = await postgresAvailable();
if (!pgUp) console.log('telemetry: PostgreSQL is not reachable at 127.0.0.1:5432; the PostgreSQL ingest suite is skipped');

/** Every stored value of every telemetry table, as one string (to prove what is and is not kept). */
async function dumpStore(t: TestIngest, db?: TestDatabase): Promise<string> {
  const tables = ['telemetry_requests', 'telemetry_events', 'telemetry_documents', 'telemetry_hostnames'];
  if (!db) {
    const sqlite = new Database(path.join(t.dataDir, 'telemetry.sqlite'), { readonly: true });
    try {
      return JSON.stringify(tables.map((name) => sqlite.prepare(`SELECT * FROM ${name}`).all()));
    } finally {
      sqlite.close();
    }
  }
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    const out = [];
    for (const name of tables) out.push((await client.query(`SELECT * FROM ${name}`)).rows);
    return JSON.stringify(out);
  } finally {
    await client.end();
  }
}

const suites: Array<[string, boolean]> = [
  ['SQLite', true],
  ['PostgreSQL', pgUp],
];

describe.each(suites)('ingest on %s', (name, available) => {
  let t: TestIngest;
  let db: TestDatabase | undefined;

  beforeAll(async () => {
    if (!available) return;
    if (name === 'PostgreSQL') db = await createTestDatabase('folio_telemetry');
    t = await startTestIngest(db ? { TELEMETRY_DATABASE_URL: db.url } : {});
    expect(t.ingest.store.dialect).toBe(db ? 'postgres' : 'sqlite');
  });
  afterAll(async () => {
    await t?.close();
    await db?.drop();
  });

  it.skipIf(!available)('answers 202 {accepted} with CORS headers for a valid event', async () => {
    const r = await collect(t, payload([event('a'.repeat(64))]), 'lic_accept');
    expect(r.status).toBe(202);
    expect(r.json).toEqual({ accepted: 1 });
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.headers.get('access-control-allow-credentials')).toBeNull();
    expect(r.headers.get('set-cookie')).toBeNull();
    expect(r.headers.get('x-request-id')).toBeTruthy();
  });

  it.skipIf(!available)('counts a document once per key and month however often it is opened; opens apart', async () => {
    const key = 'lic_count';
    for (let i = 0; i < 3; i++) expect((await collect(t, payload([event('doc-1')]), key)).status).toBe(202);
    expect((await collect(t, payload([event('doc-2'), event(null), event('doc-1')]), key)).status).toBe(202);
    expect((await collect(t, payload([event('doc-1')]), 'lic_other')).status).toBe(202);
    const month = new Date().toISOString().slice(0, 7);
    const r = await usage(t, `licenseKey=${key}&month=${month}`);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ licenseKey: key, month, documents: 2, opens: 6, hostnames: ['app.example.com'] });
    expect(await t.ingest.store.documentIds(key, month)).toEqual(['doc-1', 'doc-2']);
    const other = await usage(t, `licenseKey=lic_other&month=${month}`);
    expect(other.json).toMatchObject({ documents: 1, opens: 1 });
  });

  it.skipIf(!available)('bills by UTC month of the receive time, not the client clock', async () => {
    const key = 'lic_months';
    t.clock.now = Date.parse('2026-01-31T23:59:59.000Z');
    await collect(t, payload([event('doc-m', { timestamp: '2026-02-01T08:00:00.000+09:00' })], { browserInfo: { hostname: 'a.example' } }), key);
    t.clock.now = Date.parse('2026-02-01T00:00:01.000Z');
    await collect(t, payload([event('doc-m')], { browserInfo: { hostname: 'b.example' } }), key);
    await collect(t, payload([event('doc-n')], { browserInfo: { hostname: 'b.example' } }), key);
    t.clock.now = undefined;
    expect((await usage(t, `licenseKey=${key}&month=2026-01`)).json).toEqual({
      licenseKey: key,
      month: '2026-01',
      documents: 1,
      opens: 1,
      hostnames: ['a.example'],
    });
    expect((await usage(t, `licenseKey=${key}&month=2026-02`)).json).toEqual({
      licenseKey: key,
      month: '2026-02',
      documents: 2,
      opens: 2,
      hostnames: ['b.example'],
    });
    expect((await usage(t, `licenseKey=${key}&month=2026-03`)).json).toMatchObject({ documents: 0, opens: 0, hostnames: [] });
  });

  it.skipIf(!available)("accepts SuperDoc's payload (superdocVersion, HASH ids, null ids, empty key) and folioVersion", async () => {
    const month = new Date().toISOString().slice(0, 7);
    const superdoc = {
      superdocVersion: '1.4.0',
      browserInfo: {
        userAgent: 'Mozilla/5.0',
        currentUrl: 'https://docs.customer.test/a',
        hostname: 'docs.customer.test',
        screenSize: { width: 1280, height: 720 },
      },
      events: [{ timestamp: new Date().toISOString(), documentId: 'HASH-A5FD6589', documentCreatedAt: '2024-01-15T10:30:00Z' }],
    };
    expect((await collect(t, superdoc, 'sd_license')).status).toBe(202);
    const nodeShape = {
      superdocVersion: 'unknown',
      browserInfo: { userAgent: '', currentUrl: '', hostname: '', screenSize: { width: 0, height: 0 } },
      events: [{ timestamp: new Date().toISOString(), documentId: null, documentCreatedAt: null }],
    };
    expect((await collect(t, nodeShape, 'sd_license')).status).toBe(202);
    expect((await collect(t, { folioVersion: '0.9.0', events: [event('f-1')] }, 'sd_license')).status).toBe(202);
    expect((await usage(t, `licenseKey=sd_license&month=${month}`)).json).toEqual({
      licenseKey: 'sd_license',
      month,
      documents: 2,
      opens: 3,
      hostnames: ['docs.customer.test'],
    });
    // An empty X-License-Key (SuperDoc without a configured key) counts under the community key.
    expect((await collect(t, payload([event('community-doc')]), '')).status).toBe(202);
    expect((await usage(t, `licenseKey=community-and-eval-agplv3&month=${month}`)).json).toMatchObject({ documents: 1 });
  });

  it.skipIf(!available)("answers SuperDoc's older batched-array payload with 2xx and never bills it", async () => {
    const before = await metricValue(t, 'folio_telemetry_events_rejected_total', { reason: 'legacy_payload' });
    const legacy = [
      {
        id: 'e1',
        type: 'usage',
        sessionId: 's',
        superdocId: 'x',
        superdocVersion: '0.20.0',
        document: { name: 'n.docx', size: 10, crc32: 'ABCDEF01' },
      },
      { id: 'e2', type: 'parsing', sessionId: 's', documentGuid: 'g', superdocVersion: '0.20.0' },
    ];
    const r = await collect(t, legacy, 'lic_legacy');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ accepted: 0, ignored: 2 });
    const month = new Date().toISOString().slice(0, 7);
    expect((await usage(t, `licenseKey=lic_legacy&month=${month}`)).json).toMatchObject({ documents: 0, opens: 0 });
    expect(await metricValue(t, 'folio_telemetry_events_rejected_total', { reason: 'legacy_payload' })).toBe(before + 2);
  });

  it.skipIf(!available)('stores the origin and path of the page, never its query, fragment or the client IP', async () => {
    expect((await collect(t, payload([event('privacy-doc')], { metadata: { plan: 'pro', build: 7 } }), 'lic_privacy')).status).toBe(202);
    const dump = await dumpStore(t, db);
    expect(dump).toContain('https://app.example.com');
    expect(dump).toContain('/editor/42');
    expect(dump).toContain('{\\"plan\\":\\"pro\\",\\"build\\":7}');
    expect(dump).not.toContain('token=secret');
    expect(dump).not.toContain('frag');
    expect(dump).not.toContain('127.0.0.1');
  });

  it.skipIf(!available)('answers the CORS preflight for any origin without credentials', async () => {
    const r = await fetch(`${t.url}/v1/collect`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://anywhere.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-license-key',
      },
    });
    expect(r.status).toBe(204);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.headers.get('access-control-allow-methods')).toContain('POST');
    expect(r.headers.get('access-control-allow-headers')).toBe('Content-Type, X-License-Key');
    expect(Number(r.headers.get('access-control-max-age'))).toBeGreaterThan(0);
    expect(r.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it.skipIf(!available)('GET /v1/usage needs the admin token; JSON needs licenseKey; CSV lists every key of the month', async () => {
    expect((await usage(t, 'licenseKey=lic_count', null)).status).toBe(401);
    const wrong = await usage(t, 'licenseKey=lic_count', 'not-the-admin-token');
    expect(wrong.status).toBe(401);
    expect(wrong.json.code).toBe('AUTHENTICATION_ERROR');
    const missing = await usage(t, '');
    expect(missing.status).toBe(400);
    expect(missing.json.details).toEqual([{ field: 'licenseKey', issue: 'required' }]);
    expect((await usage(t, 'licenseKey=x&month=2026-13')).status).toBe(400);
    expect((await usage(t, 'licenseKey=x&month=2026-1')).status).toBe(400);

    await collect(t, payload([event('csv-doc')], { browserInfo: { hostname: 'csv.example' } }), '=HYPERLINK("x"),evil');
    const month = new Date().toISOString().slice(0, 7);
    const csv = await usage(t, `format=csv&month=${month}`);
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toContain('text/csv');
    const lines = csv.text.trimEnd().split('\r\n');
    expect(lines[0]).toBe('licenseKey,month,documents,opens,hostnames');
    expect(lines).toContain(`lic_count,${month},2,6,app.example.com`);
    // A key that looks like a spreadsheet formula is neutralised and quoted.
    expect(lines).toContain(`"'=HYPERLINK(""x""),evil",${month},1,1,csv.example`);
    const one = await usage(t, `format=csv&month=${month}&licenseKey=lic_other`);
    expect(one.text).toBe(`licenseKey,month,documents,opens,hostnames\r\nlic_other,${month},1,1,app.example.com\r\n`);
  });

  it.skipIf(!available)('batches concurrent requests into fewer commits, and acknowledges each after its commit', async () => {
    const commitsBefore = await metricValue(t, 'folio_telemetry_commits_total');
    const acceptedBefore = await metricValue(t, 'folio_telemetry_events_accepted_total');
    const n = 200;
    const results = await Promise.all(Array.from({ length: n }, (_, i) => collect(t, payload([event(`burst-${i}`)]), 'lic_burst')));
    expect(results.every((r) => r.status === 202)).toBe(true);
    const commits = (await metricValue(t, 'folio_telemetry_commits_total')) - commitsBefore;
    expect(commits).toBeGreaterThan(0);
    expect(commits).toBeLessThan(n);
    expect((await metricValue(t, 'folio_telemetry_events_accepted_total')) - acceptedBefore).toBe(n);
    const month = new Date().toISOString().slice(0, 7);
    expect((await t.ingest.store.documentIds('lic_burst', month)).length).toBe(n);
  });

  it.skipIf(!available)('answers unknown paths and methods with the error envelope', async () => {
    const nf = await fetch(`${t.url}/v1/nope`);
    expect(nf.status).toBe(404);
    expect((await nf.json()).code).toBe('NOT_FOUND');
    const wrong = await fetch(`${t.url}/v1/collect`);
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toContain('POST');
    expect((await wrong.json()).code).toBe('METHOD_NOT_ALLOWED');
  });
});

describe('ingest without ADMIN_TOKEN', () => {
  let t: TestIngest;
  beforeAll(async () => {
    t = await startTestIngest({ ADMIN_TOKEN: '' });
  });
  afterAll(async () => t?.close());

  it('refuses the usage report to everyone', async () => {
    for (const token of [ADMIN_TOKEN, '', 'anything-at-all-123456']) {
      const r = await usage(t, 'licenseKey=x', token || null);
      expect(r.status).toBe(401);
      expect(r.json.code).toBe('AUTHENTICATION_ERROR');
    }
  });
});
