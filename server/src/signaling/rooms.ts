import {
  encodeSignalingEventData, type Role, type SignalingJoinResult, type SignalingLeaveReason, type SignalingParticipant,
} from '@rtc/protocol';
import { ApiError } from '../core/errors.ts';
import { newLogEpoch } from '../core/ids.ts';
import { isCutOff } from '../customers/project-cutoff.ts';
import type { Clock } from '../core/ports.ts';
import { formatEventId, parseEventId, sseFrame } from './sse.ts';
import type { SessionIdentity } from './verify-token.ts';

/** Where a session's event stream writes; the HTTP edge implements it over a response. */
export interface EventSink {
  /** Writes one frame; false when the reader is too far behind (the caller then ends the stream). */
  write(frame: string): boolean;
  /** Ends the stream; later writes are ignored. */
  end(): void;
}

export type LeaveReason = SignalingLeaveReason;

export type Participant = SignalingParticipant;

export type JoinResult = SignalingJoinResult;

export interface RoomSettings {
  readonly retention: { readonly ms: number; readonly events: number };
  readonly presenceGraceMs: number;
  readonly maxStreamsPerSession: number;
  readonly maxSessionsPerRoom: number;
}

/** The rooms of one signaling process: presence, an ordered event log per room, and live streams. */
export interface RoomRegistry {
  /** Adds the token's session to its room's presence; joining again is a no-op. */
  join(identity: SessionIdentity): JoinResult;
  /** Removes the session (its open streams end); false when it was not joined. */
  leave(grantId: string): boolean;
  /** Appends a message to the room's log and delivers it; `to` names one participant. */
  send(grantId: string, dataJson: string, to: string | undefined): { id: string };
  participants(projectId: string, roomId: string): Participant[];
  /**
   * Attaches a stream to a joined session, first replaying what it missed since `lastEventId`
   * (or a snapshot). Returns the function that detaches it when the connection closes.
   */
  openStream(grantId: string, lastEventId: string | undefined, sink: EventSink): () => void;
  /** Ends the session of a revoked grant: its streams get `revoked` and end; the room sees it leave. */
  revoke(grantId: string): void;
  /** Ends, like `revoke`, every session of the project whose token was issued at or before `cutAt` (an archive). */
  cutOff(projectId: string, cutAt: number): void;
  /** Ends every stream and forgets every room. */
  close(): void;
  /** Counts, for logs and benchmarks. */
  stats(): { rooms: number; sessions: number; streams: number };
}

interface LogEntry {
  readonly seq: number;
  readonly atMs: number;
  readonly frame: string;
  /** A direct message's recipient; undefined for the whole room. */
  readonly to: string | undefined;
  /** The sending session, which does not receive its own message. */
  readonly exceptGrant: string | undefined;
}

interface Presence {
  readonly role: Role;
  readonly joinedAtMs: number;
  /** Sequence number of this user's join event: nothing older is replayed to them. */
  readonly sinceSeq: number;
  readonly sessions: Set<Session>;
}

interface Session {
  readonly identity: SessionIdentity;
  readonly room: Room;
  /** Oldest first. */
  readonly streams: Set<EventSink>;
  idleTimer: NodeJS.Timeout | undefined;
  expiryTimer: NodeJS.Timeout | undefined;
}

interface Room {
  readonly key: string;
  readonly roomId: string;
  readonly epoch: string;
  seq: number;
  readonly log: LogEntry[];
  readonly users: Map<string, Presence>;
  sessionCount: number;
}

// a timer longer than this overflows setTimeout; tokens live an hour at most
const MAX_TIMER_MS = 2 ** 31 - 1;

const roomKey = (projectId: string, roomId: string): string => `${projectId}\u0000${roomId}`;

