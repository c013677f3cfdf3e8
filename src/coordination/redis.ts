/**
 * The one Redis connection pair of an API instance (REDIS_URL): a command connection for the shared limits
 * (in-flight slots per key, register/verify windows) and a subscriber connection for invalidations (key
 * revocations). It tracks whether Redis can be used right now, so every Redis-backed limit degrades to its
 * in-process twin while Redis is unreachable and comes back to Redis when it returns.
 *
 * Timeouts, chosen so that no request waits more than a few hundred milliseconds on a dead Redis:
 * - `enableOfflineQueue: false`: while the connection is down a command fails at once instead of queueing
 *   (the caller falls back to its in-process limit); the state flag below makes callers skip Redis anyway.
 * - `commandTimeout: 250` ms: a Redis that accepts the connection but does not answer (paused, overloaded,
 *   a black-holed network) costs one request at most 250 ms, after which the instance is marked degraded
 *   and requests go local at once until a probe (`PING` every second) answers again.
 * - `maxRetriesPerRequest: 0` and `autoResendUnfulfilledCommands: false`: a limiter command is never
 *   replayed after a reconnect (an `INCR` sent twice would count a request twice).
 * - `connectTimeout: 1000` ms and a reconnect back-off of 100 ms doubling to 2 s: a restarted Redis is
 *   used again within about 2 s.
 * The subscriber resubscribes itself on every `ready` (autoResubscribe off), so "subscribed" means Redis
 * acknowledged the SUBSCRIBE, which is what the key cache's long TTL relies on. A SUBSCRIBE that fails
 * (timed out under load, refused) is retried with back-off (100 ms doubling to 2 s) for as long as the
 * connection is open, and the subscriber is probed (`PING`, allowed while subscribed) every second: a
 * subscriber that does not answer is reported unsubscribed and reconnected, since messages sent meanwhile
 * may be lost. Invalidations also count as unsubscribed while the command connection is down (a revoking
 * instance cannot publish then). While unsubscribed the key cache uses its short TTL.
 *
 * State changes are logged once each: one warning when Redis becomes unreachable, one line when it is back.
 */
import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';

export const REDIS_COMMAND_TIMEOUT_MS = 250;
export const DEFAULT_KEY_PREFIX = 'folio:';
export const REDIS_CONNECT_TIMEOUT_MS = 1000;
const PROBE_INTERVAL_MS = 1000;
/** Back-off between SUBSCRIBE attempts on an open subscriber connection. */
const SUBSCRIBE_RETRY_MIN_MS = 100;
const SUBSCRIBE_RETRY_MAX_MS = 2000;

export function redisOptions(extra: Partial<RedisOptions> = {}): RedisOptions {
  return {
    lazyConnect: false,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    autoResubscribe: false,
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    retryStrategy: (times: number) => Math.min(100 * 2 ** Math.min(times - 1, 5), 2000),
    ...extra,
  };
}

export type CoordinationStatus = {
  status: 'healthy' | 'degraded';
  redis: 'connected' | 'unreachable';
  /** ISO time of the last change of `redis`. */
  since: string;
  /** Whether revocations reach this instance through Redis right now (the key cache's long TTL). */
  invalidations: 'subscribed' | 'unsubscribed';
};

type Listener = (up: boolean) => void;

export class Coordination {
  readonly redis: Redis;
  private readonly subscriber: Redis;
  private up = false;
  private subscribed = false;
  private since = Date.now();
  /** Whether the "unreachable" warning was logged for the current outage (or the start). */
  private warned = false;
  private closed = false;
  private probe?: NodeJS.Timeout;
  private subscriberProbe?: NodeJS.Timeout;
  /** Bumped on every subscriber (re)connection and close: a SUBSCRIBE retry loop of an older one stops. */
  private subscriberEpoch = 0;
  private subscribing = false;
  private subscribeAgain = false;
  private readonly stateListeners = new Set<Listener>();
  private readonly subscriptionListeners = new Set<Listener>();
  private readonly handlers = new Map<string, Set<(message: string) => void>>();

  /** Prepended to every Redis key and channel (REDIS_KEY_PREFIX), so deployments can share one Redis. */
  readonly prefix: string;

