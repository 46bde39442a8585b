import type { MediaKind, ParticipantInfo, ServerControl, StreamInfo, StreamSource } from '@rtc/protocol';
import type { SpanMember } from '../../core/ports.ts';
import { MAX_ROOM_PARTICIPANTS } from '../node/limits.ts';
import type { Member } from './member.ts';
import { Stream } from './stream.ts';

export type { DownTrack, KeyFrameSource, Member, RtpAccount } from './member.ts';
export { Stream } from './stream.ts';

/**
 * Told of changes to what the room's members publish (media/node/recorder.ts records them in the store and as
 * webhook events; docs/reference/room-api.md, "Published streams").
 */
export interface PublicationListener {
  published(stream: Stream): void;
  /** Unpublished by its publisher, ended by a permission change, or by the publisher's leave. */
  unpublished(stream: Stream): void;
  /** Muted or unmuted, or its simulcast layers became known. */
  changed(stream: Stream): void;
}

export type PublishResult = { readonly ok: true; readonly stream: Stream } | { readonly ok: false; readonly code: 'stream_in_use' | 'already_published' };

/** A room's settings from the room service API (docs/reference/room-api.md, "Room settings"). */
export interface RoomSettings {
  readonly metadata: string;
  /** 0: only the node's own bound. */
  readonly maxParticipants: number;
  readonly emptyTimeout: number;
}

/** A member of the room joined on another media node (media/node/room-span.ts): shown to this node's members as one of theirs. */
export interface RemoteMember extends SpanMember {
  /** `host:port` of its media node. */
  readonly node: string;
}

export const DEFAULT_ROOM_SETTINGS: RoomSettings = { metadata: '', maxParticipants: 0, emptyTimeout: 0 };

/** A room of one project: its members by user id and its streams by id (stream ids are room-wide). */
export class Room {
  readonly key: string;
  readonly projectId: string;
  readonly roomId: string;
  readonly members = new Map<string, Member>();
  /** Members joined on the room's other media nodes, by participant id. */
  readonly remote = new Map<string, RemoteMember>();
  readonly streams = new Map<number, Stream>();
  /** When the room opened on this node (ms). */
  readonly startedAtMs: number;
  settings: RoomSettings;
  /** Whether `room.started` was recorded: a room kept through its empty_timeout does not start again. */
  started = false;
  /** Runs out the empty_timeout of a room nobody is in any more, at `expiresAtMs`. */
  emptyTimer: NodeJS.Timeout | undefined;
  expiresAtMs = 0;
  private readonly now: () => number;
  private readonly listener: PublicationListener | undefined;

  constructor(projectId: string, roomId: string, now: () => number, settings: RoomSettings = DEFAULT_ROOM_SETTINGS, listener?: PublicationListener) {
    this.key = roomKey(projectId, roomId);
    this.projectId = projectId;
    this.roomId = roomId;
    this.now = now;
    this.listener = listener;
    this.startedAtMs = now();
    this.settings = settings;
  }

  /** Everyone joined in the room, on this node and the others. */
  get participantCount(): number {
    return this.members.size + this.remote.size;
  }

  /** Whether one more may join here: `max_participants` counts the whole room, the node's own bound its members here. */
  isFull(): boolean {
    const max = this.settings.maxParticipants;
    return this.members.size >= MAX_ROOM_PARTICIPANTS || (max > 0 && this.participantCount >= max);
  }

  /** Sends a control message to every member. */
  broadcast(message: ServerControl): void {
    for (const member of this.members.values()) member.sendControl(message);
  }

  /** Adds a member (the caller replaced any earlier session of the same user) and subscribes it. */
  add(member: Member): void {
    this.members.set(member.userId, member);
    for (const stream of this.streams.values()) {
      if (stream.publisher !== member && member.canSubscribe(stream.id)) stream.subscribe(member);
    }
    const joined: ServerControl = { type: 'participant_joined', participant: describeMember(member) };
    for (const other of this.members.values()) if (other !== member) other.sendControl(joined);
  }

  /** Snapshot for a member that just joined: the others and every stream. */
  snapshot(member: Member): { participants: ParticipantInfo[]; streams: StreamInfo[] } {
    const participants = [...this.members.values()].filter((m) => m !== member).map(describeMember)
      .concat([...this.remote.values()].map(describeMember));
    const streams = [...this.streams.values()].map((s) => s.describe(member));
    return { participants, streams };
  }

  remove(member: Member): void {
    if (this.members.get(member.userId) !== member) return;
    this.members.delete(member.userId);
    for (const stream of [...member.published.values()]) this.removeStream(stream, false);
    for (const stream of this.streams.values()) {
      if (stream.unsubscribe(member)) this.scheduleRotation(stream);
    }
    const left: ServerControl = { type: 'participant_left', participant_id: member.participantId, user_id: member.userId };
    for (const other of this.members.values()) other.sendControl(left);
  }

  publish(member: Member, id: number, kind: MediaKind, source: StreamSource = 'unknown'): PublishResult {
    const existing = this.streams.get(id);
    // the same user's stream relayed from another node: its publisher moved here (that node died, or
    // its session there is ending), and the stream is published here from now on
    if (existing?.relayedFrom !== undefined && existing.publisher.userId === member.userId) this.removeStream(existing, false);
    else if (existing) return { ok: false, code: existing.publisher === member ? 'already_published' : 'stream_in_use' };
    const stream = new Stream(id, kind, member, source, (s) => this.layersChanged(s));
    for (const other of this.members.values()) {
      if (other !== member && other.canSubscribe(id)) stream.subscribe(other);
    }
    this.streams.set(id, stream);
    member.published.set(id, stream);
    for (const other of this.members.values()) {
      if (other !== member) other.sendControl({ type: 'stream_added', stream: stream.describe(other) });
    }
    this.listener?.published(stream);
    return { ok: true, stream };
  }

