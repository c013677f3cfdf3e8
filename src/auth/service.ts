/**
 * Registration by e-mailed code and API key management (CONTRACT §2).
 *
 * - Codes: 6 digits, 15 minutes, single use, void after 5 wrong attempts; stored as HMAC-SHA256 keyed with a
 *   secret kept in the store (so every instance sharing a database agrees), compared in constant time.
 * - register answers the same for known and unknown addresses; a per-address cooldown and a per-client
 *   window limit answer 429.
 * - Keys: see keys.ts. last_used_at is written at most once a minute per key to keep authentication cheap.
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

/** Fixed-window counters per client, pruned as windows pass. */
class WindowCounter {
  private readonly hits = new Map<string, { start: number; count: number }>();
  constructor(
    private readonly windowMs: number,
    private readonly limit: number,
  ) {}

  /** Seconds to wait when over the limit, else 0 (and the hit is counted). */
  hit(key: string, now: number): number {
    if (this.hits.size > 100_000) {
      for (const [k, v] of this.hits) if (now - v.start >= this.windowMs) this.hits.delete(k);
    }
    const cur = this.hits.get(key);
    if (!cur || now - cur.start >= this.windowMs) {
      this.hits.set(key, { start: now, count: 1 });
      return 0;
    }
    if (cur.count >= this.limit) return Math.max(1, Math.ceil((cur.start + this.windowMs - now) / 1000));
    cur.count++;
    return 0;
  }
}

export class DefaultAuthService implements AuthService {
  private readonly registerLimiter: WindowCounter;
  private readonly verifyLimiter: WindowCounter;
  private readonly touched = new Map<string, number>();

  constructor(
    private readonly store: AuthStore,
    private readonly mailer: Mailer,
    private readonly codeSecret: Buffer,
    private readonly logger: Logger,
    private readonly policy: AuthPolicy = DEFAULT_AUTH_POLICY,
    private readonly now: () => number = Date.now,
  ) {
    this.registerLimiter = new WindowCounter(policy.clientWindowMs, policy.registerPerClient);
    this.verifyLimiter = new WindowCounter(policy.clientWindowMs, policy.verifyPerClient);
  }

  private hashCode(email: string, code: string): string {
    return createHmac('sha256', this.codeSecret).update(`${email}\n${code}`).digest('hex');
  }

  async register(rawEmail: string, clientId: string): Promise<{ expiresInSeconds: number }> {
    const email = normalizeEmail(rawEmail);
    const now = this.now();
    const wait = this.registerLimiter.hit(clientId, now);
    if (wait > 0) throw new FolioError('RATE_LIMIT_ERROR', 'Too many registration requests; try again later', { retryAfter: wait });
    const previous = await this.store.getCode(email);
    if (previous && previous.usedAt === null && now - previous.createdAt < this.policy.resendCooldownMs) {
      const retry = Math.ceil((previous.createdAt + this.policy.resendCooldownMs - now) / 1000);
      throw new FolioError('RATE_LIMIT_ERROR', 'A code was sent to this address moments ago; wait before asking again', {
        retryAfter: Math.max(1, retry),
      });
    }
    const code = generateCode();
    await this.store.putCode({
      email,
      codeHash: this.hashCode(email, code),
      createdAt: now,
      expiresAt: now + CODE_TTL_SECONDS * 1000,
    });
    await this.mailer.send({
      to: email,
      subject: 'Your Folio verification code',
      text:
        `Your Folio verification code is ${code}\n\n` +
        `It is valid for 15 minutes and can be used once. If you did not ask for it, ignore this message.\n`,
    });
    return { expiresInSeconds: CODE_TTL_SECONDS };
  }

  async verify(rawEmail: string, code: string, clientId: string): Promise<IssuedKey> {
    const email = normalizeEmail(rawEmail);
    if (!/^\d{6}$/.test(code)) {
      throw new FolioError('VALIDATION_ERROR', 'code must be 6 digits', { details: [{ field: 'code', issue: 'must be 6 digits' }] });
    }
    const now = this.now();
    const wait = this.verifyLimiter.hit(clientId, now);
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

  async authenticate(rawKey: string): Promise<AuthenticatedKey | null> {
    if (!isWellFormedApiKey(rawKey)) return null;
    const hash = hashApiKey(rawKey);
    const record = await this.store.findKeyByHash(hash);
    if (!record || !hashesEqual(record.keyHash, hash) || record.revokedAt !== null) return null;
    const now = this.now();
    const last = this.touched.get(record.keyId) ?? record.lastUsedAt ?? 0;
    if (now - last >= 60_000) {
      this.touched.set(record.keyId, now);
      await this.store.touchKey(record.keyId, now);
    }
    return { keyId: record.keyId, email: record.email };
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
    if (done) this.logger.info({ keyId }, 'API key revoked');
    return done;
  }

  async close(): Promise<void> {
    await this.mailer.close();
    await this.store.close();
  }
}

export async function openAuthStore(config: Config): Promise<AuthStore> {
  if (config.databaseUrl) return PostgresAuthStore.open(config.databaseUrl);
  return new SqliteAuthStore(path.join(config.dataDir, 'folio.sqlite'));
}

export async function createAuthService(config: Config, logger: Logger, policy?: AuthPolicy): Promise<DefaultAuthService> {
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
  return new DefaultAuthService(store, mailer, Buffer.from(secretHex, 'hex'), logger, policy);
}
