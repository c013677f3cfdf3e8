/**
 * Registration by e-mailed code and API key management (docs/api.md § Getting a key).
 *
 * - Codes: 6 digits, 15 minutes, single use, void after 5 wrong attempts; stored as HMAC-SHA256 keyed with a
 *   secret kept in the store (so every instance sharing a database agrees), compared in constant time.
 * - register answers the same for known and unknown addresses; a per-address cooldown and a per-client
 *   window limit answer 429.
 * - Keys: see keys.ts. Lookups are cached in process (key-cache.ts): 60 s while revocations arrive through
 *   Redis pub/sub (every instance, the revoking one included, evicts the key at once), 5 s otherwise.
 *   last_used_at is written at most once a minute per key to keep authentication cheap.
 * - With REDIS_URL the per-client windows live in Redis (src/coordination/window.ts), in process while it is
 *   unreachable; codes, attempts, the cooldown (the code's createdAt) and keys live in the store.
 */
import path from 'node:path';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { FolioError } from '../errors.js';
import { createMailer, type Mailer } from './mailer.js';
import { PostgresAuthStore, SqliteAuthStore, type AuthStore } from './store.js';
import { generateApiKey, generateCode, generateKeyId, hashApiKey, hashesEqual, isWellFormedApiKey } from './keys.js';
import type { AuthService, AuthenticatedKey, IssuedKey, KeySummary } from './types.js';
import { KeyCache, type CachedKey } from './key-cache.js';
import type { Coordination } from '../coordination/redis.js';
import { LocalWindowCounter, SharedWindowCounter, type WindowLimiter } from '../coordination/window.js';

export const CODE_TTL_SECONDS = 15 * 60;
export const MAX_CODE_ATTEMPTS = 5;

export interface AuthPolicy {
  resendCooldownMs: number;
  /** Requests per client (IP) per window, for register and verify separately. */
  clientWindowMs: number;
  registerPerClient: number;
  verifyPerClient: number;
}

export const DEFAULT_AUTH_POLICY: AuthPolicy = {
  resendCooldownMs: 60_000,
  clientWindowMs: 10 * 60_000,
  registerPerClient: 20,
  verifyPerClient: 30,
};

const EMAIL = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

export function normalizeEmail(raw: string): string {
  const email = raw.trim().toLowerCase();
  if (email.length > 254 || !EMAIL.test(email) || email.split('@')[0]!.length > 64) {
    throw new FolioError('VALIDATION_ERROR', 'email is not a valid e-mail address', {
      details: [{ field: 'email', issue: 'not a valid e-mail address' }],
    });
  }
  return email;
}

/** The channel (after REDIS_KEY_PREFIX) on which every instance announces revoked key ids (JSON `{"keyId"}`). */
export const REVOCATION_CHANNEL = 'auth:revoked';

export interface KeyCacheOptions {
  /** Entries kept at most (least recently used evicted first). */
  maxEntries: number;
  /** TTL while this instance is subscribed to revocations through Redis. */
  subscribedTtlMs: number;
  /** TTL without Redis, or while its subscription is down: the longest a revoked key keeps working here. */
  unsubscribedTtlMs: number;
}

export const DEFAULT_KEY_CACHE: KeyCacheOptions = { maxEntries: 10_000, subscribedTtlMs: 60_000, unsubscribedTtlMs: 5_000 };

export interface AuthServiceOptions {
  /** REDIS_URL: shared register/verify windows and revocations announced to every instance. */
  coordination?: Coordination;
  keyCache?: Partial<KeyCacheOptions>;
}

/** How long a revocation waits for its own pub/sub message before answering anyway. */
const ECHO_WAIT_MS = 200;

/** last_used_at is written at most this often per key. */
const TOUCH_INTERVAL_MS = 60_000;

export class DefaultAuthService implements AuthService {
  private readonly registerLimiter: WindowLimiter;
  private readonly verifyLimiter: WindowLimiter;
  private readonly touched = new Map<string, number>();
  private readonly keyCache: KeyCache;
  private readonly cacheOptions: KeyCacheOptions;
  private readonly coordination?: Coordination;
  /** Revocations not yet announced because Redis was unreachable; announced when it is back. */
  private readonly unannounced = new Set<string>();
  private readonly detach: Array<() => void> = [];
  /** Revocations published by this instance and waiting for their own message to come back. */
  private readonly echoes = new Map<string, () => void>();

