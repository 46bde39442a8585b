import { ApiError } from '../core/errors.ts';
import type { Limiter, LimitResult } from '../core/ports.ts';
import { decodeHandle } from './revocation-handle.ts';
import { nowSec, type ServiceDeps } from '../core/deps.ts';
import type { RevocationStore } from './store.ts';

/**
 * Revokes the grant behind a handle of the caller's project: persisted until the grant expires
 * and published to every media server. Idempotent.
 */
export async function revokeByHandle(deps: ServiceDeps<RevocationStore>, projectId: string, handle: string): Promise<{ revoked: true }> {
  const contents = decodeHandle(deps.keys.handleKey, handle);
  // docs/reference/token-api.md, "Revocation": an altered handle and another project's handle are indistinguishable
  if (!contents || contents.projectId !== projectId) {
    throw new ApiError('unknown_handle', 'the revocation handle is not valid for this project');
  }
  if (contents.expiresAt >= nowSec(deps.clock)) {
    const revocation = { grantId: contents.grantId.toString('base64url'), projectId, expiresAt: contents.expiresAt };
    // one token.revoked event per grant: a repeated revoke records none (docs/reference/webhooks.md)
    const first = !(await deps.store.isRevoked(revocation.grantId));
    await deps.store.insertRevocation(revocation);
    await deps.bus.publish({ type: 'grant.revoked', ...revocation });
    if (first) {
      await deps.events.record({
        projectId, type: 'token.revoked', occurredAt: nowSec(deps.clock),
        data: { grant_id: revocation.grantId, expires_at: revocation.expiresAt },
      });
    }
  }
  return { revoked: true };
}

const NOT_COUNTED: LimitResult = Object.freeze({ ok: true, retryAfterSec: 0 });

const isUnavailable = (err: unknown): boolean => err instanceof ApiError && err.code === 'unavailable';

/**
 * The limits of the revoke endpoint: counted by the shared limiter (Redis) when it answers, and by
 * `local`, this process's own, when it cannot, so that a customer can always cut a user off
 * (docs/operations/scale-out.md, "Redis down") while the endpoint stays bounded. Issuance, by
 * contrast, is refused while the shared limits cannot be counted.
 */
export function revocationLimiter(shared: Limiter, local?: Limiter): Limiter {
  const fallback = (use: (limiter: Limiter) => Promise<LimitResult>) => (err: unknown): Promise<LimitResult> | LimitResult => {
    if (!isUnavailable(err)) throw err;
    return local ? use(local) : NOT_COUNTED;
  };
  return {
    hit: (key, max, windowSec) => shared.hit(key, max, windowSec).catch(fallback((l) => l.hit(key, max, windowSec))),
    peek: (key, max, windowSec) => shared.peek(key, max, windowSec).catch(fallback((l) => l.peek(key, max, windowSec))),
  };
}
