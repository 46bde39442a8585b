import type { GrantFields } from '@rtc/protocol';
import type { GrantHolders } from '../../grant-guard/grant-holders.ts';
import type { MediaGrant } from './grant-check.ts';
import { MAX_LIVE_GRANTS_PER_SESSION } from '../node/limits.ts';

/** What a session may publish and receive, as set through the room service API. */
export interface Permissions {
  readonly pub: ReadonlySet<number>;
  readonly subs: ReadonlySet<number>;
  readonly subRoom: boolean;
  /** When the room service made the change (ms): of two changes, the newest holds. */
  readonly setAt: number;
}

const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The grants of one joined session (docs/protocol/media.md, "Renewal"): the one in force, with the
 * permissions the customer's server set through the room service API, and every grant the session
 * has used that has not expired, so that revoking any of them, or an archive cut-off after the
 * oldest, closes the session. The session closes as `expired` when the grant in force expires.
 */
export class SessionGrants<S> {
  private grant: MediaGrant | undefined;
  private readonly live = new Map<string, number>();
  /** The oldest `iat` of the grants used: an archive cut-off at or after it closes the session. */
  private oldestIssuedAt = Number.POSITIVE_INFINITY;
  /** Permissions set through the room service API; they outlast renewals. */
  private override: Permissions | undefined;
  /** Every stream id a grant or a permission change allowed the session to publish. */
  private readonly published = new Set<number>();
  private expiryTimer: NodeJS.Timeout | undefined;
  private readonly session: S;
  private readonly holders: GrantHolders<S>;
  private readonly nowMs: () => number;
  private readonly onExpired: () => void;

  constructor(session: S, holders: GrantHolders<S>, nowMs: () => number, onExpired: () => void) {
    this.session = session;
    this.holders = holders;
    this.nowMs = nowMs;
    this.onExpired = onExpired;
  }

  /** The grant as it applies now (with the permissions set through the room service API). */
  get current(): MediaGrant | undefined {
    return this.grant;
  }

  /** Grants used that have not expired, with their `exp`. */
  get used(): ReadonlyMap<string, number> {
    return this.live;
  }

  /** Stream ids the session may have published under any grant: frames of others are a protocol violation. */
  get mayHavePublished(): ReadonlySet<number> {
    return this.published;
  }

  /** Permissions set through the room service API on this session or on a grant it used; undefined: the grants' own. */
  get permissionsSet(): Permissions | undefined {
    return this.override;
  }

  /** The first grant, at join, under the permissions set on it (`stored`, read from the store); returns it as applied. */
  admit(grant: MediaGrant, stored?: Permissions): MediaGrant {
    this.override = stored;
    this.grant = stored ? withPermissions(grant, stored) : grant;
    this.track(this.grant);
    return this.grant;
  }

  /**
   * Applies permissions set by the customer's server; returns the grant as it applies now, undefined
   * when the session has none or already holds a newer change.
   */
  restrict(permissions: Permissions): MediaGrant | undefined {
    if (!this.grant || !newer(permissions, this.override)) return undefined;
    this.override = permissions;
    this.grant = withPermissions(this.grant, permissions);
    for (const id of this.grant.pub) this.published.add(id);
    return this.grant;
  }

  /** Forgets grants that have expired; false when `next` would be one grant too many. */
  makeRoomFor(next: MediaGrant): boolean {
    const now = this.nowMs();
    for (const [grantId, exp] of this.live) {
      if (exp * 1000 <= now) {
        this.live.delete(grantId);
        this.holders.remove(grantId, this.session);
      }
    }
    return this.live.has(next.grantId) || this.live.size < MAX_LIVE_GRANTS_PER_SESSION;
  }

  /**
   * A renewal's grant takes over, under the permissions set through the room service API: the newest
   * of those stored on `next` and those of the session (a grant older than the session's last change
   * does not bring back what it took away); returns it as applied.
   */
  renew(next: MediaGrant, stored?: Permissions): MediaGrant {
    if (stored && newer(stored, this.override)) this.override = stored;
    const applied = this.override ? withPermissions(next, this.override) : next;
    this.grant = applied;
    this.track(applied);
    return applied;
  }

  /** Whether a cut-off at `cutAt` covers a grant the session has used. */
  coveredBy(cutAt: number): boolean {
    return this.oldestIssuedAt <= cutAt;
  }

  /** At the session's end: revocations of its grants no longer concern it. */
  release(): void {
    clearTimeout(this.expiryTimer);
    for (const grantId of this.live.keys()) this.holders.remove(grantId, this.session);
  }

  private track(grant: MediaGrant): void {
    for (const id of grant.pub) this.published.add(id);
    this.live.set(grant.grantId, grant.expiresAt);
    this.oldestIssuedAt = Math.min(this.oldestIssuedAt, grant.issuedAt);
    this.holders.add(grant.grantId, this.session);
    clearTimeout(this.expiryTimer);
    // grants live an hour at most; the bound only keeps setTimeout's 32-bit range
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, grant.expiresAt * 1000 - this.nowMs()));
    this.expiryTimer = setTimeout(this.onExpired, delay);
  }
}

/** Whether `candidate` is at least as new as `current` (docs/decisions.md, "The newest permission change wins"). */
function newer(candidate: Permissions, current: Permissions | undefined): boolean {
  return current === undefined || candidate.setAt >= current.setAt;
}

function withPermissions(grant: MediaGrant, permissions: Permissions): MediaGrant {
  return { ...grant, pub: permissions.pub, subs: permissions.subs, subRoom: permissions.subRoom };
}

/** The grant as the client is told of it in `joined` and `renewed`. */
export function grantFields(grant: MediaGrant): GrantFields {
  return {
    role: grant.role,
    expires_at: grant.expiresAt,
    publish_streams: [...grant.pub],
    subscribe_streams: [...grant.subs],
    subscribe_room: grant.subRoom,
  };
}
