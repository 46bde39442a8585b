import { ApiError } from '../core/errors.ts';
import { decodeHandle } from '../core/revocation-handle.ts';
import { nowSec, type ServiceDeps } from './deps.ts';

/**
 * Revokes the grant behind a handle of the caller's project: persisted until the grant expires
 * and published to every media server. Idempotent.
 */
export async function revokeByHandle(deps: ServiceDeps, projectId: string, handle: string): Promise<{ revoked: true }> {
  const contents = decodeHandle(deps.keys.handleKey, handle);
  // docs/reference/token-api.md, "Revocation": an altered handle and another project's handle are indistinguishable
  if (!contents || contents.projectId !== projectId) {
    throw new ApiError('unknown_handle', 'the revocation handle is not valid for this project');
  }
  if (contents.expiresAt >= nowSec(deps.clock)) {
    const revocation = { grantId: contents.grantId.toString('base64url'), projectId, expiresAt: contents.expiresAt };
    await deps.store.insertRevocation(revocation);
    await deps.bus.publish({ type: 'grant.revoked', ...revocation });
  }
  return { revoked: true };
}
