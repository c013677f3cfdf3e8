/**
 * Prometheus metrics (prom-client). Served only on METRICS_PORT, never on the public port (CONTRACT §0).
 */
import http from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface HttpMetrics {
  registry: Registry;
  inFlight: Gauge<'endpoint'>;
  observe(method: string, route: string, status: number, seconds: number): void;
}

export function createHttpMetrics(service: string, registry = new Registry()): HttpMetrics {
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'folio_http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'folio_http_request_duration_seconds',
    help: 'HTTP request latency by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
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
      const labels = { method, route, status: String(status) };
      requests.inc(labels);
      duration.observe(labels, seconds);
    },
  };
}

/** A bare HTTP server answering GET /metrics from the given registries. */
export async function startMetricsServer(host: string, port: number, registries: Registry[]): Promise<http.Server> {
  const merged = Registry.merge(registries);
  const server = http.createServer(async (req, res) => {
    if (req.method === 'GET' && req.url?.split('?')[0] === '/metrics') {
      res.setHeader('Content-Type', merged.contentType);
      res.end(await merged.metrics());
      return;
    }
    res.statusCode = 404;
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ code: 'NOT_FOUND', error: 'Not Found', message: 'Only /metrics is served here', requestId: '-' }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
