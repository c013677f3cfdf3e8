// Container health check without curl: `node healthcheck.mjs [api|ingest|ingest-live]` (default api).
// api: GET http://127.0.0.1:$PORT/v1/health must answer 200 within 4 s.
// ingest: GET http://127.0.0.1:$INGEST_PORT/v1/health must answer 200 (the store takes writes).
// ingest-live (Kubernetes liveness): the ingest answers /v1/health within 4 s and is not broken in itself.
//   A 503 because PostgreSQL is unreachable passes (restarting the pod cannot bring the database back, and a
//   restarted ingest would not start without it); a 503 because the SQLite writer thread stopped fails.
const mode = process.argv[2] ?? 'api';
const port = mode.startsWith('ingest') ? (process.env.INGEST_PORT ?? '8081') : (process.env.PORT ?? '8080');
try {
  const res = await fetch(`http://127.0.0.1:${port}/v1/health`, { signal: AbortSignal.timeout(4000) });
  let ok = res.status === 200;
  if (!ok && mode === 'ingest-live' && res.status === 503) {
    const body = await res.json().catch(() => ({}));
    ok = body?.store?.database === 'unreachable';
  }
  if (!ok) console.error(`health: /v1/health answered ${res.status}`);
  process.exit(ok ? 0 : 1);
} catch (e) {
  console.error(`health: /v1/health failed: ${e.message}`);
  process.exit(1);
}
