/**
 * The ingest's billing-integrity limits. A license key is public by design (it ships inside every customer's
 * web page), so anyone can send events under it; what the ingest can do is bound how fast, and how many new
 * documents a key can be billed for in an hour:
 * - requests per license key and per client address per minute (429 + Retry-After), checked before the
 *   body is read, so a flood costs no parsing and no database work;
 * - NEW unique documents per license key per hour (429 + Retry-After): re-opens of documents already
 *   counted this month never count against it and are never refused by it;
 * - wrong ADMIN_TOKEN presentations per client address (429 + Retry-After once over, even for the right
 *   token, which is what makes the throttle stop guessing rather than only hide the answers).
 * With REDIS_URL every counter is shared by the instances (the request windows are window.ts's; the two
 * additive counters below use the same key prefix, Lua-atomic update-and-expire, and fall back to an
 * in-process count while Redis is unreachable, as window.ts does). A setting of 0 turns its limit off.
 *
 * The new-documents count is exact, not estimated: it is fed after each commit with the rows the commit
 * actually added to telemetry_documents (store.ts's AppendOutcome). Before a request is stored, a cheap
 * test (committed this hour + documents in requests still being committed + this request's documents ≤
 * cap) admits it; only a key near or over its cap pays for the exact test, a lookup of which of the
 * request's documents are already counted this month, and is refused only for documents that are new.
 * The check and the reservation happen in one synchronous step, so concurrent requests on one instance
 * cannot pass the cap together. What can: requests of one key admitted on different instances at the same
 * moment, before either commit is counted (the in-flight reservations are per instance); the request
 * limit per key bounds that to a few batches.
 */
import type { Coordination } from '../coordination/redis.js';
import { LocalWindowCounter, SharedWindowCounter, type WindowLimiter } from '../coordination/window.js';
import { FolioError } from '../errors.js';
import { monthOf, type CollectRecord } from './payload.js';
import type { AppendOutcome, TelemetryStore } from './store.js';

export interface IngestLimitSettings {
  /** POST /v1/collect requests per license key per minute (0: no limit). */
  keyRequestsPerMinute: number;
  /** POST /v1/collect requests per client address per minute (0: no limit). */
  addressRequestsPerMinute: number;
  /** New unique documents per license key per hour (0: no limit). */
  newDocumentsPerHour: number;
  /** Wrong ADMIN_TOKEN presentations per client address per ADMIN_FAILURE_WINDOW_MS (0: no limit). */
  adminFailuresPerAddress: number;
}

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
export const ADMIN_FAILURE_WINDOW_MS = 15 * MINUTE_MS;

/** A count per client in fixed windows, added to by any amount; `add(client, 0)` reads it. */
interface Tally {
  add(client: string, n: number): Promise<{ count: number; retryAfter: number }>;
}

class LocalTally implements Tally {
  private readonly windows = new Map<string, { start: number; count: number }>();
  constructor(
    private readonly windowMs: number,
    private readonly now: () => number,
  ) {}

  async add(client: string, n: number) {
    const now = this.now();
    if (this.windows.size > 100_000) {
      for (const [k, v] of this.windows) if (now - v.start >= this.windowMs) this.windows.delete(k);
    }
    let w = this.windows.get(client);
    if (!w || now - w.start >= this.windowMs) {
      if (n === 0) return { count: 0, retryAfter: 0 };
      w = { start: now, count: 0 };
      this.windows.set(client, w);
    }
    w.count += n;
    return { count: w.count, retryAfter: Math.max(1, Math.ceil((w.start + this.windowMs - now) / 1000)) };
  }
}

/**
 * KEYS[1] = counter, ARGV[1] = amount (0 reads without creating), ARGV[2] = window in ms. Returns
 * {count, ms left in the window}. The window starts with the first non-zero add and expires with its key.
 */
const TALLY_ADD = `
local n = tonumber(ARGV[1])
if n == 0 then
  local v = redis.call('GET', KEYS[1])
  if not v then return {0, 0} end
  return {tonumber(v), redis.call('PTTL', KEYS[1])}
end
local count = redis.call('INCRBY', KEYS[1], n)
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return {count, ttl}`;

type TallyCommand = { folioTallyAdd(key: string, n: number, windowMs: number): Promise<[number, number]> };

class SharedTally implements Tally {
  private readonly local: LocalTally;
  constructor(
    private readonly coordination: Coordination,
    private readonly name: string,
    private readonly windowMs: number,
    now: () => number,
  ) {
    this.local = new LocalTally(windowMs, now);
    if (!(coordination.redis as unknown as Partial<TallyCommand>).folioTallyAdd) {
      coordination.redis.defineCommand('folioTallyAdd', { numberOfKeys: 1, lua: TALLY_ADD });
    }
  }

  async add(client: string, n: number) {
    if (this.coordination.available) {
      try {
        const [count, ms] = await (this.coordination.redis as unknown as TallyCommand).folioTallyAdd(
          `${this.coordination.prefix}tally:${this.name}:${client}`,
          n,
          this.windowMs,
        );
        return { count: Number(count), retryAfter: Math.max(1, Math.ceil(Number(ms) / 1000)) };
      } catch (err) {
        this.coordination.commandFailed(err);
      }
    }
    return this.local.add(client, n);
  }
}

