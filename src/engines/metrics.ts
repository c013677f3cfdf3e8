/** Prometheus gauges and counters of the engine pool, read from its status at scrape time. */
import { Gauge, type Registry } from 'prom-client';
import type { EnginePool } from './pool.js';

export function registerEnginePoolMetrics(registry: Registry, pool: EnginePool): void {
  const gauge = (name: string, help: string, read: (s: ReturnType<EnginePool['status']>) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read(pool.status()));
      },
    });
  gauge('folio_engine_workers', 'Engine worker threads alive', (s) => s.workers);
  gauge('folio_engine_busy', 'Engine jobs running on a thread', (s) => s.busy);
  gauge('folio_engine_queued', 'Engine jobs waiting for a thread', (s) => s.queued);
  // Monotonic totals exposed as gauges of the pool's own counters (they reset only with the process).
  gauge('folio_engine_jobs_completed', 'Engine jobs completed since start', (s) => s.completed);
  gauge('folio_engine_timeouts', 'Engine jobs stopped at their time budget since start', (s) => s.timeouts);
  gauge('folio_engine_memory_exceeded', 'Engine jobs stopped at the heap ceiling since start', (s) => s.memoryExceeded);
}
