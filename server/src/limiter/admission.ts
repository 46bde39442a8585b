import type { Limiter, TokenAdmission } from '../core/ports.ts';

/**
 * Token admission with a limiter alone (the embedded default, and the revoke endpoint): the
 * address's block and rate limit in two calls; no credential versions, so nothing is cached across
 * requests by the token API itself (the SQLite store keeps its own cache, docs/decisions/scale-out.md, "Credential cache").
 */
export function limiterAdmission(limiter: Limiter): TokenAdmission {
  return {
    async admit({ block, rate }) {
      const blocked = await limiter.peek(block.key, block.max, block.windowSec);
      if (!blocked.ok) return { address: blocked };
      return { address: await limiter.hit(rate.key, rate.max, rate.windowSec) };
    },
  };
}
