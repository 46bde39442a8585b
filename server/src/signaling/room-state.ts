import type { RoomCutoffRecord } from '../rooms/store.ts';
import type { EventSink, JoinResult, Participant, RoomRegistry } from './rooms.ts';
import type { SessionIdentity } from './verify-token.ts';

/**
 * Where the signaling service keeps its rooms: presence, each room's ordered event log and the
 * live streams. Two implementations: the in-process registry (rooms.ts, the embedded default) and
 * Redis (redis-rooms.ts), which lets every signaling node of a cluster serve every room
 * (docs/operations/scale-out.md, "Signaling").
 */
export interface RoomState {
  /** True when the rooms are shared with other processes (state changes are not in this process's turn). */
  readonly shared: boolean;
  join(identity: SessionIdentity): Promise<JoinResult>;
  leave(identity: SessionIdentity): Promise<void>;
  send(identity: SessionIdentity, dataJson: string, to: string | undefined): Promise<{ id: string }>;
  participants(projectId: string, roomId: string): Promise<Participant[]>;
  /** Replays what the session missed, attaches the stream, and returns the function that detaches it. */
  openStream(identity: SessionIdentity, lastEventId: string | undefined, sink: EventSink): Promise<() => void>;
  /** A revoked grant: its streams get `revoked` and end; the room sees it leave once. */
  revoke(grantId: string): void;
  /** An archive: like `revoke` for every session of the project issued at or before `cutAt`. */
  cutOff(projectId: string, cutAt: number): void;
  /**
   * A removal from the room, or its end: like `revoke` for every session the cut-off covers. Only
   * shared rooms need it: the service ends the sessions joined through it itself.
   */
  cutOffRoom(cutoff: Pick<RoomCutoffRecord, 'projectId' | 'roomId' | 'userId' | 'cutAt'>): void;
  /** Ends this process's streams and releases what it holds. */
  close(): void;
  /** This process's counts, for logs, metrics and benchmarks. */
  stats(): { rooms: number; sessions: number; streams: number };
}

/**
 * The in-process registry behind the `RoomState` interface: each call runs the registry
 * synchronously, in the same turn as the checks the service makes before it.
 */
export function localRoomState(registry: RoomRegistry): RoomState {
  return {
    shared: false,
    join: async (identity) => registry.join(identity),
    leave: async (identity) => {
      registry.leave(identity.grantId);
    },
    send: async (identity, dataJson, to) => registry.send(identity.grantId, dataJson, to),
    participants: async (projectId, roomId) => registry.participants(projectId, roomId),
    openStream: async (identity, lastEventId, sink) => registry.openStream(identity.grantId, lastEventId, sink),
    revoke: (grantId) => registry.revoke(grantId),
    cutOff: (projectId, cutAt) => registry.cutOff(projectId, cutAt),
    // every session of this registry was joined through this process's service, which ends them
    cutOffRoom: () => undefined,
    close: () => registry.close(),
    stats: () => registry.stats(),
  };
}
