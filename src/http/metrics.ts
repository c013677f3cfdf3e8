/**
 * Prometheus metrics (prom-client). Served only on METRICS_PORT, never on the public port (docs/api.md § Common rules).
 */
import http from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { applyServerLimits, type ServerLimits } from './server-limits.js';
import { clientErrorHandler } from './envelope.js';

export interface HttpMetrics {
  registry: Registry;
  inFlight: Gauge<'endpoint'>;
  observe(method: string, route: string, status: number, seconds: number): void;
}

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
type RequestLabel = 'method' | 'route' | 'status';

/** One (method, route, status) series: its count, sum and per-bucket counts (not cumulative). */
interface Series {
  labels: Record<RequestLabel, string>;
  count: number;
  sum: number;
  buckets: number[];
  /** Requests not yet passed on to the counter (at the next scrape). */
  uncounted: number;
}

/**
 * `folio_http_requests_total` and `folio_http_request_duration_seconds` from one plain aggregation per
 * (method, route, status). prom-client's own `inc(labels)` and `observe(labels, v)` validate and hash the
 * label object on every call (about 1 µs of a request that costs 20–40 µs); here a request is three Map
 * lookups of strings Folio already holds (the route pattern, the method, the status) and a few additions.
 * The metrics stay prom-client's, registered, named and exposed by it as before: the counter is brought up
 * to date through its public `collect` callback at each scrape; the histogram answers its series from the
 * aggregation in the exact form prom-client's Histogram produces (`getForPromString`, which the registry
 * and `get()` read).
 */
class RequestSeries {
  private readonly byRoute = new Map<string, Map<string, Map<number, Series>>>();
  /** Every series in the order first seen (prom-client's order of exposition). */
  private readonly ordered: Series[] = [];

  record(method: string, route: string, status: number, seconds: number): void {
    let byMethod = this.byRoute.get(route);
    if (byMethod === undefined) this.byRoute.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()));
    let series = byStatus.get(status);
    if (series === undefined) {
      series = { labels: { method, route, status: String(status) }, count: 0, sum: 0, buckets: DURATION_BUCKETS.map(() => 0), uncounted: 0 };
      byStatus.set(status, series);
      this.ordered.push(series);
    }
    series.count++;
    series.uncounted++;
    series.sum += seconds;
    for (let i = 0; i < DURATION_BUCKETS.length; i++) {
      if (seconds <= DURATION_BUCKETS[i]!) {
        series.buckets[i]!++;
        break;
      }
    }
  }

  all(): readonly Series[] {
    return this.ordered;
  }

  clear(): void {
    this.byRoute.clear();
    this.ordered.length = 0;
  }
}

class RequestDurationHistogram extends Histogram<RequestLabel> {
  constructor(
    private readonly series: RequestSeries,
    registry: Registry,
  ) {
    super({
      name: 'folio_http_request_duration_seconds',
      help: 'HTTP request latency by route and status',
      labelNames: ['method', 'route', 'status'],
      buckets: DURATION_BUCKETS,
      registers: [registry],
    });
  }

  /** What prom-client's Histogram.getForPromString answers, from the aggregation. */
  async getForPromString() {
    const name = 'folio_http_request_duration_seconds';
    const values: Array<{ labels: object; sharedLabels: object; value: number; metricName: string; exemplar: null | undefined }> = [];
    for (const s of this.series.all()) {
      let acc = 0;
      DURATION_BUCKETS.forEach((le, i) => {
        acc += s.buckets[i]!;
        values.push({ labels: { le }, sharedLabels: s.labels, value: acc, metricName: `${name}_bucket`, exemplar: null });
      });
      values.push({ labels: { le: '+Inf' }, sharedLabels: s.labels, value: s.count, metricName: `${name}_bucket`, exemplar: null });
      values.push({ labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${name}_sum`, exemplar: undefined });
      values.push({ labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${name}_count`, exemplar: undefined });
    }
    return { name, help: 'HTTP request latency by route and status', type: 'histogram', values, aggregator: 'sum' };
  }

  override reset(): void {
    // Also called by prom-client's constructor, before `series` is set.
    (this.series as RequestSeries | undefined)?.clear();
    super.reset();
  }
}

export function createHttpMetrics(service: string, registry = new Registry()): HttpMetrics {
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  const series = new RequestSeries();
  new Counter({
    name: 'folio_http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
    collect() {
      for (const s of series.all()) {
        if (s.uncounted === 0) continue;
        this.inc(s.labels, s.uncounted);
        s.uncounted = 0;
      }
    },
  });
  new RequestDurationHistogram(series, registry);
  const inFlight = new Gauge({
    name: 'folio_http_in_flight_requests',
    help: 'Document-endpoint requests in flight, by endpoint',
    labelNames: ['endpoint'] as const,
    registers: [registry],
  });
  return {
    registry,
    inFlight,
    observe(method, route, status, seconds) {
      series.record(method, route, status, seconds);
    },
  };
}

/**
 * A bare HTTP server answering GET (and HEAD) /metrics from the given registries, under `limits` when given
 * (the same time budgets as the public servers: a scraper is a client too).
 */
export async function startMetricsServer(host: string, port: number, registries: Registry[], limits?: ServerLimits): Promise<http.Server> {
  const merged = Registry.merge(registries);
  const server = http.createServer((req, res) => {
    // HEAD answers as GET does, without the body (Node leaves it out): a scraper's probe sees 200.
    if ((req.method === 'GET' || req.method === 'HEAD') && req.url?.split('?')[0] === '/metrics') {
      res.setHeader('Content-Type', merged.contentType);
      if (req.method === 'HEAD') {
        res.end();
        return;
      }
      // Nobody awaits a request listener, so a collector that throws would be an unhandled rejection, which ends
      // the process: it costs this scrape a 500 instead.
      merged.metrics().then(
        (text) => res.end(text),
        () => {
          res.statusCode = 500;
          res.end();
        },
      );
      return;
    }
    res.statusCode = 404;
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ code: 'NOT_FOUND', error: 'Not Found', message: 'Only /metrics is served here', requestId: '-' }));
  });
  if (limits) applyServerLimits(server, limits);
  // Parser refusals and timeouts in the envelope, as on the public servers.
  server.on('clientError', clientErrorHandler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
