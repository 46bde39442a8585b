import {
  KIND_CODE, NONCE_LABEL, REPLAY_WINDOW, ReplayWindow, type FrameHeader, type ParticipantInfo, type StreamInfo,
} from '@rtc/protocol';
import type { JoinedMessage } from '../connection.ts';
import { open, type SecretKey } from '../crypto.ts';
import type { Emitter } from '../emitter.ts';
import type { MediaSessionEvents, ReceivedFrame, RemoteParticipant, RemoteStream } from '../types.ts';
import type { SessionMedia } from '../webrtc/media.ts';
import { importStreamKey } from './stream-key.ts';

interface KeyGeneration {
  readonly epoch: number;
  readonly key: SecretKey;
  readonly window: ReplayWindow;
}

interface RemoteStreamState {
  readonly info: RemoteStream;
  current: KeyGeneration | undefined;
  previous: KeyGeneration | undefined;
}

/** The room as one `joined` describes it, its stream keys imported. */
export interface JoinedRoom {
  readonly participants: Map<string, RemoteParticipant>;
  readonly streams: Map<number, RemoteStreamState>;
}

/** Reads the participants and streams of `joined`; rejects on a stream key that is not one. */
export async function joinedRoom(joined: JoinedMessage): Promise<JoinedRoom> {
  const participants = new Map<string, RemoteParticipant>();
  for (const p of joined.participants) {
    const participant = participantOf(p);
    participants.set(participant.participantId, participant);
  }
  const streams = new Map<number, RemoteStreamState>();
  for (const s of joined.streams) {
    const state = await streamStateOf(s);
    streams.set(state.info.streamId, state);
  }
  return { participants, streams };
}

/**
 * What a session receives: the other participants, the streams they publish with the last two
 * keys of each, and the frames of those streams, opened and checked against replay.
 */
export class Receiving {
  private readonly events: Emitter<MediaSessionEvents>;
  private readonly media: SessionMedia;
  private participantsById = new Map<string, RemoteParticipant>();
  private streamsById = new Map<number, RemoteStreamState>();

  constructor(events: Emitter<MediaSessionEvents>, media: SessionMedia) {
    this.events = events;
    this.media = media;
  }

  participants(): RemoteParticipant[] {
    return [...this.participantsById.values()];
  }

  streams(): RemoteStream[] {
    return [...this.streamsById.values()].map((s) => s.info);
  }

  /** Takes the room of a new connection; returns the room as it was before. */
  replace(room: JoinedRoom): JoinedRoom {
    const previous = { participants: this.participantsById, streams: this.streamsById };
    this.participantsById = room.participants;
    this.streamsById = room.streams;
    return previous;
  }

  /** After a reconnection: the events of what changed in the room while the session was away. */
  announceChanges(previous: JoinedRoom): void {
    const participants = this.participantsById;
    const streams = this.streamsById;
    for (const [id, old] of previous.streams) {
      if (!sameStream(streams.get(id)?.info, old.info)) this.events.emit('streamRemoved', old.info);
    }
    for (const [id, p] of previous.participants) if (!participants.has(id)) this.events.emit('participantLeft', p);
    for (const [id, p] of participants) if (!previous.participants.has(id)) this.events.emit('participantJoined', p);
    for (const [id, s] of streams) {
      if (!sameStream(previous.streams.get(id)?.info, s.info)) this.events.emit('streamAdded', s.info);
    }
  }

  /** Hands the keys of the streams received now to the WebRTC part. */
  keyMedia(): void {
    for (const state of this.streamsById.values()) if (state.current) this.media.remoteKey(state.info, state.current.epoch, state.current.key);
  }

  participantJoined(info: ParticipantInfo): void {
    const participant = participantOf(info);
    this.participantsById.set(participant.participantId, participant);
    this.events.emit('participantJoined', participant);
  }

