import type { Config } from '../config.ts';
import type { Clock, EventBus } from '../core/ports.ts';
import { isCutOff, ProjectCutoffs } from '../customers/project-cutoff.ts';
import type { ProjectCutoffRecord, ProjectStore } from '../customers/store.ts';
import { RoomCutoffs } from '../rooms/cutoff.ts';
import type { RoomCutoffRecord, RoomCutoffStore } from '../rooms/store.ts';
import type { RevocationStore } from '../tokens/store.ts';

/** What the guard needs to know of a grant or signaling token to refuse it. */
export interface GuardedGrant {
  readonly grantId: string;
  readonly projectId: string;
  /** A removal's cut-off refuses the user's grants for the room; a room's end, every user's. */
  readonly roomId: string;
  readonly userId: string;
  /** `iat`: an archive or removal cut-off refuses tokens issued at or before it. */
  readonly issuedAt: number;
}

export interface GrantGuardOptions {
  readonly store: GuardStore;
  readonly bus: EventBus;
  readonly clock: Clock;
  /** A grant was revoked (bus event or store read): end what uses it. Told again for one already known. */
  readonly onRevoked: (grantId: string, expiresAt: number) => void;
  /** A project's archive cut-off arrived that is new or later than the one known: end what it covers. */
  readonly onCutOff: (cutoff: ProjectCutoffRecord) => void;
  /** A removal's or a room's end's cut-off arrived that is new or later than the one known: end what it covers. */
  readonly onRoomCutOff: (cutoff: RoomCutoffRecord) => void;
  /**
   * Also read revocations and cut-offs from the store at this interval, for a bus that does not
   * reach the processes that revoke and archive (PostgreSQL without Redis). Undefined: the bus is enough.
   */
  readonly pollMs?: number | undefined;
  /** Whether a poll is worth its query now (a role without sessions skips it); default: always. */
  readonly active?: (() => boolean) | undefined;
  /** A read of the store failed (the next poll or resync reads again). */
  readonly onReadError?: ((err: unknown) => void) | undefined;
}

/** What the guard reads of the store: revocations, archive cut-offs, removal cut-offs. */
export type GuardStore = Pick<RevocationStore, 'isRevoked' | 'listRevocations'> & Pick<ProjectStore, 'projectCutoff' | 'listProjectCutoffs'>
  & Pick<RoomCutoffStore, 'roomCutoff' | 'listRoomCutoffs'>;

/** How often revocations and cut-offs of expired tokens are forgotten: those tokens are refused as expired. */
export const REVOCATION_PURGE_INTERVAL_MS = 60_000;

/** How often a media or signaling role reads revocations from the store when it polls (well inside the one-second target). */
export const STORE_POLL_MS = 250;

/**
 * Whether the media and signaling roles must read revocations from the store: only on PostgreSQL
 * without Redis, where the bus stays inside each process (docs/operations/scale-out.md). On SQLite
 * the bus reaches every process of the data directory, with Redis every node.
 */
export function pollsStore(config: Config, deps: { readonly bus: Pick<EventBus, 'reach'> }): boolean {
  return deps.bus.reach === 'process' && config.store.kind === 'postgres';
}

/**
 * The media and signaling roles' watch over the tokens they admit (docs/operations/scale-out.md):
 * revocations, project archive cut-offs and the cut-offs of removals and ended rooms, heard on the
 * bus, read again from the store when the bus may have missed events (and on a poll where it cannot
 * reach the processes that revoke), kept in memory until the tokens they cover expire, and asked of
 * the store for a token not yet refused in memory. A revocation is in the store before it is published, so none is lost between the two.
 */
export class GrantGuard {
  private readonly revoked = new Map<string, number>();
  private readonly cutoffs = new ProjectCutoffs();
  private readonly roomCutoffs = new RoomCutoffs();
  private readonly options: GrantGuardOptions;
  private readonly unsubscribe: () => void;
  private readonly unsubscribeResync: () => void;
  private readonly timers: NodeJS.Timeout[] = [];
  private reading: Promise<void> | undefined;
  private resyncRetry: NodeJS.Timeout | undefined;
  private closed = false;

  private constructor(options: GrantGuardOptions) {
    this.options = options;
    this.unsubscribe = options.bus.subscribe((event) => {
      if (event.type === 'grant.revoked') this.revoke(event.grantId, event.expiresAt);
      else if (event.type === 'project.archived') this.cutOff(event);
      else if (event.type === 'room.cut_off') this.cutOffRoom(event);
    });
    this.unsubscribeResync = options.bus.onResync(() => this.resync());
  }

  /** Subscribes to the bus, then loads what the store holds (so nothing falls between the two). */
  static async create(options: GrantGuardOptions): Promise<GrantGuard> {
    const guard = GrantGuard.watch(options);
    try {
      await guard.load();
    } catch (err) {
      guard.close();
      throw err;
    }
    return guard;
  }

