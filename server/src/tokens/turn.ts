import { createHmac } from 'node:crypto';
import type { TurnCredentials } from '@rtc/protocol';

/**
 * TURN relay credentials in the TURN REST API scheme that coturn's `use-auth-secret` checks
 * (docs/operations/turn.md, "How the credentials work"): username `<expires_at>:<opaque id>`, credential
 * base64(HMAC-SHA-1(shared secret, username)). The relay refuses them once `expiresAt` has passed.
 */
export function turnCredentials(secret: string, uris: readonly string[], expiresAt: number, id: string): TurnCredentials {
  if (!Number.isSafeInteger(expiresAt) || expiresAt < 0) throw new TypeError('expiresAt must be a whole number of seconds');
  // the relay splits the username at its first colon: the id must not add a second timestamp
  if (id.length === 0 || id.includes(':')) throw new TypeError('the opaque id must be non-empty and contain no colon');
  const username = `${expiresAt}:${id}`;
  return { username, credential: createHmac('sha1', secret).update(username).digest('base64'), uris: [...uris] };
}