  /** The customer's server set a participant's metadata or attributes; the participant as it is now, if it is known. */
  participantMetadata(participantId: string, metadata: string, attributes: Readonly<Record<string, string>>): RemoteParticipant | undefined {
    const known = this.participantsById.get(participantId);
    if (!known) return undefined;
    const participant = { ...known, metadata, attributes: { ...attributes } };
    this.participantsById.set(participantId, participant);
    return participant;
  }

  participantLeft(participantId: string): void {
    const participant = this.participantsById.get(participantId);
    if (!participant) return;
    this.participantsById.delete(participant.participantId);
    this.events.emit('participantLeft', participant);
  }

  async streamAdded(info: StreamInfo): Promise<void> {
    const state = await streamStateOf(info);
    this.streamsById.set(state.info.streamId, state);
    this.events.emit('streamAdded', state.info);
    if (state.current) this.media.remoteKey(state.info, state.current.epoch, state.current.key);
  }

  streamRemoved(streamId: number): void {
    const state = this.streamsById.get(streamId);
    if (!state) return;
    this.media.remoteGone(streamId);
    this.streamsById.delete(streamId);
    this.events.emit('streamRemoved', state.info);
  }

  /** `stream_key` of another participant's stream: reception starts, or goes on under the new key. */
  rekeyed(streamId: number, epoch: number, key: SecretKey): void {
    const state = this.streamsById.get(streamId);
    if (!state) return;
    const wasSubscribed = state.current !== undefined;
    state.previous = state.current;
    state.current = { epoch, key, window: new ReplayWindow(REPLAY_WINDOW) };
    if (!wasSubscribed) this.updateStream(state, true);
    this.media.remoteKey(this.streamsById.get(streamId)?.info ?? state.info, epoch, key);
  }

  /** `stream_unsubscribed`: the grant no longer lets this session receive the stream. */
  unsubscribed(streamId: number): void {
    const state = this.streamsById.get(streamId);
    if (!state) return;
    state.current = undefined;
    state.previous = undefined;
    this.media.remoteGone(streamId);
    this.updateStream(state, false);
  }

  private updateStream(state: RemoteStreamState, subscribed: boolean): void {
    const info = { ...state.info, subscribed };
    this.streamsById.set(info.streamId, { ...state, info });
    this.events.emit('streamUpdated', info);
  }

  async onFrame(header: FrameHeader, message: Uint8Array): Promise<void> {
    const state = this.streamsById.get(header.streamId);
    if (!state || KIND_CODE[state.info.kind] !== header.kind) return;
    const generation = state.current?.epoch === header.epoch ? state.current
      : state.previous?.epoch === header.epoch ? state.previous : undefined;
    // replayed, too old, or under a key this session does not hold: dropped
    if (!generation || !generation.window.check(header.seq)) return;
    const payload = await open(generation.key, NONCE_LABEL.streamFrame, message);
    if (!payload || !generation.window.check(header.seq)) return;
    generation.window.commit(header.seq);
    const frame: ReceivedFrame = {
      streamId: header.streamId,
      kind: state.info.kind,
      participantId: state.info.participantId,
      userId: state.info.userId,
      sequence: header.seq,
      payload,
    };
    this.events.emit('frame', frame);
  }
}

function sameStream(a: RemoteStream | undefined, b: RemoteStream): boolean {
  return a !== undefined && a.participantId === b.participantId && a.kind === b.kind && a.subscribed === b.subscribed;
}

function participantOf(p: ParticipantInfo): RemoteParticipant {
  return { participantId: p.participant_id, userId: p.user_id, role: p.role, metadata: p.metadata ?? '', attributes: { ...p.attributes } };
}

async function streamStateOf(s: StreamInfo): Promise<RemoteStreamState> {
  const info: RemoteStream = { streamId: s.stream_id, kind: s.kind, participantId: s.participant_id, userId: s.user_id, subscribed: s.subscribed };
  const current = s.subscribed ? { epoch: s.epoch, key: await importStreamKey(s.key), window: new ReplayWindow(REPLAY_WINDOW) } : undefined;
  return { info, current, previous: undefined };
}