  constructor(
    readonly url: string,
    private readonly logger: Logger,
    options: { keyPrefix?: string; redis?: Partial<RedisOptions> } = {},
  ) {
    this.prefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
    this.redis = new Redis(url, redisOptions({ connectionName: 'folio', ...options.redis }));
    this.subscriber = new Redis(url, redisOptions({ connectionName: 'folio-sub', ...options.redis }));
    this.redis.on('ready', () => void this.verifyUp());
    this.redis.on('close', () => this.markDown('connection closed'));
    // ioredis reports each failed (re)connection attempt here; the state follows 'close'.
    this.redis.on('error', (err: Error) => {
      if (!this.up && !this.warned) this.markDown(err.message);
    });
    this.subscriber.on('ready', () => {
      this.subscriberEpoch++;
      void this.resubscribe();
    });
    this.subscriber.on('close', () => {
      this.subscriberEpoch++;
      this.setSubscribed(false);
    });
    this.subscriber.on('error', () => undefined);
    this.subscriber.on('message', (channel: string, message: string) => {
      for (const h of this.handlers.get(channel) ?? []) {
        try {
          h(message);
        } catch (err) {
          this.logger.error({ err, channel }, 'a Redis message handler failed');
        }
      }
    });
  }

  /** True when Redis commands can be sent now; false means "use the in-process limit". */
  get available(): boolean {
    return this.up;
  }

  /**
   * True while the subscriber has acknowledged its channels and Redis answers commands (invalidations
   * arrive: a revoking instance can publish, this one receives).
   */
  get isSubscribed(): boolean {
    return this.subscribed && this.up;
  }

  status(): CoordinationStatus {
    return {
      status: this.up ? 'healthy' : 'degraded',
      redis: this.up ? 'connected' : 'unreachable',
      since: new Date(this.since).toISOString(),
      invalidations: this.isSubscribed ? 'subscribed' : 'unsubscribed',
    };
  }

  /** Resolves once Redis is usable (start-up, tests); false after `timeoutMs`. */
  async ready(timeoutMs = 5000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.up && !this.closed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    return this.up;
  }

  /** Resolves once the subscriber acknowledged its channels; false after `timeoutMs`. */
  async subscriptionReady(timeoutMs = 5000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.isSubscribed && !this.closed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    return this.isSubscribed;
  }

  /** Called with the new state whenever Redis becomes usable or unusable. */
  onStateChange(listener: Listener): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  /** Called whenever the subscription is acknowledged (true) or lost (false). */
  onSubscriptionChange(listener: Listener): () => void {
    this.subscriptionListeners.add(listener);
    return () => this.subscriptionListeners.delete(listener);
  }

  /** Handles messages of `channel` (subscribed now and again after every reconnect). */
  subscribe(channel: string, handler: (message: string) => void): void {
    let set = this.handlers.get(channel);
    if (!set) {
      this.handlers.set(channel, (set = new Set()));
      if (this.subscriber.status === 'ready') void this.resubscribe();
    }
    set.add(handler);
  }

  /** Publishes when Redis is usable; resolves false (never throws) when it is not. */
  async publish(channel: string, message: string): Promise<boolean> {
    if (!this.up) return false;
    try {
      await this.redis.publish(channel, message);
      return true;
    } catch (err) {
      this.commandFailed(err);
      return false;
    }
  }

