import { randomBytes } from 'node:crypto';
import {
  KEY_BYTES, KIND_CODE, REPLAY_WINDOW, ReplayWindow, type MediaKind, type ParticipantInfo, type Role, type ServerControl, type StreamInfo,
  type StreamSource,
} from '@rtc/protocol';
import { KEY_ROTATION_GRACE_MS, MAX_ROOM_PARTICIPANTS } from '../node/limits.ts';
import type { ForwardedRtp, StreamLayers } from '../rtp/layers.ts';

/** What a room needs of a session. */
export interface Member {
  readonly participantId: string;
  readonly userId: string;
  readonly role: Role;
  /** Set by the customer's server through the room service API (docs/reference/room-api.md, "Metadata and attributes"). */
  metadata: string;
  attributes: Readonly<Record<string, string>>;
  /** Streams this member publishes, by id. */
  readonly published: Map<number, Stream>;
  canSubscribe(streamId: number): boolean;
  sendControl(message: ServerControl): void;
  pushMedia(kind: number, message: Buffer): void;
  /** Sends an RTP packet of a stream over the member's peer connection, if it receives it there; true if sent. */
  forwardRtp(streamId: number, kind: MediaKind, packet: ForwardedRtp): boolean;
  /** Asks the member, as the publisher of a stream, for a key frame of one simulcast layer of it (-1: all). */
  requestKeyFrame(streamId: number, layer: number): void;
  /** A stream it receives over WebRTC resumes after a mute: what comes next is a new source. */
  restartRtp(streamId: number): void;
  /** The loss its client last reported for a stream it receives over WebRTC (fraction, 0 when unknown). */
  receiveLoss(streamId: number): number;
}

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

interface KeyGeneration {
  readonly epoch: number;
  readonly key: Buffer;
  readonly window: ReplayWindow;
}

/**
 * One published stream. Its key is the stream key: the publisher seals frames under it, the
 * server authenticates each frame once and forwards the same bytes to every subscriber, who
 * received the key inside its own sealed session. The key rotates when a subscriber loses access.
 */
/** A publisher is asked for a key frame of one stream at most this often, whatever the subscribers ask. */
const KEY_FRAME_REQUEST_INTERVAL_MS = 250;

export class Stream {
  readonly id: number;
  readonly kind: MediaKind;
  readonly kindCode: number;
  readonly publisher: Member;
  /** What the publisher said the stream carries. */
  readonly source: StreamSource;
  readonly subscribers = new Set<Member>();
  /** Muted by the customer's server: none of its media is forwarded (docs/reference/room-api.md, "Muting a stream"). */
  muted = false;
  /** The simulcast rids of a WebRTC video, smallest first, once its m-line is negotiated (empty: one layer). */
  rids: readonly string[] = [];
  current: KeyGeneration;
  previous: (KeyGeneration & { readonly until: number }) | undefined;
  rotationPending = false;
  live = true;
  /** When the publisher was last asked for a key frame of each layer (ms). */
  private readonly keyFrameAskedAtMs: number[] = [];
  /** Simulcast layers of a video published over WebRTC, once its m-line is negotiated. */
  layers: StreamLayers | undefined;

  constructor(id: number, kind: MediaKind, publisher: Member, source: StreamSource = 'unknown') {
    this.id = id;
    this.kind = kind;
    this.source = source;
    this.kindCode = KIND_CODE[kind];
    this.publisher = publisher;
    this.current = { epoch: 1, key: randomBytes(KEY_BYTES), window: new ReplayWindow(REPLAY_WINDOW) };
  }

  /** The key generation a frame names by its epoch, while it may still be used. */
  generation(epoch: number, nowMs: number): KeyGeneration | undefined {
    if (epoch === this.current.epoch) return this.current;
    const previous = this.previous;
    return previous && previous.epoch === epoch && nowMs < previous.until ? previous : undefined;
  }

  rotate(nowMs: number): void {
    this.previous = { ...this.current, until: nowMs + KEY_ROTATION_GRACE_MS };
    const epoch = this.current.epoch === 0xffff ? 1 : this.current.epoch + 1;
    this.current = { epoch, key: randomBytes(KEY_BYTES), window: new ReplayWindow(REPLAY_WINDOW) };
  }

  /** A subscriber needs a key frame of `layer`: the publisher is asked, at most every KEY_FRAME_REQUEST_INTERVAL_MS whatever the subscribers ask. */
  askKeyFrame(layer: number, nowMs: number): void {
    const asked = this.keyFrameAskedAtMs;
    if (nowMs - (asked[layer] ?? Number.NEGATIVE_INFINITY) < KEY_FRAME_REQUEST_INTERVAL_MS) return;
    asked[layer] = nowMs;
    this.publisher.requestKeyFrame(this.id, layer);
  }

  keyMessage(): ServerControl {
    return { type: 'stream_key', stream_id: this.id, epoch: this.current.epoch, key: this.current.key.toString('base64url') };
  }

  /** How a member sees this stream; the key only for those who receive it. */
  describe(forMember: Member): StreamInfo {
    const base = {
      stream_id: this.id,
      kind: this.kind,
      participant_id: this.publisher.participantId,
      user_id: this.publisher.userId,
    };
    if (!this.subscribers.has(forMember)) return { ...base, subscribed: false };
    return { ...base, subscribed: true, epoch: this.current.epoch, key: this.current.key.toString('base64url') };
  }
}

