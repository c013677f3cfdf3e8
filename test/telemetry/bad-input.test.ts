/**
 * Bad input to POST /v1/collect: each case gets a clear 4xx in the error envelope, and good events sent at the
 * same time keep being accepted and counted exactly.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, event, metricValue, payload, startTestIngest, usage, type TestIngest } from './helpers.js';

let t: TestIngest;
beforeAll(async () => {
  t = await startTestIngest();
});
afterAll(async () => t?.close());

/** A POST whose body is streamed in chunks, without Content-Length. */
function chunkedPost(url: string, chunks: string[]): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-license-key': 'lic_bad' } }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    for (const c of chunks) req.write(c);
    req.end();
  });
}

const bigString = (n: number) => 'x'.repeat(n);

describe('bad input', () => {
  it('answers each bad request with its 4xx while good events keep flowing', async () => {
    const month = new Date().toISOString().slice(0, 7);
    let stop = false;
    let good = 0;
    const goodStatuses: number[] = [];
    const goodLoop = (async () => {
      while (!stop) {
        const r = await collect(t, payload([event(`good-${good}`)]), 'lic_good');
        goodStatuses.push(r.status);
        good++;
      }
    })();

    const cases: Array<{
      name: string;
      send: () => Promise<{ status: number; json?: any; body?: string }>;
      status: number;
      code: string;
      field?: string;
    }> = [
      { name: 'missing X-License-Key', send: () => collect(t, payload([event('d')]), null), status: 401, code: 'AUTHENTICATION_ERROR' },
      { name: 'license key of 10 KB', send: () => collect(t, payload([event('d')]), bigString(10_000)), status: 401, code: 'AUTHENTICATION_ERROR' },
      { name: 'body not JSON', send: () => collect(t, '{"events": [', 'lic_bad'), status: 400, code: 'VALIDATION_ERROR', field: 'body' },
      { name: 'empty body', send: () => collect(t, '', 'lic_bad'), status: 400, code: 'VALIDATION_ERROR' },
      {
        name: 'JSON that is not an object',
        send: () => collect(t, '"just a string"', 'lic_bad'),
        status: 400,
        code: 'VALIDATION_ERROR',
        field: 'body',
      },
      {
        name: '65 KB body',
        send: () => collect(t, payload([event('d')], { pad: bigString(65 * 1024) }), 'lic_bad'),
        status: 413,
        code: 'FILE_TOO_LARGE',
      },
      {
        name: '65 KB body, chunked',
        send: async () => {
          const r = await chunkedPost(`${t.url}/v1/collect`, [
            JSON.stringify(payload([event('d')])).slice(0, -1),
            `,"pad":"${bigString(65 * 1024)}"}`,
          ]);
          return { status: r.status, json: JSON.parse(r.body) };
        },
        status: 413,
        code: 'FILE_TOO_LARGE',
      },
      {
        name: '101 events',
        send: () => collect(t, payload(Array.from({ length: 101 }, (_, i) => event(`e${i}`))), 'lic_bad'),
        status: 400,
        code: 'VALIDATION_ERROR',
        field: 'events',
      },
      { name: 'no events', send: () => collect(t, payload([]), 'lic_bad'), status: 400, code: 'VALIDATION_ERROR', field: 'events' },
      {
        name: 'events not an array',
        send: () => collect(t, payload('many' as never), 'lic_bad'),
        status: 400,
        code: 'VALIDATION_ERROR',
        field: 'events',
      },
      {
        name: 'documentId a number',
        send: () => collect(t, payload([event(5 as never)]), 'lic_bad'),
        status: 400,
        code: 'VALIDATION_ERROR',
        field: 'events[0].documentId',
      },
      {
        name: 'documentId of 10 KB',
        send: () => collect(t, payload([event(bigString(10 * 1024))]), 'lic_bad'),
        status: 400,
        code: 'VALIDATION_ERROR',
        field: 'events[0].documentId',
      },
      {
        name: 'timestamp "yesterday"',
        send: () => collect(t, payload([event('d', { timestamp: 'yesterday' })]), 'lic_bad'),
        status: 400,
        code: 'VALIDATION_ERROR',
        field: 'events[0].timestamp',
      },
      {
        name: 'timestamp month 13',
        send: () => collect(t, payload([event('d', { timestamp: '2026-13-01T00:00:00Z' })]), 'lic_bad'),
        status: 400,
        code: 'VALIDATION_ERROR',
        field: 'events[0].timestamp',
      },
      {
        name: 'timestamp epoch number',
        send: () => collect(t, payload([event('d', { timestamp: 1700000000000 })]), 'lic_bad'),
        status: 400,
        code: 'VALIDATION_ERROR',
        field: 'events[0].timestamp',
      },
      {
        name: 'timestamp without zone',
        send: () => collect(t, payload([event('d', { timestamp: '2026-01-01T10:00:00' })]), 'lic_bad'),
        status: 400,
        code: 'VALIDATION_ERROR',
        field: 'events[0].timestamp',
      },
      {
        name: 'documentCreatedAt not a date',
        send: () => collect(t, payload([event('d', { documentCreatedAt: 'last tuesday' })]), 'lic_bad'),
        status: 400,
        code: 'VALIDATION_ERROR',
        field: 'events[0].documentCreatedAt',
      },
      {
        name: 'metadata of 1 MB',
        send: () => collect(t, payload([event('d')], { metadata: { blob: bigString(1024 * 1024) } }), 'lic_bad'),
        status: 413,
        code: 'FILE_TOO_LARGE',
      },
      {
        name: 'metadata of 5 KB',
        send: () => collect(t, payload([event('d')], { metadata: { blob: bigString(5 * 1024) } }), 'lic_bad'),
        status: 400,
        code: 'VALIDATION_ERROR',
        field: 'metadata',
      },
      {
        name: 'metadata an array',
        send: () => collect(t, payload([event('d')], { metadata: [1, 2] }), 'lic_bad'),
        status: 400,
        code: 'VALIDATION_ERROR',
        field: 'metadata',
      },
      {
        name: 'no version field',
        send: () => collect(t, { events: [event('d')] }, 'lic_bad'),
        status: 400,
        code: 'VALIDATION_ERROR',
        field: 'libraryVersion',
      },
      {
        name: 'screen width a string',
        send: () => collect(t, payload([event('d')], { browserInfo: { screenSize: { width: 'wide', height: 1 } } }), 'lic_bad'),
        status: 400,
        code: 'VALIDATION_ERROR',
        field: 'browserInfo.screenSize.width',
      },
      {
        name: 'browserInfo an array',
        send: () => collect(t, payload([event('d')], { browserInfo: [] }), 'lic_bad'),
        status: 400,
        code: 'VALIDATION_ERROR',
        field: 'browserInfo',
      },
      {
        name: 'U+0000 in browserInfo.hostname',
        send: () => collect(t, payload([event('d')], { browserInfo: { hostname: 'a\u0000b.example' } }), 'lic_bad'),
        status: 400,
        code: 'VALIDATION_ERROR',
        field: 'browserInfo.hostname',
      },
      {
        name: 'lone surrogate in browserInfo.userAgent (escaped in the JSON)',
        send: () =>
          collect(t, '{"libraryVersion":"1","browserInfo":{"userAgent":"x\\ud800y"},"events":[{"timestamp":"2024-01-01T00:00:00Z"}]}', 'lic_bad'),
        status: 400,
        code: 'VALIDATION_ERROR',
        field: 'browserInfo.userAgent',
      },
      {
        name: 'U+0000 inside metadata',
        send: () => collect(t, payload([event('d')], { metadata: { a: { b: 'x\u0000' } } }), 'lic_bad'),
        status: 400,
        code: 'VALIDATION_ERROR',
        field: 'metadata.a.b',
      },
      {
        name: 'JSON nested 10,000 deep',
        send: () => collect(t, `{"libraryVersion":"1","events":${'['.repeat(10_000)}${']'.repeat(10_000)}}`, 'lic_bad'),
        status: 400,
        code: 'VALIDATION_ERROR',
      },
      {
        name: '__proto__ key',
        send: () => collect(t, '{"libraryVersion":"1","__proto__":{"x":1},"events":[]}', 'lic_bad'),
        status: 400,
        code: 'VALIDATION_ERROR',
      },
      {
        name: 'XML content type',
        send: () => collect(t, '<events/>', 'lic_bad', { 'content-type': 'application/xml' }),
        status: 415,
        code: 'UNSUPPORTED_MEDIA_TYPE',
      },
    ];

    for (const c of cases) {
      const r = await c.send();
      expect(r.status, c.name).toBe(c.status);
      expect(r.json?.code, c.name).toBe(c.code);
      expect(r.json?.requestId, c.name).toBeTruthy();
      expect(typeof r.json?.message, c.name).toBe('string');
      if (c.field)
        expect(
          r.json?.details?.map((d: { field: string }) => d.field),
          c.name,
        ).toContain(c.field);
    }

    // Every offending field is listed, not only the first.
    const many = await collect(t, { libraryVersion: 7, browserInfo: { hostname: 5 }, events: [{ timestamp: 'no', documentId: [] }] }, 'lic_bad');
    expect(many.json.details.map((d: { field: string }) => d.field)).toEqual(
      expect.arrayContaining(['libraryVersion', 'browserInfo.hostname', 'events[0].timestamp', 'events[0].documentId']),
    );

    stop = true;
    await goodLoop;
    expect(good).toBeGreaterThan(0);
    expect(goodStatuses.every((s) => s === 202)).toBe(true);
    expect((await usage(t, `licenseKey=lic_good&month=${month}`)).json).toMatchObject({ documents: good, opens: good });
    expect((await usage(t, `licenseKey=lic_bad&month=${month}`)).json).toMatchObject({ documents: 0, opens: 0 });
    // The service is still up and the rejections are counted by reason.
    expect((await collect(t, payload([event('after')]), 'lic_after')).status).toBe(202);
    expect(await metricValue(t, 'folio_telemetry_events_rejected_total', { reason: 'missing_license_key' })).toBe(1);
    expect(await metricValue(t, 'folio_telemetry_events_rejected_total', { reason: 'invalid_license_key' })).toBe(1);
    expect(await metricValue(t, 'folio_telemetry_events_rejected_total', { reason: 'body_too_large' })).toBe(3);
    expect(await metricValue(t, 'folio_telemetry_events_rejected_total', { reason: 'unsupported_media_type' })).toBe(1);
    expect(await metricValue(t, 'folio_telemetry_events_rejected_total', { reason: 'invalid_json' })).toBeGreaterThanOrEqual(2);
    expect(await metricValue(t, 'folio_telemetry_events_rejected_total', { reason: 'invalid_payload' })).toBeGreaterThanOrEqual(15);
    expect(await metricValue(t, 'folio_telemetry_events_accepted_total')).toBe(good + 1);
  });
});
