import type { MediaKind, Role, ServerControl } from '@rtc/protocol';
import type { ForwardedRtp, StreamLayers } from '../rtp/layers.ts';
import type { Stream } from './stream.ts';

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
  /** Where the RTP it publishes and receives is counted (quality figures and usage). */
  readonly account: RtpAccount;
  /** Where key frames of the streams it publishes over WebRTC are asked for; undefined without a peer connection. */
  readonly keyFrames: KeyFrameSource | undefined;
  canSubscribe(streamId: number): boolean;
  sendControl(message: ServerControl): void;
  pushMedia(kind: number, message: Buffer): void;
  /** The down track its peer connection negotiated for a stream it receives, if any. */
  downTrack(streamId: number): DownTrack | undefined;
}

/** The publisher's end of a stream published over WebRTC: it asks the client for key frames. */
export interface KeyFrameSource {
  /** A key frame of one simulcast layer of a stream (-1: every layer). */
  requestKeyFrame(streamId: number, layer: number): void;
}

/** Counts a member's RTP traffic, as its publisher or as a subscriber. */
export interface RtpAccount {
  /** A packet of a stream it publishes reached the node (after the stream's layers counted it). */
  rtpIn(streamId: number, kind: MediaKind, packet: ForwardedRtp, layers: StreamLayers | undefined, nowMs: number): void;
  /** A packet of a stream it receives left for its client. */
  rtpOut(streamId: number, kind: MediaKind, packet: ForwardedRtp, layers: StreamLayers | undefined, nowMs: number): void;
}

/**
 * A subscriber's receiving end of one stream over WebRTC (media/webrtc/down-track.ts): the stream
 * feeds it each packet, and it asks the stream for key frames while attached.
 */
export interface DownTrack {
  readonly kind: MediaKind;
  /** The stream it is attached to: set and cleared by that stream. */
  stream: Stream | undefined;
  /** Sends a packet on, if its allocation lets it through; true if it did. */
  forward(packet: ForwardedRtp): boolean;
  /** The stream resumes after a stop at its source: what comes next is a new source. */
  restart(): void;
  /** The loss its client last reported (fraction, 0 when unknown). */
  readonly reportedLoss: number;
  /** The simulcast layer its allocation targets (-1: paused); a relay asks its origin for what these need. */
  readonly target?: number;
}
