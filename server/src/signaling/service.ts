import { ApiError, rateLimited } from '../core/errors.ts';
import { jwsKeyId } from '../core/grant.ts';
import type { SigningKey } from '../core/keyring.ts';
import { GrantGuard } from '../grant-guard/guard.ts';
import { checkWithKeyReload } from '../grant-guard/key-reload.ts';
import { nowSec, type ServiceDeps } from '../core/deps.ts';
import { createRoomRegistry, type EventSink, type JoinResult, type Participant } from './rooms.ts';
import { localRoomState, type RoomState } from './room-state.ts';
import type { SignalingSettings } from './settings.ts';
import { verifySignalingToken, type SessionIdentity } from './verify-token.ts';
import type { ProjectStore } from '../customers/store.ts';
import { roomCutoffCovers } from '../rooms/cutoff.ts';
import type { RoomCutoffStore } from '../rooms/store.ts';
import type { RevocationStore } from '../tokens/store.ts';

/** The signaling service behind the HTTP edge: who a token speaks for, and the rooms. */
export interface SignalingService {
  readonly settings: SignalingSettings;
  /**
   * Verifies a signaling token (signature, audience, expiry, revocation) and counts the request
   * against the token's rate limit: 401 for any invalid token, 429 over the limit.
   */
  authenticate(token: string | undefined): Promise<SessionIdentity>;
  join(identity: SessionIdentity): Promise<JoinResult>;
  leave(identity: SessionIdentity): Promise<void>;
  send(identity: SessionIdentity, dataJson: string, to: string | undefined): Promise<{ id: string }>;
  participants(identity: SessionIdentity): Promise<Participant[]>;
  openStream(identity: SessionIdentity, lastEventId: string | undefined, sink: EventSink): Promise<() => void>;
  stats(): { rooms: number; sessions: number; streams: number };
  /** Stops listening for revocations and archives and ends every stream. */
  close(): void;
}

// one response for every cause, like the token API's 401 (docs/decisions/tokens.md, "Identical 401")
export const INVALID_SIGNALING_TOKEN_MESSAGE = 'the signaling token is invalid, expired or revoked';
const invalidToken = (): ApiError => new ApiError('unauthenticated', INVALID_SIGNALING_TOKEN_MESSAGE);

// tokens whose signature was checked, so a chatty session does not pay an Ed25519 verification per
// message; expiry and revocation are still checked on every request
const VERIFIED_CACHE_SIZE = 4096;
const VERIFIED_PURGE_INTERVAL_MS = 60_000;

export interface SignalingServiceOptions {
  /**
   * Also read revocations and archive cut-offs from the store at this interval, for a bus that
   * does not reach the processes that revoke and archive (PostgreSQL without Redis).
   */
  readonly revocationPollMs?: number | undefined;
  /** Told when reading revocations from the store fails (the next poll or resync retries). */
  readonly onPollError?: (err: unknown) => void;
  /**
   * Where the rooms live; default: this process (the embedded registry). A cluster passes the
   * Redis room state (docs/operations/scale-out.md, "Signaling"); the service closes it.
   */
  readonly rooms?: RoomState | undefined;
}

function namesUnknownKey(token: string, keys: ReadonlyMap<string, SigningKey>): boolean {
  const kid = jwsKeyId(token);
  return kid !== undefined && !keys.has(kid);
}

