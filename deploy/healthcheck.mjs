// Container health check without curl: `node healthcheck.mjs [api|ingest]` (default api).
// api: GET http://127.0.0.1:$PORT/v1/health must answer 200 within 4 s.
// ingest: it has no health route; any HTTP answer of GET /v1/collect on $INGEST_PORT (405) shows the event loop
// is serving.
const mode = process.argv[2] ?? 'api';
const port = mode === 'ingest' ? (process.env.INGEST_PORT ?? '8081') : (process.env.PORT ?? '8080');
const path = mode === 'ingest' ? '/v1/collect' : '/v1/health';
try {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(4000) });
  const ok = mode === 'ingest' ? res.status < 500 : res.status === 200;
  if (!ok) console.error(`health: ${path} answered ${res.status}`);
  process.exit(ok ? 0 : 1);
} catch (e) {
  console.error(`health: ${path} failed: ${e.message}`);
  process.exit(1);
}