  /**
   * Reports a failed command (timeout, connection reset): Redis is treated as unreachable until the probe or
   * a reconnection shows it answering again.
   */
  commandFailed(err: unknown): void {
    this.markDown((err as Error)?.message ?? String(err));
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.probe) clearInterval(this.probe);
    if (this.subscriberProbe) clearInterval(this.subscriberProbe);
    this.subscriberEpoch++;
    this.stateListeners.clear();
    this.subscriptionListeners.clear();
    await Promise.all(
      [this.redis, this.subscriber].map(async (r) => {
        if (r.status === 'ready') await r.quit().then(undefined, () => r.disconnect());
        else r.disconnect();
      }),
    );
  }

  private async verifyUp(): Promise<void> {
    try {
      await this.redis.ping();
      this.markUp();
    } catch (err) {
      this.markDown((err as Error).message);
    }
  }

  private markUp(): void {
    if (this.closed || this.up) return;
    this.up = true;
    this.since = Date.now();
    if (this.probe) clearInterval(this.probe);
    this.probe = undefined;
    if (this.warned) {
      this.logger.warn({ redis: 'connected' }, 'Redis is reachable again: limits are shared across instances again');
    } else {
      this.logger.info({ redis: 'connected' }, 'Redis connected: limits are shared across instances');
    }
    this.warned = false;
    for (const l of this.stateListeners) l(true);
  }

  private markDown(reason: string): void {
    if (this.closed) return;
    const wasUp = this.up;
    this.up = false;
    if (wasUp) this.since = Date.now();
    if (!this.warned) {
      this.warned = true;
      this.logger.warn(
        { redis: 'unreachable', reason },
        'Redis is unreachable: per-key in-flight limits and register/verify windows are per instance until it returns',
      );
    }
    if (wasUp) for (const l of this.stateListeners) l(false);
    // A connection that is still open but does not answer gets no 'ready' to bring it back: probe it.
    if (!this.probe) {
      this.probe = setInterval(() => {
        if (this.redis.status === 'ready') void this.verifyUp();
      }, PROBE_INTERVAL_MS);
      this.probe.unref();
    }
  }

  /**
   * Subscribes the open subscriber connection to every channel, retrying with back-off until Redis
   * acknowledges or the connection changes (a new `ready` starts its own attempt). One loop at a time; a
   * channel added meanwhile is picked up by another pass.
   */
  private async resubscribe(): Promise<void> {
    if (this.subscribing) {
      this.subscribeAgain = true;
      return;
    }
    this.subscribing = true;
    try {
      do {
        this.subscribeAgain = false;
        await this.subscribeCurrentConnection();
      } while (this.subscribeAgain && !this.closed);
    } finally {
      this.subscribing = false;
    }
  }

  private async subscribeCurrentConnection(): Promise<void> {
    const epoch = this.subscriberEpoch;
    let delay = SUBSCRIBE_RETRY_MIN_MS;
    for (let attempt = 1; ; attempt++) {
      const channels = [...this.handlers.keys()];
      if (channels.length === 0 || this.closed || epoch !== this.subscriberEpoch || this.subscriber.status !== 'ready') return;
      try {
        await this.subscriber.subscribe(...channels);
        if (epoch === this.subscriberEpoch) {
          this.setSubscribed(true);
          this.startSubscriberProbe();
        }
        return;
      } catch (err) {
        this.setSubscribed(false);
        if (attempt === 1) {
          this.logger.warn(
            { reason: (err as Error)?.message },
            'Redis SUBSCRIBE failed: retrying with back-off; revoked keys rely on the short key-cache TTL meanwhile',
          );
        }
        await new Promise((r) => setTimeout(r, delay).unref());
        delay = Math.min(delay * 2, SUBSCRIBE_RETRY_MAX_MS);
      }
    }
  }

  /**
   * PINGs the subscriber every second while subscribed. A connection that stops answering (a frozen Redis,
   * a black-holed network) gets no 'close': it is reported unsubscribed and reconnected, which subscribes
   * again once Redis answers.
   */
  private startSubscriberProbe(): void {
    if (this.subscriberProbe) return;
    let inFlight = false;
    this.subscriberProbe = setInterval(() => {
      if (inFlight || this.closed || !this.subscribed || this.subscriber.status !== 'ready') return;
      inFlight = true;
      this.subscriber.ping().then(
        () => {
          inFlight = false;
        },
        () => {
          inFlight = false;
          if (this.closed || !this.subscribed) return;
          this.subscriberEpoch++;
          this.setSubscribed(false);
          this.subscriber.disconnect(true);
        },
      );
    }, PROBE_INTERVAL_MS);
    this.subscriberProbe.unref();
  }

  private setSubscribed(value: boolean): void {
    if (this.closed || this.subscribed === value) {
      // A reconnect that happened between two reads still means messages may have been missed.
      if (!value && !this.closed) for (const l of this.subscriptionListeners) l(false);
      return;
    }
    this.subscribed = value;
    for (const l of this.subscriptionListeners) l(value);
  }
}
