import { randomBytes } from 'node:crypto';
import { encodeSignalingEventData } from '@rtc/protocol';
import { ApiError } from '../core/errors.ts';
import { newLogEpoch } from '../core/ids.ts';
import type { Clock } from '../core/ports.ts';
import { isCutOff } from '../customers/project-cutoff.ts';
import { roomCutoffCovers } from '../rooms/cutoff.ts';
import { connectRedis, createRedisClient, redisReady, withoutArguments, type RedisTarget } from '../redis/client.ts';
import { JOIN, OPEN, parseNote, participantsFrom, REMOVE, SEND, writeOpening, type Note, type Script } from './redis-rooms-replies.ts';
import type { EventSink, LeaveReason, RoomSettings } from './rooms.ts';
import type { RoomState } from './room-state.ts';
import { formatEventId, parseEventId, sseFrame } from './sse.ts';
import type { SessionIdentity } from './verify-token.ts';

export interface RedisRoomStateOptions {
  /** The cluster's Redis (`REDIS_URL`, or Redis Sentinel); a string is a URL. */
  readonly target: RedisTarget | string;
  readonly settings: RoomSettings;
  readonly clock: Clock;
  /** Told of connection errors and of background work that failed (never the URL). */
  readonly onError: (err: unknown) => void;
  /** Between two looks for sessions whose lease ran out (default 250 ms). */
  readonly sweepMs?: number | undefined;
  /** Key and channel prefix (default `rtc:sig`); tests give each case its own. */
  readonly prefix?: string | undefined;
}

export interface RedisRoomState extends RoomState {
  /** Resolves once both connections answer (startup waits for it). */
  ready(): Promise<void>;
}

/** How often a sweep runs by default: a lapsed presence leaves within this much of its deadline. */
const DEFAULT_SWEEP_MS = 250;
/** Lapsed sessions removed per sweep; the next sweep takes the rest. */
const SWEEP_BATCH = 64;

interface LocalRoom {
  readonly prefix: string;
  readonly streams: Set<LocalStream>;
  readonly subscribed: Promise<unknown>;
}

interface LocalStream {
  readonly id: string;
  readonly identity: SessionIdentity;
  readonly sink: EventSink;
  readonly room: LocalRoom;
  /** Sequence of the last event written; events up to it are skipped. */
  cursor: number;
  /** Changes heard while the stream was being opened, applied once its replay is written. */
  pending: Note[] | undefined;
  ended: boolean;
}

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64url');

const unavailable = (cause?: unknown): ApiError =>
  new ApiError('unavailable', 'the signaling rooms are unreachable; retry shortly', { retryAfterSec: 1, cause });

/**
 * Rooms shared by every signaling node through Redis (docs/operations/scale-out.md, "Signaling"):
 * the log of each room is a Redis Stream trimmed to the retention window, presence is a pair of
 * hashes with a lease per session, and every change is published on the room's channel, which
 * each node subscribes to while it holds a stream of the room. One connection runs the scripts
 * (failing at once while Redis is unreachable: 503 `unavailable`), another one listens.
 */
