/**
 * In-process cache of API key lookups (SHA-256 of the key → owner and revocation), so an authenticated
 * request needs no database round trip. Bounded (least recently used entries go first) and short-lived:
 * the owner of the cache picks each entry's TTL (long while revocations arrive through Redis, a few seconds
 * otherwise). Unknown keys are never cached, so a key issued on another instance works at once.
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
}

interface Entry {
  key: CachedKey;
  expiresAt: number;
}

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

  get(keyHash: string): CachedKey | undefined {
    const entry = this.entries.get(keyHash);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.delete(keyHash, entry.key.keyId);
      return undefined;
    }
    // Most recently used last: Map keeps insertion order, so the first entry is the eviction candidate.
    this.entries.delete(keyHash);
    this.entries.set(keyHash, entry);
    return entry.key;
  }

  /** Stores `key` unless an invalidation happened since `generation` was read (the lookup's start). */
  set(key: CachedKey, ttlMs: number, generation: number): void {
    if (generation !== this.gen || ttlMs <= 0) return;
    this.entries.delete(key.keyHash);
    this.entries.set(key.keyHash, { key, expiresAt: this.now() + ttlMs });
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