  /**
   * A stream published on another media node of the room, fed here by a relay once its key
   * arrived (media/relayed/relay-feed.ts): the members allowed to are subscribed and every member is
   * told, as for a stream published here; its origin records it, this node does not.
   */
  addRelayed(stream: Stream): boolean {
    if (this.streams.has(stream.id) || !stream.live) return false;
    for (const member of this.members.values()) if (member.canSubscribe(stream.id)) stream.subscribe(member);
    this.streams.set(stream.id, stream);
    for (const member of this.members.values()) member.sendControl({ type: 'stream_added', stream: stream.describe(member) });
    return true;
  }

  /**
   * Mutes or unmutes a stream for the customer's server: while muted none of its media is forwarded
   * (room/forwarding.ts, Stream.forwardRtp). Every member, its publisher too, is told with `stream_muted`;
   * an unmuted video asks its publisher for a key frame, so that subscribers show it at once.
   */
  setMuted(stream: Stream, muted: boolean): void {
    if (!stream.live) return;
    const changed = stream.muted !== muted;
    stream.muted = muted;
    if (changed) {
      const message: ServerControl = { type: 'stream_muted', stream_id: stream.id, participant_id: stream.publisher.participantId, muted };
      for (const member of this.members.values()) member.sendControl(message);
      if (!muted) {
        // restarted at the unmute, not the mute: a video waiting for its key frame would ask for one all along the mute
        stream.restartTracks();
        if (stream.kind === 'video') stream.requestKeyFrame(-1);
      }
    }
    // recorded even when unchanged: the store may have been written by the api node meanwhile
    this.listener?.changed(stream);
  }

  /** `stream_muted` for each muted stream of the room, for a member that just joined (after its `joined`). */
  mutedNotices(): ServerControl[] {
    return [...this.streams.values()].filter((s) => s.muted)
      .map((s) => ({ type: 'stream_muted', stream_id: s.id, participant_id: s.publisher.participantId, muted: true }));
  }

  /** A published video's simulcast layers became known (its WebRTC m-line was negotiated). */
  layersChanged(stream: Stream): void {
    if (stream.live) this.listener?.changed(stream);
  }

  /** Ends a stream; the publisher is told too when the server, not the publisher, ended it. */
  removeStream(stream: Stream, notifyPublisher: boolean): void {
    if (!stream.live) return;
    stream.end();
    this.streams.delete(stream.id);
    stream.publisher.published.delete(stream.id);
    const removed: ServerControl = { type: 'stream_removed', stream_id: stream.id, participant_id: stream.publisher.participantId, user_id: stream.publisher.userId };
    for (const other of this.members.values()) {
      if (other !== stream.publisher || notifyPublisher) other.sendControl(removed);
    }
    // a relayed stream is recorded by its origin
    if (stream.relayedFrom === undefined) this.listener?.unpublished(stream);
  }

  /** After a member's permissions changed (renewal, room service API): its publications and subscriptions follow the new grant. */
  reconcile(member: Member, mayPublish: (streamId: number) => boolean): void {
    for (const stream of [...member.published.values()]) {
      if (!mayPublish(stream.id)) this.removeStream(stream, true);
    }
    for (const stream of this.streams.values()) {
      if (stream.publisher === member) continue;
      const allowed = member.canSubscribe(stream.id);
      const has = stream.subscribers.has(member);
      if (allowed && !has) {
        stream.subscribe(member);
        member.sendControl(stream.keyMessage());
        // a receiver that gets the stream back over WebRTC needs a key frame to show it
        stream.requestKeyFrame(-1);
      } else if (!allowed && has) {
        stream.unsubscribe(member);
        member.sendControl({ type: 'stream_unsubscribed', stream_id: stream.id });
        this.scheduleRotation(stream);
      }
    }
  }

  /** Rotates a stream key once the current turn of the event loop is over (one rotation for many departures). */
  scheduleRotation(stream: Stream): void {
    if (!stream.live) return;
    // a relayed stream's publisher uses the key of its origin: the origin rotates it (and coalesces)
    // and sends the new key over the relay, which passes it on to the subscribers here
    if (stream.rotateAtOrigin) return stream.rotateAtOrigin();
    if (stream.rotationPending) return;
    stream.rotationPending = true;
    setImmediate(() => {
      stream.rotationPending = false;
      if (!stream.live) return;
      stream.rotate(this.now());
      const message = stream.keyMessage();
      // subscribers first: they must hold the new key before the publisher uses it
      for (const member of stream.subscribers) member.sendControl(message);
      for (const relay of stream.relayed) relay.sendKey();
      stream.publisher.sendControl(message);
    });
  }
}

/** The project is part of the key: the same room id in two projects is two rooms. */
export const roomKey = (projectId: string, roomId: string): string => `${projectId}\u0000${roomId}`;

/** How members learn of another member (`joined`, `participant_joined`), wherever it is joined. */
export function describeMember(member: Pick<Member, 'participantId' | 'userId' | 'role' | 'metadata' | 'attributes'>): ParticipantInfo {
  return {
    participant_id: member.participantId, user_id: member.userId, role: member.role, metadata: member.metadata,
    attributes: { ...member.attributes },
  };
}