export function createRedisRoomState(options: RedisRoomStateOptions): RedisRoomState {
  const { settings, clock, onError } = options;
  const G = options.prefix ?? 'rtc:sig';
  const node = randomBytes(6).toString('base64url');
  const command = createRedisClient(options.target, onError);
  const subscriber = connectRedis(options.target, { autoResubscribe: false, enableOfflineQueue: false }, onError);

  const rooms = new Map<string, LocalRoom>();
  const byGrant = new Map<string, Set<LocalStream>>();
  let streamCounter = 0;
  let closed = false;

  const roomPrefix = (projectId: string, roomId: string): string => `${G}:r:${b64(projectId)}:${b64(roomId)}`;
  const leaseDeadline = (identity: SessionIdentity, nowMs: number): number =>
    Math.min(nowMs + settings.presenceGraceMs, identity.expiresAt * 1000);
  const keep = (): [string, string] => [String(settings.retention.events), String(settings.retention.ms)];

  const run = async (what: Script, args: readonly (string | number)[]): Promise<unknown> => {
    try {
      try {
        return await command.evalsha(what.sha, 0, ...args);
      } catch (err) {
        if (err instanceof Error && err.message.startsWith('NOSCRIPT')) return await command.eval(what.lua, 0, ...args);
        throw err;
      }
    } catch (err) {
      // a logged cause never carries the script's arguments (messages, ids)
      throw unavailable(err instanceof Error ? withoutArguments(err) : err);
    }
  };

  const background = (work: Promise<unknown>): void => {
    work.catch((err: unknown) => {
      if (!closed) onError(err);
    });
  };

  const visible = (note: Extract<Note, { kind: 'E' }>, stream: LocalStream): boolean =>
    note.except !== stream.identity.grantId && (note.to === '' || note.to === stream.identity.userId);

  /** Ends a stream of this process; the session's lease starts running when it was its last one here. */
  const finish = (stream: LocalStream): void => {
    if (stream.ended) return;
    stream.ended = true;
    stream.sink.end();
    const { room, identity } = stream;
    room.streams.delete(stream);
    const mine = byGrant.get(identity.grantId);
    mine?.delete(stream);
    if (mine?.size === 0) byGrant.delete(identity.grantId);
    if (room.streams.size === 0 && rooms.get(room.prefix) === room) {
      rooms.delete(room.prefix);
      if (subscriber.status === 'ready') background(subscriber.unsubscribe(room.prefix));
    }
    if (closed || command.status !== 'ready') return;
    const pipeline = command.pipeline().zrem(`${room.prefix}:st:${identity.grantId}`, stream.id);
    // XX: a session that has left is not brought back
    if (!byGrant.has(identity.grantId)) pipeline.zadd(`${G}:leases`, 'XX', leaseDeadline(identity, clock.nowMs()), identity.grantId);
    background(pipeline.exec());
  };

  const endWith = (stream: LocalStream, kind: string): void => {
    if (stream.ended) return;
    if (kind === 'revoked' || kind === 'expired') stream.sink.write(sseFrame(kind, encodeSignalingEventData(kind, { at_ms: clock.nowMs() })));
    finish(stream);
  };

  const deliver = (stream: LocalStream, note: Note): void => {
    if (stream.ended) return;
    if (stream.pending) {
      stream.pending.push(note);
      return;
    }
    const grant = stream.identity.grantId;
    if (note.kind === 'E') {
      if (note.seq <= stream.cursor) return;
      stream.cursor = note.seq;
      if (note.endGrant === grant && note.endKind !== '') {
        endWith(stream, note.endKind);
        return;
      }
      // a reader that fell behind resumes from its last event id on a new stream
      if (visible(note, stream) && !stream.sink.write(note.frame)) finish(stream);
      else if (note.endGrant === grant) finish(stream);
    } else if (note.kind === 'G') {
      if (note.grant === grant) endWith(stream, note.endKind);
    } else if (note.grant === grant && note.streamId === stream.id) {
      finish(stream);
    }
  };

  subscriber.on('message', (channel: string, message: string) => {
    const room = rooms.get(channel);
    if (!room) return;
    const note = parseNote(message);
    if (!note) return;
    for (const stream of [...room.streams]) deliver(stream, note);
  });
  // what was published while the subscription was lost never arrives: every stream ends, and its
  // reader resumes from its last event id (on this node once it is back, or on another)
  subscriber.on('close', () => {
    for (const room of [...rooms.values()]) for (const stream of [...room.streams]) finish(stream);
    rooms.clear();
  });

  const removeGrant = async (grantId: string, reason: LeaveReason, endKind: string, mode: 'any' | 'lease', nowMs: number, info?: string | null): Promise<void> => {
    const text = info === undefined ? await command.hget(`${G}:grants`, grantId) : info;
    if (text === null) {
      if (mode === 'lease') await command.zrem(`${G}:leases`, grantId);
      return;
    }
    const [prefix, userId, expiresAtMs] = text.split('\n');
    let why = reason;
    let kind = endKind;
    if (mode === 'lease' && Number(expiresAtMs) <= nowMs) {
      why = 'expired';
      kind = 'expired';
    }
    const payload = encodeSignalingEventData('leave', { user_id: userId!, reason: why, at_ms: nowMs });
    await run(REMOVE, [prefix!, G, grantId, '', payload, nowMs, mode, kind, ...keep()]);
  };

  // sessions whose lease ran out: no node renewed it (no stream for the grace, or their node died)
  let sweeping = false;
  const sweep = async (): Promise<void> => {
    if (sweeping || command.status !== 'ready') return;
    sweeping = true;
    try {
      const nowMs = clock.nowMs();
      const due = await command.zrangebyscore(`${G}:leases`, '-inf', nowMs, 'LIMIT', 0, SWEEP_BATCH);
      if (due.length === 0) return;
      const infos = await command.hmget(`${G}:grants`, ...due);
      for (const [i, grantId] of due.entries()) await removeGrant(grantId, 'timeout', '', 'lease', nowMs, infos[i] ?? null);
    } finally {
      sweeping = false;
    }
  };
  const sweepTimer = setInterval(() => background(sweep()), options.sweepMs ?? DEFAULT_SWEEP_MS);
  sweepTimer.unref();

  // the node that holds a session's streams keeps its presence alive
  const renewTimer = setInterval(() => {
    if (byGrant.size === 0 || command.status !== 'ready') return;
    const nowMs = clock.nowMs();
    const pipeline = command.pipeline();
    for (const streams of byGrant.values()) {
      const { identity } = streams.values().next().value!;
      pipeline.zadd(`${G}:leases`, 'XX', leaseDeadline(identity, nowMs), identity.grantId);
    }
    background(pipeline.exec());
  }, Math.max(10, Math.floor(settings.presenceGraceMs / 3)));
  renewTimer.unref();

  const localRoom = (prefix: string): LocalRoom => {
    let room = rooms.get(prefix);
    if (!room) {
      const subscribed = subscriber.subscribe(prefix);
      subscribed.catch(() => undefined);
      room = { prefix, streams: new Set(), subscribed };
      rooms.set(prefix, room);
    }
    return room;
  };

  return {
    shared: true,

    ready: async () => {
      await Promise.all([redisReady(command), redisReady(subscriber)]);
    },

    async join(identity) {
      const prefix = roomPrefix(identity.projectId, identity.roomId);
      const nowMs = clock.nowMs();
      const joinPayload = encodeSignalingEventData('join', { user_id: identity.userId, role: identity.role, at_ms: nowMs });
      const info = [prefix, identity.userId, identity.expiresAt * 1000, identity.projectId, identity.issuedAt].join('\n');
      const reply = await run(JOIN, [
        prefix, G, identity.grantId, identity.userId, identity.role, nowMs, settings.maxSessionsPerRoom, joinPayload,
        newLogEpoch(), leaseDeadline(identity, nowMs), info, ...keep(),
      ]) as [string, string, string, string[]];
      if (reply[0] === 'full') {
        throw new ApiError('conflict', `the room is full: at most ${settings.maxSessionsPerRoom} sessions may join it`);
      }
      return {
        room_id: identity.roomId,
        user_id: identity.userId,
        role: identity.role,
        participants: participantsFrom(reply[3]),
        last_event_id: formatEventId(reply[1], Number(reply[2])),
      };
    },

    async leave(identity) {
      await removeGrant(identity.grantId, 'left', '', 'any', clock.nowMs());
    },

    async send(identity, dataJson, to) {
      const nowMs = clock.nowMs();
      const head = `{"from":${JSON.stringify(identity.userId)}${to === undefined ? '' : `,"to":${JSON.stringify(to)}`}`;
      const payload = `${head},"data":${dataJson},"at_ms":${nowMs}}`;
      const reply = await run(SEND, [roomPrefix(identity.projectId, identity.roomId), identity.grantId, to ?? '', payload, nowMs, ...keep()]) as string[];
      if (reply[0] === 'nojoin') throw new ApiError('conflict', 'join the room before sending messages');
      if (reply[0] === 'norecipient') throw new ApiError('not_found', 'the recipient is not a participant of this room');
      return { id: reply[1]! };
    },

    async participants(projectId, roomId) {
      try {
        return participantsFrom(await command.hgetall(`${roomPrefix(projectId, roomId)}:users`).then((h) => Object.entries(h).flat()));
      } catch (err) {
        throw unavailable(err);
      }
    },

    async openStream(identity, lastEventId, sink) {
      if (subscriber.status !== 'ready' || closed) throw unavailable();
      const prefix = roomPrefix(identity.projectId, identity.roomId);
      const room = localRoom(prefix);
      streamCounter += 1;
      const stream: LocalStream = { id: `${node}.${streamCounter}`, identity, sink, room, cursor: -1, pending: [], ended: false };
      // listening before the log is read: nothing published after the read can be missed
      room.streams.add(stream);
      let mine = byGrant.get(identity.grantId);
      if (!mine) byGrant.set(identity.grantId, mine = new Set());
      mine.add(stream);
      const drop = (): void => {
        stream.pending = undefined;
        stream.ended = true;
        room.streams.delete(stream);
        mine.delete(stream);
        if (mine.size === 0 && byGrant.get(identity.grantId) === mine) byGrant.delete(identity.grantId);
        if (room.streams.size === 0 && rooms.get(prefix) === room) {
          rooms.delete(prefix);
          if (subscriber.status === 'ready') background(subscriber.unsubscribe(prefix));
        }
      };
      let reply: [string, string, string, unknown[]];
      try {
        try {
          await room.subscribed;
        } catch (err) {
          throw unavailable(err);
        }
        const nowMs = clock.nowMs();
        const last = lastEventId === undefined ? undefined : parseEventId(lastEventId);
        reply = await run(OPEN, [
          prefix, G, identity.grantId, last?.epoch ?? '', last ? String(last.seq) : '', nowMs, ...keep(), stream.id,
          settings.maxStreamsPerSession, leaseDeadline(identity, nowMs),
        ]) as typeof reply;
      } catch (err) {
        if (!stream.ended) drop();
        throw err;
      }
      if (reply[0] === 'nojoin') {
        if (!stream.ended) drop();
        throw new ApiError('conflict', 'join the room before opening its event stream');
      }
      // revoked, or the subscription lost, while it was opening: what it was told is in the sink
      if (stream.ended) return () => undefined;
      const [kind, epoch, seqText, body] = reply;
      const head = Number(seqText);
      const healthy = writeOpening(sink, kind, body, identity, lastEventId !== undefined, formatEventId(epoch, head), clock);
      stream.cursor = head;
      const pending = stream.pending ?? [];
      stream.pending = undefined;
      if (!healthy) {
        finish(stream);
        return () => undefined;
      }
      for (const note of pending) deliver(stream, note);
      return () => finish(stream);
    },

    revoke(grantId) {
      // this node's streams end at once; the session leaves the room once, whichever node removes it
      for (const stream of [...byGrant.get(grantId) ?? []]) endWith(stream, 'revoked');
      // while Redis cannot be reached the session's lease lapses instead (docs/operations/scale-out.md)
      if (!closed && command.status === 'ready') background(removeGrant(grantId, 'revoked', 'revoked', 'any', clock.nowMs()));
    },

    cutOff(projectId, cutAt) {
      for (const streams of [...byGrant.values()]) {
        for (const stream of [...streams]) {
          if (stream.identity.projectId === projectId && isCutOff(cutAt, stream.identity.issuedAt)) endWith(stream, 'revoked');
        }
      }
      if (closed || command.status !== 'ready') return;
      background((async () => {
        const grants = await command.hgetall(`${G}:grants`);
        const nowMs = clock.nowMs();
        for (const [grantId, info] of Object.entries(grants)) {
          const [, , , project, issuedAt] = info.split('\n');
          if (project === projectId && isCutOff(cutAt, Number(issuedAt))) await removeGrant(grantId, 'revoked', 'revoked', 'any', nowMs, info);
        }
      })());
    },

    cutOffRoom(cutoff) {
      const covered = (grant: Pick<SessionIdentity, 'projectId' | 'roomId' | 'userId' | 'issuedAt'>): boolean => roomCutoffCovers(cutoff, grant);
      for (const streams of [...byGrant.values()]) {
        for (const stream of [...streams]) if (covered(stream.identity)) endWith(stream, 'revoked');
      }
      if (closed || command.status !== 'ready') return;
      background((async () => {
        // the room's sessions, wherever they joined: grant -> user, then each grant's issue time
        const sessions = Object.entries(await command.hgetall(`${roomPrefix(cutoff.projectId, cutoff.roomId)}:sess`))
          .filter(([, userId]) => cutoff.userId === null || cutoff.userId === userId);
        if (sessions.length === 0) return;
        const infos = await command.hmget(`${G}:grants`, ...sessions.map(([grantId]) => grantId));
        const nowMs = clock.nowMs();
        for (const [i, [grantId, userId]] of sessions.entries()) {
          const info = infos[i];
          if (info === null || info === undefined) continue;
          const issuedAt = Number(info.split('\n')[4]);
          if (covered({ projectId: cutoff.projectId, roomId: cutoff.roomId, userId, issuedAt })) {
            await removeGrant(grantId, 'revoked', 'revoked', 'any', nowMs, info);
          }
        }
      })());
    },

    close() {
      if (closed) return;
      clearInterval(sweepTimer);
      clearInterval(renewTimer);
      // sessions stay joined in Redis: their readers resume on another node within the grace
      for (const room of [...rooms.values()]) for (const stream of [...room.streams]) finish(stream);
      closed = true;
      rooms.clear();
      byGrant.clear();
      command.disconnect();
      subscriber.disconnect();
    },

    stats() {
      let streams = 0;
      for (const room of rooms.values()) streams += room.streams.size;
      return { rooms: rooms.size, sessions: byGrant.size, streams };
    },
  };
}