/** Creates the in-process room registry; time comes from `clock`, timers from the runtime. */
export function createRoomRegistry(settings: RoomSettings, clock: Clock): RoomRegistry {
  const rooms = new Map<string, Room>();
  const sessions = new Map<string, Session>();

  const headId = (room: Room): string => formatEventId(room.epoch, room.seq);

  const listParticipants = (room: Room): Participant[] =>
    [...room.users].map(([userId, p]) => ({ user_id: userId, role: p.role, joined_at_ms: p.joinedAtMs }));

  const trim = (room: Room): void => {
    const oldest = clock.nowMs() - settings.retention.ms;
    let drop = 0;
    while (drop < room.log.length
      && (room.log.length - drop > settings.retention.events || room.log[drop]!.atMs < oldest)) drop += 1;
    if (drop > 0) room.log.splice(0, drop);
  };

  const visible = (entry: LogEntry, session: Session): boolean =>
    entry.exceptGrant !== session.identity.grantId && (entry.to === undefined || entry.to === session.identity.userId);

  const endStream = (session: Session, sink: EventSink): void => {
    session.streams.delete(sink);
    sink.end();
    if (session.streams.size === 0 && sessions.get(session.identity.grantId) === session) armIdleTimer(session);
  };

  /** Appends an event to the room's log and writes it to every stream allowed to see it. */
  const append = (room: Room, event: string, payload: string, to?: string, exceptGrant?: string): string => {
    room.seq += 1;
    const id = headId(room);
    const entry: LogEntry = { seq: room.seq, atMs: clock.nowMs(), frame: sseFrame(event, payload, id), to, exceptGrant };
    room.log.push(entry);
    trim(room);
    const behind: [Session, EventSink][] = [];
    const recipients = to === undefined ? room.users.values() : [room.users.get(to)].values();
    for (const presence of recipients) {
      if (!presence) continue;
      for (const session of presence.sessions) {
        if (!visible(entry, session)) continue;
        for (const sink of session.streams) if (!sink.write(entry.frame)) behind.push([session, sink]);
      }
    }
    // a reader that fell behind resumes from its last event id on a new stream
    for (const [session, sink] of behind) endStream(session, sink);
    return id;
  };

  const removeSession = (session: Session, reason: LeaveReason): void => {
    if (sessions.get(session.identity.grantId) !== session) return;
    sessions.delete(session.identity.grantId);
    clearTimeout(session.idleTimer);
    clearTimeout(session.expiryTimer);
    const { room } = session;
    const userId = session.identity.userId;
    const presence = room.users.get(userId);
    const last = presence !== undefined && presence.sessions.size === 1 && presence.sessions.has(session);
    if (reason === 'revoked' || reason === 'expired') {
      // the session's own streams learn why they end, then close; the room sees a leave
      const frame = sseFrame(reason, encodeSignalingEventData(reason, { at_ms: clock.nowMs() }));
      for (const sink of session.streams) {
        sink.write(frame);
        sink.end();
      }
      session.streams.clear();
    }
    if (last) {
      // for an explicit leave, the session's own streams still receive the leave event
      append(room, 'leave', encodeSignalingEventData('leave', { user_id: userId, reason, at_ms: clock.nowMs() }));
      room.users.delete(userId);
    } else {
      presence?.sessions.delete(session);
    }
    for (const sink of session.streams) sink.end();
    session.streams.clear();
    room.sessionCount -= 1;
    if (room.users.size === 0) rooms.delete(room.key);
  };

  function armIdleTimer(session: Session): void {
    clearTimeout(session.idleTimer);
    session.idleTimer = setTimeout(() => removeSession(session, 'timeout'), settings.presenceGraceMs);
    session.idleTimer.unref();
  }

  const joinedSession = (grantId: string, what: string): Session => {
    const session = sessions.get(grantId);
    if (!session) throw new ApiError('conflict', `join the room before ${what}`);
    return session;
  };

  return {
    join(identity) {
      const existing = sessions.get(identity.grantId);
      const key = roomKey(identity.projectId, identity.roomId);
      let room = existing?.room ?? rooms.get(key);
      if (!existing) {
        if (room && room.sessionCount >= settings.maxSessionsPerRoom) {
          throw new ApiError('conflict', `the room is full: at most ${settings.maxSessionsPerRoom} sessions may join it`);
        }
        if (!room) {
          room = { key, roomId: identity.roomId, epoch: newLogEpoch(), seq: 0, log: [], users: new Map(), sessionCount: 0 };
          rooms.set(key, room);
        }
        const session: Session = { identity, room, streams: new Set(), idleTimer: undefined, expiryTimer: undefined };
        sessions.set(identity.grantId, session);
        room.sessionCount += 1;
        let presence = room.users.get(identity.userId);
        if (!presence) {
          const nowMs = clock.nowMs();
          append(room, 'join', encodeSignalingEventData('join', { user_id: identity.userId, role: identity.role, at_ms: nowMs }));
          presence = { role: identity.role, joinedAtMs: nowMs, sinceSeq: room.seq, sessions: new Set() };
          room.users.set(identity.userId, presence);
        }
        presence.sessions.add(session);
        armIdleTimer(session);
        const remainingMs = identity.expiresAt * 1000 - clock.nowMs();
        session.expiryTimer = setTimeout(() => removeSession(session, 'expired'), Math.min(Math.max(0, remainingMs), MAX_TIMER_MS));
        session.expiryTimer.unref();
      }
      const joined = room!;
      return {
        room_id: joined.roomId,
        user_id: identity.userId,
        role: identity.role,
        participants: listParticipants(joined),
        last_event_id: headId(joined),
      };
    },

    leave(grantId) {
      const session = sessions.get(grantId);
      if (!session) return false;
      removeSession(session, 'left');
      return true;
    },

    send(grantId, dataJson, to) {
      const session = joinedSession(grantId, 'sending messages');
      const { room, identity } = session;
      if (to !== undefined && !room.users.has(to)) {
        throw new ApiError('not_found', 'the recipient is not a participant of this room');
      }
      const head = `{"from":${JSON.stringify(identity.userId)}${to === undefined ? '' : `,"to":${JSON.stringify(to)}`}`;
      const id = append(room, 'message', `${head},"data":${dataJson},"at_ms":${clock.nowMs()}}`, to, grantId);
      return { id };
    },

    participants(projectId, roomId) {
      const room = rooms.get(roomKey(projectId, roomId));
      return room ? listParticipants(room) : [];
    },

    openStream(grantId, lastEventId, sink) {
      const session = joinedSession(grantId, 'opening its event stream');
      const { room, identity } = session;
      const presence = room.users.get(identity.userId)!;
      trim(room);
      let from: number | undefined;
      const last = lastEventId === undefined ? undefined : parseEventId(lastEventId);
      // an id from before the user's current presence began is answered with a snapshot: what
      // happened while they were away is not theirs to read, and their view of the room is stale
      if (last && last.epoch === room.epoch && last.seq <= room.seq && last.seq >= presence.sinceSeq - 1) {
        const firstKept = room.log[0]?.seq ?? room.seq + 1;
        if (last.seq + 1 >= firstKept) from = last.seq;
      }
      let healthy = true;
      let replayed = 0;
      if (from === undefined) {
        const snapshot = encodeSignalingEventData('snapshot', { room_id: room.roomId, participants: listParticipants(room), reset: lastEventId !== undefined });
        healthy = sink.write(sseFrame('snapshot', snapshot, headId(room)));
      } else {
        for (const entry of room.log) {
          if (entry.seq <= from || !visible(entry, session)) continue;
          replayed += 1;
          if (!sink.write(entry.frame)) {
            healthy = false;
            break;
          }
        }
      }
      // everything from here on is live
      healthy &&= sink.write(sseFrame('ready', encodeSignalingEventData('ready', { room_id: room.roomId, replayed, at_ms: clock.nowMs() })));
      if (!healthy) {
        sink.end();
        return () => undefined;
      }
      if (session.streams.size >= settings.maxStreamsPerSession) {
        const oldest = session.streams.values().next().value;
        if (oldest) {
          session.streams.delete(oldest);
          oldest.end();
        }
      }
      session.streams.add(sink);
      clearTimeout(session.idleTimer);
      session.idleTimer = undefined;
      return () => {
        if (session.streams.has(sink)) endStream(session, sink);
      };
    },

    revoke(grantId) {
      const session = sessions.get(grantId);
      if (session) removeSession(session, 'revoked');
    },

    cutOff(projectId, cutAt) {
      for (const session of [...sessions.values()]) {
        if (session.identity.projectId === projectId && isCutOff(cutAt, session.identity.issuedAt)) removeSession(session, 'revoked');
      }
    },

    close() {
      for (const session of sessions.values()) {
        clearTimeout(session.idleTimer);
        clearTimeout(session.expiryTimer);
        for (const sink of session.streams) sink.end();
        session.streams.clear();
      }
      sessions.clear();
      rooms.clear();
    },

    stats() {
      let streams = 0;
      for (const session of sessions.values()) streams += session.streams.size;
      return { rooms: rooms.size, sessions: sessions.size, streams };
    },
  };
}