  /**
   * Subscribes to the bus and starts polling, without a first read of the store: for a role that
   * asks the store about every token it admits anyway (signaling).
   */
  static watch(options: GrantGuardOptions): GrantGuard {
    const guard = new GrantGuard(options);
    if (options.pollMs !== undefined) {
      const poll = setInterval(() => {
        if ((options.active?.() ?? true) && !guard.reading) guard.readQuietly();
      }, options.pollMs);
      poll.unref();
      guard.timers.push(poll);
    }
    const purge = setInterval(() => guard.purge(), REVOCATION_PURGE_INTERVAL_MS);
    purge.unref();
    guard.timers.push(purge);
    return guard;
  }

  /** Revoked, or cut off by its project's archive or a removal from its room, as far as this process has heard. */
  isRefusedInMemory(grant: GuardedGrant): boolean {
    return this.revoked.has(grant.grantId) || this.cutoffs.covers(grant.projectId, grant.issuedAt) || this.roomCutoffs.covers(grant);
  }

  /** Refused in memory, else as the store says (a revocation made before this process heard of it, also after a restart). */
  async isRefused(grant: GuardedGrant): Promise<boolean> {
    if (this.isRefusedInMemory(grant)) return true;
    const { store } = this.options;
    const [revoked, cutoff, roomCutAt] = await Promise.all([
      store.isRevoked(grant.grantId), store.projectCutoff(grant.projectId), store.roomCutoff(grant.projectId, grant.roomId, grant.userId),
    ]);
    return revoked || isCutOff(cutoff?.cutAt, grant.issuedAt) || isCutOff(roomCutAt, grant.issuedAt) || this.isRefusedInMemory(grant);
  }

  /** The removal and room-end cut-offs this process knows for a user in a room (why a revoked session ended). */
  roomCutoffsOf(projectId: string, roomId: string, userId: string): RoomCutoffRecord[] {
    return this.roomCutoffs.of(projectId, roomId, userId);
  }

  /** Stops listening to the bus and the store. */
  close(): void {
    this.closed = true;
    this.unsubscribe();
    this.unsubscribeResync();
    for (const timer of this.timers) clearInterval(timer);
    clearTimeout(this.resyncRetry);
  }

  private revoke(grantId: string, expiresAt: number): void {
    const known = this.revoked.get(grantId);
    if (known === undefined || known < expiresAt) this.revoked.set(grantId, expiresAt);
    this.options.onRevoked(grantId, expiresAt);
  }

  private cutOff(cutoff: ProjectCutoffRecord): void {
    const record = { projectId: cutoff.projectId, cutAt: cutoff.cutAt, expiresAt: cutoff.expiresAt };
    if (this.cutoffs.add(record)) this.options.onCutOff(record);
  }

  private cutOffRoom(cutoff: RoomCutoffRecord): void {
    const record = { projectId: cutoff.projectId, roomId: cutoff.roomId, userId: cutoff.userId, cutAt: cutoff.cutAt, expiresAt: cutoff.expiresAt };
    if (this.roomCutoffs.add(record)) this.options.onRoomCutOff(record);
  }

  private nowSec(): number {
    return Math.floor(this.options.clock.nowMs() / 1000);
  }

  private purge(): void {
    const now = this.nowSec();
    for (const [grantId, expiresAt] of this.revoked) if (expiresAt < now) this.revoked.delete(grantId);
    this.cutoffs.purge(now);
    this.roomCutoffs.purge(now);
  }

  /**
   * The bus may have missed events: reads the store, and again every 250 ms until a read succeeds
   * (a bus back before the store would otherwise leave what it missed unread until the tokens expire).
   */
  private resync(): void {
    clearTimeout(this.resyncRetry);
    this.resyncRetry = undefined;
    this.load().catch((err: unknown) => {
      this.options.onReadError?.(err);
      if (this.closed || this.resyncRetry) return;
      this.resyncRetry = setTimeout(() => this.resync(), STORE_POLL_MS);
      this.resyncRetry.unref();
    });
  }

  private readQuietly(): void {
    this.load().catch((err: unknown) => this.options.onReadError?.(err));
  }

  /**
   * Reads the stored revocations and cut-offs and applies them as if they came over the bus. One
   * read at a time: a call made during a read waits for it and then reads again (the read in
   * flight may predate what the caller must see).
   *
   * A removal stores its cut-off before the grants it revokes, and publishes it first: the
   * revocations are read first and the cut-offs after, then applied cut-offs first, so a session a
   * removal or a room's end closes says so (`removed`, `room_ended`) rather than `revoked`
   * (docs/reference/webhooks.md, "Why a participant left").
   */
  load(): Promise<void> {
    const read = async (): Promise<void> => {
      const now = this.nowSec();
      const { store } = this.options;
      const revocations = await store.listRevocations(now);
      const [cutoffs, roomCutoffs] = await Promise.all([store.listProjectCutoffs(now), store.listRoomCutoffs(now)]);
      for (const c of roomCutoffs) this.cutOffRoom(c);
      for (const c of cutoffs) this.cutOff(c);
      for (const r of revocations) this.revoke(r.grantId, r.expiresAt);
    };
    const next = (this.reading ?? Promise.resolve()).catch(() => {}).then(read);
    const current = next.finally(() => {
      if (this.reading === current) this.reading = undefined;
    });
    this.reading = current;
    return current;
  }
}