/** Wires the room registry to the platform's ports: keys, store, limiter, revocation and archive events. */
export function createSignalingService(deps: ServiceDeps<RevocationStore & ProjectStore & RoomCutoffStore>, settings: SignalingSettings, options: SignalingServiceOptions = {}): SignalingService {
  const rooms = options.rooms ?? localRoomState(createRoomRegistry(settings, deps.clock));
  const verified = new Map<string, SessionIdentity>();
  const verify = async (token: string, now: number): Promise<SessionIdentity | undefined> => {
    const cached = verified.get(token);
    if (cached) return cached.expiresAt > now ? cached : undefined;
    const identity = await verifySignalingToken(token, deps.keys.verifyingByKid, { issuer: settings.issuer, nowSec: now });
    if (identity) {
      if (verified.size >= VERIFIED_CACHE_SIZE) verified.delete(verified.keys().next().value!);
      verified.set(token, identity);
    }
    return identity;
  };

  // the identities of the sessions joined through this service, by grant id: a removal's cut-off
  // names a user and a room, and ends the sessions of the tokens it covers (kept until they expire)
  const joined = new Map<string, SessionIdentity>();
  const guard = GrantGuard.watch({
    store: deps.store, bus: deps.bus, clock: deps.clock,
    onRevoked: (grantId) => rooms.revoke(grantId),
    onCutOff: (cutoff) => rooms.cutOff(cutoff.projectId, cutoff.cutAt),
    onRoomCutOff: (cutoff) => {
      for (const [grantId, identity] of joined) {
        if (!roomCutoffCovers(cutoff, identity)) continue;
        joined.delete(grantId);
        rooms.revoke(grantId);
      }
      // shared rooms also hold sessions joined through other processes
      if (rooms.shared) rooms.cutOffRoom(cutoff);
    },
    pollMs: options.revocationPollMs,
    active: () => rooms.stats().sessions > 0,
    onReadError: options.onPollError,
  });
  const purge = setInterval(() => {
    const now = nowSec(deps.clock);
    for (const [token, identity] of verified) if (identity.expiresAt <= now) verified.delete(token);
    for (const [grantId, identity] of joined) if (identity.expiresAt <= now) joined.delete(grantId);
  }, VERIFIED_PURGE_INTERVAL_MS);
  purge.unref();

  const live = (identity: SessionIdentity): void => {
    // revocations, archive and removal cut-offs heard while this process runs: closes the gap between a
    // request's store look-up and its effect on the rooms
    if (guard.isRefusedInMemory(identity)) throw invalidToken();
  };

  const revokedMeanwhile = (identity: SessionIdentity): void => {
    if (!guard.isRefusedInMemory(identity)) return;
    rooms.revoke(identity.grantId);
    throw invalidToken();
  };

  return {
    settings,
    async authenticate(token) {
      if (token === undefined) throw invalidToken();
      const check = await checkWithKeyReload(async () => {
        const verified = await verify(token, nowSec(deps.clock));
        return verified ? { ok: true as const, identity: verified } : { ok: false as const, unknownKey: namesUnknownKey(token, deps.keys.verifyingByKid) || undefined };
      }, () => deps.keys.reloadForUnknownKey());
      if (!check.ok) throw invalidToken();
      const { identity } = check;
      // docs/protocol/signaling.md, "Tokens": a revoked grant, or one issued before its project was
      // archived or its user removed from the room (or the room ended), is refused, also after a restart
      if (await guard.isRefused(identity)) throw invalidToken();
      const limit = await deps.limiter.hit(`signaling:${identity.grantId}`, settings.rateLimit.max, settings.rateLimit.windowSec);
      if (!limit.ok) throw rateLimited(limit.retryAfterSec);
      return identity;
    },
    // each call checks revocation again in the same turn as its effect: a revocation that arrived
    // after authenticate() answered can never leave a session or stream behind. Shared rooms
    // change in Redis, later than this turn: a revocation heard meanwhile is applied again after
    async join(identity) {
      live(identity);
      // the embedded registry answers in a resolved promise: no event of the bus comes in between
      const result = await rooms.join(identity);
      joined.set(identity.grantId, identity);
      if (rooms.shared) revokedMeanwhile(identity);
      return result;
    },
    async leave(identity) {
      joined.delete(identity.grantId);
      await rooms.leave(identity);
    },
    async send(identity, dataJson, to) {
      live(identity);
      return rooms.send(identity, dataJson, to);
    },
    async participants(identity) {
      live(identity);
      return rooms.participants(identity.projectId, identity.roomId);
    },
    async openStream(identity, lastEventId, sink) {
      live(identity);
      const detach = await rooms.openStream(identity, lastEventId, sink);
      if (rooms.shared) revokedMeanwhile(identity);
      return detach;
    },
    stats: () => rooms.stats(),
    close() {
      verified.clear();
      joined.clear();
      clearInterval(purge);
      guard.close();
      rooms.close();
    },
  };
}
