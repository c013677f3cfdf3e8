/** Prometheus counters of the ingest (prom-client, registered in the registry main.ts serves on METRICS_PORT). */
import { Counter, Histogram, type Registry } from 'prom-client';

export type RejectReason =
  | 'missing_license_key'
  | 'invalid_license_key'
  | 'body_too_large'
  | 'invalid_json'
  | 'invalid_payload'
  | 'unsupported_media_type'
  | 'legacy_payload'
  | 'rate_limited'
  | 'new_documents_cap'
  | 'store_failure';

export interface IngestMetrics {
  accepted(events: number): void;
  rejected(reason: RejectReason, events?: number): void;
  committed(batchSize: number): void;
  /** A batch whose COMMIT lost its connection was settled by writing it again, or could not be. */
  uncertainCommit(settled: boolean): void;
}

export function createIngestMetrics(registry: Registry): IngestMetrics {
  const accepted = new Counter({
    name: 'folio_telemetry_events_accepted_total',
    help: 'Telemetry events durably stored and acknowledged with 202',
    registers: [registry],
  });
  const rejected = new Counter({
    name: 'folio_telemetry_events_rejected_total',
    help: 'Telemetry payloads not stored, by reason (a payload whose events cannot be counted counts as one)',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const commits = new Counter({
    name: 'folio_telemetry_commits_total',
    help: 'Store transactions committed (each carries one or more requests: group commit)',
    registers: [registry],
  });
  const batch = new Histogram({
    name: 'folio_telemetry_commit_batch_requests',
    help: 'Requests written per store transaction',
    buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000],
    registers: [registry],
  });
  const uncertain = new Counter({
    name: 'folio_telemetry_uncertain_commits_total',
    help: 'Batches whose COMMIT lost its connection: settled (written again, answered 202) or unsettled (answered 503, may be stored)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  uncertain.inc({ outcome: 'settled' }, 0);
  uncertain.inc({ outcome: 'unsettled' }, 0);
  // Zero-initialise every reason so dashboards see the series before the first rejection.
  for (const r of [
    'missing_license_key',
    'invalid_license_key',
    'body_too_large',
    'invalid_json',
    'invalid_payload',
    'unsupported_media_type',
    'legacy_payload',
    'rate_limited',
    'new_documents_cap',
    'store_failure',
  ] as RejectReason[])
    rejected.inc({ reason: r }, 0);
  return {
    accepted: (n) => accepted.inc(n),
    rejected: (reason, n = 1) => rejected.inc({ reason }, n),
    uncertainCommit: (settled) => uncertain.inc({ outcome: settled ? 'settled' : 'unsettled' }),
    committed: (size) => {
      commits.inc();
      batch.observe(size);
    },
  };
}
