import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { Limiter, LimitResult } from '../../ports.ts';

const OK: LimitResult = Object.freeze({ ok: true, retryAfterSec: 0 });

/** In-process fixed-window limiter (the embedded default); one process only. */
export function createMemoryLimiter(): Limiter {
  const limiters = new Map<string, RateLimiterMemory>();
  const limiterFor = (max: number, windowSec: number): RateLimiterMemory => {
    const id = `${max}/${windowSec}`;
    let limiter = limiters.get(id);
    if (!limiter) {
      limiter = new RateLimiterMemory({ points: max, duration: windowSec, keyPrefix: id });
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
        if (rejection instanceof RateLimiterRes) {
          return { ok: false, retryAfterSec: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)) };
        }
        throw rejection;
      }
    },
    async peek(key, max, windowSec) {
      const res = await limiterFor(max, windowSec).get(key);
      if (!res || res.consumedPoints < max) return OK;
      return { ok: false, retryAfterSec: Math.max(1, Math.ceil(res.msBeforeNext / 1000)) };
    },
  };
}
