/**
 * In-process cache of API key lookups (SHA-256 of the key → owner and revocation), so an authenticated
 * request needs no database round trip. Bounded (least recently used entries go first, approximately: an
 * entry is moved to the young end at most once a second, so a hit allocates nothing) and short-lived: the
 * caller passes the maximum age on every read (long while revocations arrive through Redis, a few seconds
 * otherwise), so an entry stored while subscribed is judged by the short age as soon as the subscription
 * is lost. Unknown keys are never cached, so a key issued on another instance works at once.
 *
 * Every invalidation bumps a generation number: a lookup that started before an invalidation does not
 * store its (possibly stale) answer, so a revocation racing a database read cannot be undone by it.
 */
export interface CachedKey {
  keyId: string;
  email: string;
  keyHash: string;
  revoked: boolean;
  lastUsedAt: number | null;
  /** What authentication answers for this key (one object per entry, not one per request). */
  owner: { keyId: string; email: string };
}

interface Entry {
  key: CachedKey;
  storedAt: number;
  promotedAt: number;
}

/** An entry is moved to the most-recently-used end at most this often. */
const PROMOTE_INTERVAL_MS = 1000;

export class KeyCache {
  private readonly entries = new Map<string, Entry>();
  /** keyId → key hash, to evict by the id a revocation names. */
  private readonly hashByKeyId = new Map<string, string>();
  private gen = 0;

  constructor(
    readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  get generation(): number {
    return this.gen;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The entry for `keyHash` if it is younger than `maxAgeMs`. */
  get(keyHash: string, maxAgeMs: number): CachedKey | undefined {
    const entry = this.entries.get(keyHash);
    if (entry === undefined) return undefined;
    const now = this.now();
    if (now - entry.storedAt >= maxAgeMs) {
      this.delete(keyHash, entry.key.keyId);
      return undefined;
    }
    if (now - entry.promotedAt >= PROMOTE_INTERVAL_MS) {
      // Most recently used last: Map keeps insertion order, so the first entry is the eviction candidate.
      entry.promotedAt = now;
      this.entries.delete(keyHash);
      this.entries.set(keyHash, entry);
    }
    return entry.key;
  }

  /** Stores `key` unless an invalidation happened since `generation` was read (the lookup's start). */
  set(key: CachedKey, generation: number): void {
    if (generation !== this.gen) return;
    const now = this.now();
    this.entries.delete(key.keyHash);
    this.entries.set(key.keyHash, { key, storedAt: now, promotedAt: now });
    this.hashByKeyId.set(key.keyId, key.keyHash);
    while (this.entries.size > this.maxEntries) {
      const [oldest, entry] = this.entries.entries().next().value as [string, Entry];
      this.delete(oldest, entry.key.keyId);
    }
  }

  /** Forgets the key with this id (revoked here or on another instance). */
  evictKeyId(keyId: string): void {
    this.gen++;
    const hash = this.hashByKeyId.get(keyId);
    if (hash !== undefined) this.delete(hash, keyId);
  }

  /** Forgets everything (invalidations may have been missed). */
  flush(): void {
    this.gen++;
    this.entries.clear();
    this.hashByKeyId.clear();
  }

  private delete(keyHash: string, keyId: string): void {
    this.entries.delete(keyHash);
    if (this.hashByKeyId.get(keyId) === keyHash) this.hashByKeyId.delete(keyId);
  }
}