function rateLimited(message: string, retryAfter: number, reason: string): FolioError {
  const e = new FolioError('RATE_LIMIT_ERROR', message, { retryAfter });
  (e as { ingestReason?: string }).ingestReason = reason;
  return e;
}

export class IngestLimits {
  private readonly perKey?: WindowLimiter;
  private readonly perAddress?: WindowLimiter;
  private readonly newDocuments?: Tally;
  private readonly adminFailures?: Tally;
  /** Distinct documents of requests admitted on this instance and not yet committed, per key. */
  private readonly pending = new Map<string, number>();

  constructor(
    private readonly settings: IngestLimitSettings,
    coordination?: Coordination,
    now: () => number = Date.now,
  ) {
    const window = (name: string, limit: number): WindowLimiter =>
      coordination ? new SharedWindowCounter(coordination, name, MINUTE_MS, limit, now) : new LocalWindowCounter(MINUTE_MS, limit, now);
    const tally = (name: string, windowMs: number): Tally =>
      coordination ? new SharedTally(coordination, name, windowMs, now) : new LocalTally(windowMs, now);
    if (settings.keyRequestsPerMinute > 0) this.perKey = window('ingest-key', settings.keyRequestsPerMinute);
    if (settings.addressRequestsPerMinute > 0) this.perAddress = window('ingest-address', settings.addressRequestsPerMinute);
    if (settings.newDocumentsPerHour > 0) this.newDocuments = tally('ingest-new-documents', HOUR_MS);
    if (settings.adminFailuresPerAddress > 0) this.adminFailures = tally('ingest-admin-failures', ADMIN_FAILURE_WINDOW_MS);
  }

  /** Counts a POST /v1/collect; throws 429 when the address or the key is over its per-minute limit. */
  async admitRequest(licenseKey: string, address: string): Promise<void> {
    const byAddress = (await this.perAddress?.hit(address)) ?? 0;
    if (byAddress > 0) {
      throw rateLimited(
        `Too many telemetry requests from this address (${this.settings.addressRequestsPerMinute} per minute)`,
        byAddress,
        'rate_limited',
      );
    }
    const byKey = (await this.perKey?.hit(licenseKey)) ?? 0;
    if (byKey > 0) {
      throw rateLimited(`Too many telemetry requests for this license key (${this.settings.keyRequestsPerMinute} per minute)`, byKey, 'rate_limited');
    }
  }

  /**
   * Admits the record's documents under the new-documents cap, or throws 429. The returned function must
   * be called once the record's commit has ended (either way): it releases the reservation.
   */
  async admitDocuments(record: CollectRecord, store: TelemetryStore): Promise<() => void> {
    const cap = this.settings.newDocumentsPerHour;
    if (!this.newDocuments) return () => undefined;
    const ids = [...new Set(record.events.map((e) => e.documentId).filter((d): d is string => d !== null))];
    if (ids.length === 0) return () => undefined;
    const key = record.licenseKey;
    const committed = await this.newDocuments.add(key, 0);
    let reserve = ids.length;
    if (committed.count + (this.pending.get(key) ?? 0) + ids.length > cap) {
      // Near or over the cap: only documents not yet counted this month may be refused. Documents of
      // requests still being committed count as new until they are (read after the lookup, so requests
      // admitted meanwhile are seen): near the cap that errs towards refusing, for milliseconds.
      const known = await store.knownDocuments(key, monthOf(record.receivedAt), ids);
      reserve = ids.filter((d) => !known.has(d)).length;
      if (reserve > 0 && committed.count + (this.pending.get(key) ?? 0) + reserve > cap) {
        throw rateLimited(
          `This license key has reached its limit of ${cap} new documents per hour; documents already counted are still accepted`,
          // No window yet means it is about to begin with the commits in flight: a whole one to wait.
          committed.retryAfter || HOUR_MS / 1000,
          'new_documents_cap',
        );
      }
    }
    this.pending.set(key, (this.pending.get(key) ?? 0) + reserve);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.pending.get(key) ?? 0) - reserve;
      if (left > 0) this.pending.set(key, left);
      else this.pending.delete(key);
    };
  }

  /** Counts what a commit added; called before the commit's requests are answered. */
  async committed(outcome: AppendOutcome): Promise<void> {
    const tally = this.newDocuments;
    if (!tally) return;
    await Promise.all([...outcome.newDocuments].filter(([, n]) => n > 0).map(([key, n]) => tally.add(key, n)));
  }

  /** Seconds to wait when the address is over its ADMIN_TOKEN failures, else 0. */
  async adminBlocked(address: string): Promise<number> {
    if (!this.adminFailures) return 0;
    const r = await this.adminFailures.add(address, 0);
    return r.count >= this.settings.adminFailuresPerAddress ? r.retryAfter : 0;
  }

  /** Counts a wrong ADMIN_TOKEN from the address. */
  async adminFailed(address: string): Promise<void> {
    await this.adminFailures?.add(address, 1);
  }
}