export type PublishResult = { readonly ok: true; readonly stream: Stream } | { readonly ok: false; readonly code: 'stream_in_use' | 'already_published' };

/** A room's settings from the room service API (docs/reference/room-api.md, "Room settings"). */
export interface RoomSettings {
  readonly metadata: string;
  /** 0: only the node's own bound. */
  readonly maxParticipants: number;
  readonly emptyTimeout: number;
}

export const DEFAULT_ROOM_SETTINGS: RoomSettings = { metadata: '', maxParticipants: 0, emptyTimeout: 0 };

/** A room of one project: its members by user id and its streams by id (stream ids are room-wide). */
export class Room {
  readonly key: string;
  readonly projectId: string;
  readonly roomId: string;
  readonly members = new Map<string, Member>();
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

  isFull(): boolean {
    const max = this.settings.maxParticipants > 0 ? Math.min(this.settings.maxParticipants, MAX_ROOM_PARTICIPANTS) : MAX_ROOM_PARTICIPANTS;
    return this.members.size >= max;
  }

  /** Sends a control message to every member. */
  broadcast(message: ServerControl): void {
    for (const member of this.members.values()) member.sendControl(message);
  }

  /** Adds a member (the caller replaced any earlier session of the same user) and subscribes it. */
  add(member: Member): void {
    this.members.set(member.userId, member);
    for (const stream of this.streams.values()) {
      if (stream.publisher !== member && member.canSubscribe(stream.id)) stream.subscribers.add(member);
    }
    const joined: ServerControl = { type: 'participant_joined', participant: describeMember(member) };
    for (const other of this.members.values()) if (other !== member) other.sendControl(joined);
  }

  /** Snapshot for a member that just joined: the others and every stream. */
  snapshot(member: Member): { participants: ParticipantInfo[]; streams: StreamInfo[] } {
    const participants = [...this.members.values()].filter((m) => m !== member).map(describeMember);
    const streams = [...this.streams.values()].map((s) => s.describe(member));
    return { participants, streams };
  }

  remove(member: Member): void {
    if (this.members.get(member.userId) !== member) return;
    this.members.delete(member.userId);
    for (const stream of [...member.published.values()]) this.removeStream(stream, false);
    for (const stream of this.streams.values()) {
      if (stream.subscribers.delete(member)) this.scheduleRotation(stream);
    }
    const left: ServerControl = { type: 'participant_left', participant_id: member.participantId, user_id: member.userId };
    for (const other of this.members.values()) other.sendControl(left);
  }

  publish(member: Member, id: number, kind: MediaKind, source: StreamSource = 'unknown'): PublishResult {
    const existing = this.streams.get(id);
    if (existing) return { ok: false, code: existing.publisher === member ? 'already_published' : 'stream_in_use' };
    const stream = new Stream(id, kind, member, source);
    for (const other of this.members.values()) {
      if (other !== member && other.canSubscribe(id)) stream.subscribers.add(other);
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
   * Mutes or unmutes a stream for the customer's server: while muted none of its media is forwarded
   * (media/forwarding.ts, Session.onRtp). Every member, its publisher too, is told with `stream_muted`;
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
        for (const subscriber of stream.subscribers) subscriber.restartRtp(stream.id);
        if (stream.kind === 'video') stream.publisher.requestKeyFrame(stream.id, -1);
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
    stream.live = false;
    this.streams.delete(stream.id);
    stream.publisher.published.delete(stream.id);
    stream.subscribers.clear();
    const removed: ServerControl = { type: 'stream_removed', stream_id: stream.id, participant_id: stream.publisher.participantId, user_id: stream.publisher.userId };
    for (const other of this.members.values()) {
      if (other !== stream.publisher || notifyPublisher) other.sendControl(removed);
    }
    this.listener?.unpublished(stream);
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
        stream.subscribers.add(member);
        member.sendControl(stream.keyMessage());
        // a receiver that gets the stream back over WebRTC needs a key frame to show it
        stream.publisher.requestKeyFrame(stream.id, -1);
      } else if (!allowed && has) {
        stream.subscribers.delete(member);
        member.sendControl({ type: 'stream_unsubscribed', stream_id: stream.id });
        this.scheduleRotation(stream);
      }
    }
  }

  /** Rotates a stream key once the current turn of the event loop is over (one rotation for many departures). */
  scheduleRotation(stream: Stream): void {
    if (stream.rotationPending || !stream.live) return;
    stream.rotationPending = true;
    setImmediate(() => {
      stream.rotationPending = false;
      if (!stream.live) return;
      stream.rotate(this.now());
      const message = stream.keyMessage();
      // subscribers first: they must hold the new key before the publisher uses it
      for (const member of stream.subscribers) member.sendControl(message);
      stream.publisher.sendControl(message);
    });
  }
}

/** The project is part of the key: the same room id in two projects is two rooms. */
export const roomKey = (projectId: string, roomId: string): string => `${projectId}\u0000${roomId}`;

function describeMember(member: Member): ParticipantInfo {
  return {
    participant_id: member.participantId, user_id: member.userId, role: member.role, metadata: member.metadata,
    attributes: { ...member.attributes },
  };
}
