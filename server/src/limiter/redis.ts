import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { ApiError } from '../core/errors.ts';
import type { Limiter, LimitResult } from '../core/ports.ts';

const OK: LimitResult = Object.freeze({ ok: true, retryAfterSec: 0 });

/**
 * Thrown when Redis cannot answer: the request is refused (503 `unavailable`, `Retry-After: 1`)
 * rather than not counted (docs/operations/scale-out.md, "Redis down").
 */
export class LimiterUnavailableError extends ApiError {
  constructor(cause: unknown) {
    super('unavailable', 'the rate limiter is unreachable; retry shortly', { retryAfterSec: 1, cause });
    this.name = 'LimiterUnavailableError';
  }
}

const retryAfter = (res: RateLimiterRes): LimitResult =>
  ({ ok: false, retryAfterSec: Math.max(1, Math.ceil(res.msBeforeNext / 1000)) });

/**
 * Fixed-window limits counted in Redis, so that every node of a cluster counts against one total
 * (1200 issuances a minute for an App ID means 1200 across all token nodes). When Redis does not
 * answer, `hit` and `peek` throw `LimiterUnavailableError`: the platform fails closed.
 */
export function createRedisLimiter(client: Redis, keyPrefix = 'rtc:limit'): Limiter {
  const limiters = new Map<string, RateLimiterRedis>();
  const limiterFor = (max: number, windowSec: number): RateLimiterRedis => {
    const id = `${max}/${windowSec}`;
    let limiter = limiters.get(id);
    if (!limiter) {
      limiter = new RateLimiterRedis({
        storeClient: client, points: max, duration: windowSec, keyPrefix: `${keyPrefix}:${id}`, rejectIfRedisNotReady: true,
      });
      limiters.set(id, limiter);
    }
    return limiter;
  };
  return {
    async hit(key, max, windowSec) {
      try {
        await limiterFor(max, windowSec).consume(key);
        return OK;
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) return retryAfter(rejection);
        throw new LimiterUnavailableError(rejection);
      }
    },
    async peek(key, max, windowSec) {
      let res: RateLimiterRes | null;
      try {
        res = await limiterFor(max, windowSec).get(key);
      } catch (err) {
        throw new LimiterUnavailableError(err);
      }
      return !res || res.consumedPoints < max ? OK : retryAfter(res);
    },
  };
}
