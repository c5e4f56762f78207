import { Redis } from 'ioredis';
import { BurstyRateLimiter, RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Config } from '../config.ts';
import { DomainError } from './errors.ts';
import type { Logger } from './logger.ts';

// Rate limits (docs/operator-guide.md "Rate limits", decisions §14), on rate-limiter-flexible: per API key or
// lookup token, per client address for failed authentication, per provider key for redeems. Each
// is a bucket of `perSecond` points a second plus a burst bucket of `burst - perSecond` points that
// refills over ten times as many seconds as it holds seconds of rate (rate-limiter-flexible's
// BurstyRateLimiter, its token bucket): bursts of `burst`, a sustained rate within 10 % of `perSecond`. Shared through Redis when REDIS_URL is set (every process sees the same counts), in
// this process otherwise. Redis unreachable fails open: the request is let through, and one line
// says so when it goes down and one when it is back.

export type LimitKind = 'key' | 'failed_auth' | 'redeem';

export interface Limit {
  perSecond: number;
  burst: number;
}

/** The limits an operator did not set for a reseller (`resellers limits`): from the configuration. */
export function defaultLimits(config: Config): Record<LimitKind, Limit> {
  return {
    key: { perSecond: config.RATE_LIMIT_PER_SECOND, burst: config.RATE_LIMIT_BURST },
    failed_auth: { perSecond: config.RATE_LIMIT_FAILED_AUTH_PER_SECOND, burst: config.RATE_LIMIT_FAILED_AUTH_BURST },
    redeem: { perSecond: config.RATE_LIMIT_REDEEM_PER_SECOND, burst: config.RATE_LIMIT_REDEEM_BURST },
  };
}

/** The burst bucket refills over this many seconds per second of burst: the sustained rate stays near `perSecond`. */
const BURST_REFILL_FACTOR = 10;
const burstWindow = (l: Limit): number => Math.max(1, Math.ceil((BURST_REFILL_FACTOR * Math.max(0, l.burst - l.perSecond)) / l.perSecond));

interface Bucket {
  rate: RateLimiterAbstract;
  burst: RateLimiterAbstract;
  both: BurstyRateLimiter;
}

export interface RateLimits {
  /** Takes one point of `id`'s bucket of `kind`; over it, 429 `rate_limited` with Retry-After and RateLimit headers. */
  take(kind: LimitKind, id: string, limit?: Limit): Promise<void>;
  /** 429 when `address` is over its failed-authentication limit, without taking a point. */
  checkAddress(address: string): Promise<void>;
  close(): Promise<void>;
}

export function createRateLimits(config: Config, log: Logger, rejected: (kind: LimitKind) => void = () => {}): RateLimits {
  const redis =
    config.REDIS_URL === undefined
      ? undefined
      : new Redis(config.REDIS_URL, {
          // Commands fail at once while disconnected (never queue behind a dead connection); reconnects go on.
          enableOfflineQueue: false,
          maxRetriesPerRequest: 0,
          connectTimeout: 1000,
          commandTimeout: 500,
          lazyConnect: false,
        });
  redis?.on('error', () => {}); // reported once through `down` below, not per reconnect attempt
  let down = false;
  const buckets = new Map<string, Bucket>();
  const defaults = defaultLimits(config);

  /** One bucket per kind and limit (a reseller with its own limits has its own), made on first use. */
  const bucketOf = (kind: LimitKind, limit: Limit): Bucket => {
    const name = `${kind}:${limit.perSecond}:${limit.burst}`;
    let bucket = buckets.get(name);
    if (!bucket) {
      const store = (points: number, duration: number, part: string): RateLimiterAbstract =>
        redis
          ? new RateLimiterRedis({
              storeClient: redis,
              keyPrefix: `${config.RATE_LIMIT_REDIS_PREFIX}:${name}:${part}`,
              points,
              duration,
              rejectIfRedisNotReady: true,
            })
          : new RateLimiterMemory({ keyPrefix: `${name}:${part}`, points, duration });
      const rate = store(limit.perSecond, 1, 'rate');
      const burst = store(Math.max(1, limit.burst - limit.perSecond), burstWindow(limit), 'burst');
      bucket = { rate, burst, both: new BurstyRateLimiter(rate, burst) };
      buckets.set(name, bucket);
    }
    return bucket;
  };

  /** The store failed (Redis down): let the request through, and say so once. */
  const failOpen = (err: unknown): void => {
    if (!down) {
      down = true;
      log.warn(
        { reason: (err as Error)?.message ?? String(err) },
        'rate limits: Redis unreachable; requests are not limited until it is back',
      );
    }
  };
  const storeAnswered = (): void => {
    if (down) {
      down = false;
      log.info('rate limits: Redis reachable again; requests are limited again');
    }
  };

  const refusal = (kind: LimitKind, limit: Limit, res: RateLimiterRes): DomainError => {
    rejected(kind);
    const retryAfter = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
    return new DomainError('rate_limited', `Too many requests (${describe(kind)}); retry after ${retryAfter} s`, {
      headers: { 'Retry-After': String(retryAfter), ...rateLimitHeaders(kind, limit, 0, retryAfter) },
    });
  };

  return {
    async take(kind, id, limit = defaults[kind]) {
      try {
        await bucketOf(kind, limit).both.consume(id);
        storeAnswered();
      } catch (err) {
        if (err instanceof RateLimiterRes) {
          storeAnswered();
          throw refusal(kind, limit, err);
        }
        failOpen(err);
      }
    },
    async checkAddress(address) {
      const limit = defaults.failed_auth;
      const { rate, burst } = bucketOf('failed_auth', limit);
      try {
        const [r, b] = await Promise.all([rate.get(address), burst.get(address)]);
        storeAnswered();
        // Both spent: this second's points and the burst. A key sent now, valid or not, is refused,
        // so a guess that hits cannot be told from one that misses.
        if (r && b && r.consumedPoints >= rate.points && b.consumedPoints >= burst.points) {
          throw refusal('failed_auth', limit, r.msBeforeNext < b.msBeforeNext ? r : b);
        }
      } catch (err) {
        if (err instanceof DomainError) throw err;
        failOpen(err);
      }
    },
    async close() {
      redis?.disconnect();
    },
  };
}

const describe = (kind: LimitKind): string =>
  ({
    key: 'this API key or lookup token',
    failed_auth: 'failed authentications from this address',
    redeem: 'redeem attempts of this provider key',
  })[kind];

/**
 * The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers): the policy (`q` points in `w`
 * seconds, the burst included) and what is left of it now (`r`) with the seconds until it refills (`t`).
 */
export function rateLimitHeaders(kind: LimitKind, limit: Limit, remaining: number, resetSeconds: number): Record<string, string> {
  return {
    'RateLimit-Policy': `"${kind}";q=${limit.burst};w=${Math.max(1, Math.ceil(limit.burst / limit.perSecond))}`,
    RateLimit: `"${kind}";r=${remaining};t=${resetSeconds}`,
  };
}