  constructor(
    private readonly store: AuthStore,
    private readonly mailer: Mailer,
    private readonly codeSecret: Buffer,
    private readonly logger: Logger,
    private readonly policy: AuthPolicy = DEFAULT_AUTH_POLICY,
    private readonly now: () => number = Date.now,
    options: AuthServiceOptions = {},
  ) {
    this.coordination = options.coordination;
    this.cacheOptions = { ...DEFAULT_KEY_CACHE, ...options.keyCache };
    this.keyCache = new KeyCache(this.cacheOptions.maxEntries, now);
    const c = this.coordination;
    if (c) {
      this.registerLimiter = new SharedWindowCounter(c, 'register', policy.clientWindowMs, policy.registerPerClient, now);
      this.verifyLimiter = new SharedWindowCounter(c, 'verify', policy.clientWindowMs, policy.verifyPerClient, now);
      c.subscribe(c.prefix + REVOCATION_CHANNEL, (message) => this.onRevocationMessage(message));
      // Subscribed or not, revocations may have been missed around the change: start again from the store.
      this.detach.push(
        c.onSubscriptionChange(() => this.keyCache.flush()),
        c.onStateChange((up) => {
          // Revocations published while this instance could not receive them: start again from the store.
          if (up) {
            this.keyCache.flush();
            void this.announcePending();
          }
        }),
      );
    } else {
      this.registerLimiter = new LocalWindowCounter(policy.clientWindowMs, policy.registerPerClient, now);
      this.verifyLimiter = new LocalWindowCounter(policy.clientWindowMs, policy.verifyPerClient, now);
    }
  }

  /** Cache statistics for health and tests. */
  keyCacheState(): { entries: number; ttlMs: number } {
    return { entries: this.keyCache.size, ttlMs: this.cacheTtl() };
  }

  private cacheTtl(): number {
    return this.coordination?.isSubscribed ? this.cacheOptions.subscribedTtlMs : this.cacheOptions.unsubscribedTtlMs;
  }

  private onRevocationMessage(message: string): void {
    let keyId: unknown;
    try {
      keyId = (JSON.parse(message) as { keyId?: unknown }).keyId;
    } catch {
      return;
    }
    if (typeof keyId !== 'string') return;
    this.keyCache.evictKeyId(keyId);
    const echo = this.echoes.get(keyId);
    if (echo) echo();
  }

