/**
 * The /metrics server: a collector that throws costs that scrape a 500, not the process (the request listener's
 * promise has nobody to reject to; an unhandled rejection would end it — vitest fails the run on one too).
 */
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Gauge, Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { startMetricsServer } from '../../src/http/metrics.js';

describe('startMetricsServer', () => {
  let server: http.Server | undefined;
  afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  it('answers 500 for a scrape whose collector throws, then serves the next one', async () => {
    const registry = new Registry();
    let failing = true;
    new Gauge({
      name: 'test_flaky',
      help: 'throws while failing is set',
      registers: [registry],
      collect() {
        if (failing) throw new Error('collector failed');
        this.set(1);
      },
    });
    server = await startMetricsServer('127.0.0.1', 0, [registry]);
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
    // Before the fix the failed scrape was never answered: a bounded wait turns that into a failure here.
    const get = (method = 'GET') => fetch(url, { method, signal: AbortSignal.timeout(5000) });
    expect((await get()).status).toBe(500);
    expect((await get('HEAD')).status).toBe(200);
    failing = false;
    const ok = await get();
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('test_flaky 1');
  });
});
