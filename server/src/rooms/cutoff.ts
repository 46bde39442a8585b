import { PROJECT_CUTOFF_RETAIN_SECONDS } from '../customers/project-cutoff.ts';
import type { RoomCutoffRecord } from './store.ts';

export { MAX_BAN_SECONDS } from '@rtc/protocol';

/** What stands for "every user of the room" in the stores' `user_id` column (a user id is never empty). */
export const EVERY_USER = '';

/**
 * The cut-off of a removal (of `userId`) or of a room's end (userId null) at `nowSec`, with a ban of
 * `banSeconds` (0: none): grants issued at or before `nowSec + banSeconds` are refused, and the
 * record is kept until the longest of them has expired (docs/decisions/rooms.md, "Removals cut off the user's grants").
 */
export function roomCutoffAt(
  projectId: string, roomId: string, userId: string | null, nowSec: number, banSeconds = 0,
): RoomCutoffRecord {
  const cutAt = nowSec + banSeconds;
  return { projectId, roomId, userId, cutAt, expiresAt: cutAt + PROJECT_CUTOFF_RETAIN_SECONDS };
}

const key = (projectId: string, roomId: string, userId: string | null): string =>
  `${projectId}\u0000${roomId}\u0000${userId ?? EVERY_USER}`;

/** Whether a cut-off covers a grant of `userId` in its room: the user's own, or the whole room's. */
export function roomCutoffCovers(
  cutoff: Pick<RoomCutoffRecord, 'projectId' | 'roomId' | 'userId' | 'cutAt'>,
  grant: { readonly projectId: string; readonly roomId: string; readonly userId: string; readonly issuedAt: number },
): boolean {
  return cutoff.projectId === grant.projectId && cutoff.roomId === grant.roomId
    && (cutoff.userId === null || cutoff.userId === grant.userId) && grant.issuedAt <= cutoff.cutAt;
}

/**
 * The room cut-offs a process has heard of, kept until they expire: the media and signaling roles
 * check grants against them before asking the store.
 */
export class RoomCutoffs {
  private readonly byKey = new Map<string, RoomCutoffRecord>();

  /** Records a cut-off; true when it is new or later than the one known (the caller then ends sessions). */
  add(cutoff: RoomCutoffRecord): boolean {
    const k = key(cutoff.projectId, cutoff.roomId, cutoff.userId);
    const known = this.byKey.get(k);
    if (known && known.cutAt >= cutoff.cutAt) return false;
    this.byKey.set(k, cutoff);
    return true;
  }

  covers(grant: { readonly projectId: string; readonly roomId: string; readonly userId: string; readonly issuedAt: number }): boolean {
    if (this.byKey.size === 0) return false;
    const own = this.byKey.get(key(grant.projectId, grant.roomId, grant.userId));
    const room = this.byKey.get(key(grant.projectId, grant.roomId, null));
    return (own !== undefined && grant.issuedAt <= own.cutAt) || (room !== undefined && grant.issuedAt <= room.cutAt);
  }

  /** The cut-offs known for `userId` in the room: its own removal's and the room's end's, either of which may be missing. */
  of(projectId: string, roomId: string, userId: string): RoomCutoffRecord[] {
    return [this.byKey.get(key(projectId, roomId, userId)), this.byKey.get(key(projectId, roomId, null))]
      .filter((c): c is RoomCutoffRecord => c !== undefined);
  }

  /** Forgets cut-offs that expired before `nowSec` (every grant they cover has expired, and any ban has ended). */
  purge(nowSec: number): void {
    for (const [k, cutoff] of this.byKey) if (cutoff.expiresAt < nowSec) this.byKey.delete(k);
  }
}