  /**
   * Publishes a revocation and waits (at most ECHO_WAIT_MS) for this instance's own copy of the message:
   * Redis sends every subscriber its copy in the same pass, so once ours is here the others' are on the
   * wire, and the revoking request answers only then.
   */
  private async announce(keyId: string): Promise<void> {
    const c = this.coordination;
    if (!c) return;
    let resolveEcho = () => {};
    // Resolved on the next turn of the event loop, not in the callback that read our copy: another
    // subscriber connection on this event loop (two replicas in one test process) may have its copy in the
    // same batch of reads, and microtasks would otherwise run before it is read.
    const echoed = c.isSubscribed ? new Promise<void>((r) => (resolveEcho = () => setImmediate(r))) : undefined;
    if (echoed) this.echoes.set(keyId, resolveEcho);
    const published = await c.publish(c.prefix + REVOCATION_CHANNEL, JSON.stringify({ keyId }));
    if (echoed && published) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([echoed, new Promise<void>((r) => (timer = setTimeout(r, ECHO_WAIT_MS)))]);
      clearTimeout(timer);
    }
    if (echoed) this.echoes.delete(keyId);
    if (published) {
      this.unannounced.delete(keyId);
    } else {
      // Other instances then see it within their short TTL (their subscription is down too) or when Redis
      // returns; kept bounded.
      if (this.unannounced.size < 10_000) this.unannounced.add(keyId);
    }
  }

  private async announcePending(): Promise<void> {
    for (const keyId of [...this.unannounced]) await this.announce(keyId);
  }

  private hashCode(email: string, code: string): string {
    return createHmac('sha256', this.codeSecret).update(`${email}\n${code}`).digest('hex');
  }

  async register(rawEmail: string, clientId: string): Promise<{ expiresInSeconds: number }> {
    const email = normalizeEmail(rawEmail);
    const wait = await this.registerLimiter.hit(clientId);
    if (wait > 0) throw new FolioError('RATE_LIMIT_ERROR', 'Too many registration requests; try again later', { retryAfter: wait });
    const attempt = { mailed: false };
    try {
      return await this.sendCode(email, attempt);
    } catch (err) {
      // Failed on the server's side (the store unreachable: 5xx, or anything not a FolioError) before any
      // mail went out: the client's hit is given back, so a database outage does not leave every client that
      // tried during it rate-limited for the rest of the window. A 4xx (bad address, cooldown) stays counted,
      // and so does a failed send: a relay refusing an address must not become unlimited sends to it.
      if (!attempt.mailed && (!(err instanceof FolioError) || err.status >= 500)) {
        await this.registerLimiter.undo(clientId).catch((e: unknown) => this.logger.warn({ err: e }, 'could not give back a rate-limit hit'));
      }
      throw err;
    }
  }

  private async sendCode(email: string, attempt: { mailed: boolean }): Promise<{ expiresInSeconds: number }> {
    const now = this.now();
    const cooldown = async () => {
      const previous = await this.store.getCode(email);
      const since = previous && previous.usedAt === null ? previous.createdAt : now - this.policy.resendCooldownMs;
      const retry = Math.ceil((since + this.policy.resendCooldownMs - now) / 1000);
      return new FolioError('RATE_LIMIT_ERROR', 'A code was sent to this address moments ago; wait before asking again', {
        retryAfter: Math.max(1, retry),
      });
    };
    const previous = await this.store.getCode(email);
    if (previous && previous.usedAt === null && now - previous.createdAt < this.policy.resendCooldownMs) throw await cooldown();
    const code = generateCode();
    const codeHash = this.hashCode(email, code);
    // The cooldown is checked again in the write itself: another instance may have sent a code meanwhile.
    const stored = await this.store.putCode(
      { email, codeHash, createdAt: now, expiresAt: now + CODE_TTL_SECONDS * 1000 },
      now - this.policy.resendCooldownMs,
    );
    if (!stored) throw await cooldown();
    attempt.mailed = true;
    try {
      await this.mailer.send({
        to: email,
        subject: 'Your Folio verification code',
        text:
          `Your Folio verification code is ${code}\n\n` +
          `It is valid for 15 minutes and can be used once. If you did not ask for it, ignore this message.\n`,
      });
    } catch (err) {
      // Nobody received this code: void it, so the address's cooldown does not hold back the retry.
      await this.store.consumeCode(email, codeHash, now, MAX_CODE_ATTEMPTS).catch(() => undefined);
      throw err;
    }
    return { expiresInSeconds: CODE_TTL_SECONDS };
  }

  async verify(rawEmail: string, code: string, clientId: string): Promise<IssuedKey> {
    const email = normalizeEmail(rawEmail);
    if (!/^\d{6}$/.test(code)) {
      throw new FolioError('VALIDATION_ERROR', 'code must be 6 digits', { details: [{ field: 'code', issue: 'must be 6 digits' }] });
    }
    const wait = await this.verifyLimiter.hit(clientId);
    const now = this.now();
    if (wait > 0) throw new FolioError('RATE_LIMIT_ERROR', 'Too many verification attempts; try again later', { retryAfter: wait });
    const invalid = () => new FolioError('INVALID_CODE', 'The code is wrong, expired or already used');
    const record = await this.store.getCode(email);
    const candidate = this.hashCode(email, code);
    if (!record) {
      // Same work as a real comparison, so timing does not tell whether a code exists for the address.
      timingSafeEqual(Buffer.from(candidate, 'hex'), Buffer.from(candidate, 'hex'));
      throw invalid();
    }
    if (record.usedAt !== null || record.expiresAt <= now || record.attempts >= MAX_CODE_ATTEMPTS) throw invalid();
    if (!hashesEqual(record.codeHash, candidate)) {
      await this.store.recordFailedAttempt(email);
      throw invalid();
    }
    if (!(await this.store.consumeCode(email, record.codeHash, now, MAX_CODE_ATTEMPTS))) throw invalid();
    return this.issueKey(email);
  }

  async issueKey(rawEmail: string): Promise<IssuedKey> {
    const email = normalizeEmail(rawEmail);
    const apiKey = generateApiKey();
    const createdAt = this.now();
    const keyId = generateKeyId();
    await this.store.insertKey({ keyId, email, keyHash: hashApiKey(apiKey), createdAt, lastUsedAt: null, revokedAt: null });
    this.logger.info({ keyId }, 'API key issued');
    return { apiKey, keyId, email, createdAt: new Date(createdAt).toISOString() };
  }

  /**
   * The cache alone, synchronously: the owner of a cached, unrevoked key; null for a cached revoked key;
   * undefined when the cache cannot tell (a miss: use `authenticate`). A hit needs neither the database nor
   * Redis and allocates nothing but the hash; last use is recorded in the background at most once a minute.
   */
  authenticateCached(rawKey: string): AuthenticatedKey | null | undefined {
    return this.fromCache(hashApiKey(rawKey));
  }

  private fromCache(hash: string): AuthenticatedKey | null | undefined {
    const key = this.keyCache.get(hash, this.cacheTtl());
    if (key === undefined) return undefined;
    if (key.revoked) return null;
    this.touch(key);
    return key.owner;
  }

  /**
   * Cache first (see key-cache.ts); a miss reads the store, and only known keys are cached (revoked ones
   * too: a revocation is final).
   */
  async authenticate(rawKey: string): Promise<AuthenticatedKey | null> {
    const hash = hashApiKey(rawKey);
    const cached = this.fromCache(hash);
    if (cached !== undefined) return cached;
    // Format and checksum only on a miss: a cached key was well-formed when it was stored.
    if (!isWellFormedApiKey(rawKey)) return null;
    const generation = this.keyCache.generation;
    const record = await this.store.findKeyByHash(hash);
    if (!record || !hashesEqual(record.keyHash, hash)) return null;
    const key: CachedKey = {
      keyId: record.keyId,
      email: record.email,
      keyHash: record.keyHash,
      revoked: record.revokedAt !== null,
      lastUsedAt: record.lastUsedAt,
      owner: { keyId: record.keyId, email: record.email },
    };
    this.keyCache.set(key, generation);
    if (key.revoked) return null;
    this.touch(key);
    return key.owner;
  }

  /** Records last use at most once a minute per key; bookkeeping only, so a failing database fails nothing. */
  private touch(key: CachedKey): void {
    const now = this.now();
    const last = this.touched.get(key.keyId) ?? key.lastUsedAt ?? 0;
    if (now - last < TOUCH_INTERVAL_MS) return;
    if (this.touched.size > 100_000) this.touched.clear();
    this.touched.set(key.keyId, now);
    void this.store
      .touchKey(key.keyId, now)
      .catch((err: unknown) => this.logger.warn({ err, keyId: key.keyId }, 'could not record last use of a key'));
  }

  async listKeys(caller: AuthenticatedKey): Promise<KeySummary[]> {
    const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
    return (await this.store.listKeys(caller.email)).map((k) => ({
      keyId: k.keyId,
      createdAt: iso(k.createdAt)!,
      lastUsedAt: iso(k.lastUsedAt),
      revokedAt: iso(k.revokedAt),
      current: k.keyId === caller.keyId,
    }));
  }

  async revokeKey(caller: AuthenticatedKey, keyId: string): Promise<boolean> {
    const done = await this.store.revokeKey(keyId, caller.email, this.now());
    if (done) {
      this.keyCache.evictKeyId(keyId);
      await this.announce(keyId);
      this.logger.info({ keyId }, 'API key revoked');
    }
    return done;
  }

  async close(): Promise<void> {
    for (const d of this.detach.splice(0)) d();
    await this.mailer.close();
    await this.store.close();
  }
}

export async function openAuthStore(config: Config): Promise<AuthStore> {
  if (config.databaseUrl) return PostgresAuthStore.open(config.databaseUrl);
  return new SqliteAuthStore(path.join(config.dataDir, 'folio.sqlite'));
}

export async function createAuthService(
  config: Config,
  logger: Logger,
  policy?: AuthPolicy,
  options: AuthServiceOptions = {},
): Promise<DefaultAuthService> {
  const store = await openAuthStore(config);
  const secretHex = config.codeHashSecret
    ? Buffer.from(config.codeHashSecret, 'utf8').toString('hex')
    : await store.getOrCreateSetting('code_hmac_secret', () => randomBytes(32).toString('hex'));
  const mailer = createMailer({
    smtpUrl: config.smtpUrl,
    from: config.mailFrom,
    outboxDir: path.join(config.dataDir, 'outbox'),
    logger,
  });
  const effectivePolicy: AuthPolicy = policy ?? {
    ...DEFAULT_AUTH_POLICY,
    clientWindowMs: config.authClientWindowMs,
    registerPerClient: config.authRegisterPerClient,
    verifyPerClient: config.authVerifyPerClient,
  };
  return new DefaultAuthService(store, mailer, Buffer.from(secretHex, 'hex'), logger, effectivePolicy, Date.now, options);
}
