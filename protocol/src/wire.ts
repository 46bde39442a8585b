/** Wire shapes of the token API, with its field names verbatim (docs/reference/token-api.md, "Request fields" and "Response"). */
import type { MediaKind, StreamSource } from './media-limits.ts';

export const ROLES = ['host', 'cohost', 'speaker', 'participant', 'audience'] as const;
export type Role = (typeof ROLES)[number];

/** The role and streams a token grants, as its response, the room service API and the media protocol state them. */
export interface GrantedPermissions {
  readonly role: Role;
  readonly publish_streams: readonly number[];
  readonly subscribe_streams: readonly number[];
  readonly subscribe_room: boolean;
}

/** Body of `POST /v1/rtc/tokens`. */
export interface TokenRequest {
  readonly room_id: string;
  readonly user_id: string;
  readonly role: Role;
  readonly publish_streams?: readonly number[];
  readonly subscribe_streams?: readonly number[];
  readonly subscribe_room?: boolean;
  readonly ttl_seconds?: number;
  readonly turn?: boolean;
  readonly signaling?: boolean;
}

/** The `media` object of a token response. */
export interface MediaCredentials {
  /** Compact JWS signed by the platform; not secret by itself. */
  readonly grant: string;
  /** Secret media key (base64url); never sent to the media server. */
  readonly key: string;
  readonly sfu_host: string;
  readonly sfu_port: number;
  readonly encryption: 'aes-256-gcm';
  /** Kept on the customer server to cut the user off early. */
  readonly revocation_handle: string;
}

export interface TurnCredentials {
  readonly username: string;
  readonly credential: string;
  readonly uris: readonly string[];
}

export interface SignalingCredentials {
  readonly token: string;
  readonly url: string;
}

/** Body of a successful `POST /v1/rtc/tokens`. */
export interface TokenResponse extends GrantedPermissions {
  readonly project_id: string;
  readonly app_id: string;
  readonly room_id: string;
  readonly user_id: string;
  readonly issued_at: number;
  readonly expires_at: number;
  readonly media: MediaCredentials;
  readonly turn?: TurnCredentials;
  readonly signaling?: SignalingCredentials;
}

/** Body of `POST /v1/rtc/tokens/revoke`. */
export interface RevocationRequest {
  readonly revocation_handle: string;
}

/** Claims of a media grant (docs/reference/token-api.md, "Media grant and media key"). */
export interface GrantClaims {
  readonly iss: string;
  readonly aud: 'rtc-media' | 'rtc-signaling';
  readonly jti: string;
  readonly prj: string;
  readonly app: string;
  readonly room: string;
  readonly sub: string;
  readonly role: Role;
  readonly pub: readonly number[];
  readonly subs: readonly number[];
  readonly sub_room: boolean;
  readonly iat: number;
  readonly exp: number;
  readonly cnf: { readonly kid: string };
}

/** A participant joined on a media node, as the room service API shows it (docs/reference/room-api.md). */
export interface RtcParticipant extends GrantedPermissions {
  /** `pa_…`, given by the media server at join: name it to remove or update the participant. */
  readonly participant_id: string;
  readonly user_id: string;
  /** Seconds since the Unix epoch. */
  readonly joined_at: number;
  /** Set by the customer's server (`PATCH` of the participant); '' when none. */
  readonly metadata: string;
  /** Set by the customer's server, key by key; {} when none. */
  readonly attributes: Readonly<Record<string, string>>;
  /** The streams the participant publishes now, in the order it published them. */
  readonly streams: readonly RtcPublishedStream[];
  /** How the participant's media flows, as its media node measured it at its last heartbeat; null until then. */
  readonly quality: RtcParticipantQuality | null;
  /** `host:port` of the media node the participant is joined on: a room may span several. */
  readonly media_node: string;
}

/**
 * A live participant's media quality, as its media node measured it over its last heartbeat period
 * (docs/reference/room-api.md, "Quality"): rounded, so that it changes only when the figures do.
 */
export interface RtcParticipantQuality {
  /** Bit/s of media payload received from the participant. */
  readonly bitrate_in: number;
  /** Bit/s of media payload sent to the participant. */
  readonly bitrate_out: number;
  /** Fraction (0..1) of the RTP packets it sends that the media node did not receive; null without WebRTC publishing. */
  readonly packet_loss_in: number | null;
  /** Fraction (0..1) of what the media node sends it that it reports lost (worst stream); null without WebRTC receiving. */
  readonly packet_loss_out: number | null;
  /** Round trip between the media node and it, ms, from its receiver reports; null until measured. */
  readonly rtt_ms: number | null;
  /** The simulcast layer (rid) it receives now of each simulcast video it receives, by stream id. */
  readonly layers: Readonly<Record<string, string>>;
  /** Seconds since the Unix epoch: when the media node measured it. */
  readonly updated_at: number;
}

/** A stream a live participant publishes (docs/reference/room-api.md, "Published streams"). */
export interface RtcPublishedStream {
  readonly stream_id: number;
  readonly kind: MediaKind;
  /** What the publisher said the stream carries; `unknown` when it did not say. */
  readonly source: StreamSource;
  /** Muted by the customer's server: the media node forwards none of its media. */
  readonly muted: boolean;
  /** Simulcast layers the media node receives of a WebRTC video stream, smallest first; empty otherwise. */
  readonly layers: readonly RtcStreamLayer[];
}

/** One simulcast layer of a published WebRTC video, as the media node last measured it; null while unknown. */
export interface RtcStreamLayer {
  /** The RTP stream id of the layer in the publisher's offer; null for a stream sent without simulcast. */
  readonly rid: string | null;
  readonly width: number | null;
  readonly height: number | null;
  /** Bits per second received lately. */
  readonly bitrate: number | null;
}

/** Body of `POST /v1/rtc/rooms/{room_id}/participants/{participant_id}/streams/{stream_id}/mute`. */
export interface StreamMuteRequest {
  readonly muted: boolean;
}

/**
 * A live room: at least one participant is joined, or the room was created or configured through the
 * room service API and has not been empty for longer than its `empty_timeout`.
 */
export interface RtcRoom {
  readonly room_id: string;
  /** `host:port` of the media node the room started on (of those holding it now); null while nobody is joined. */
  readonly media_node: string | null;
  /** `host:port` of every media node holding the room's participants now, the one it started on first; empty while nobody is joined. */
  readonly media_nodes: readonly string[];
  /** When the room opened on its media node, or, while nobody is joined, when its settings were first stored (seconds since the Unix epoch). */
  readonly started_at: number;
  /** Set by the customer's server; '' when none. */
  readonly metadata: string;
  /** The most participants the room admits at once; 0: the media node's own bound only. */
  readonly max_participants: number;
  /** Seconds the room is kept once empty (or once created, until somebody joins) before it finishes. */
  readonly empty_timeout: number;
  /** Oldest join first. */
  readonly participants: readonly RtcParticipant[];
}

/** Body of `POST /v1/rtc/rooms`: a room created ahead of time, with its settings. */
export interface RoomCreateRequest {
  readonly room_id: string;
  readonly metadata?: string | undefined;
  readonly max_participants?: number | undefined;
  readonly empty_timeout?: number | undefined;
}

/** Body of `PATCH /v1/rtc/rooms/{room_id}`: fields left out keep their value. */
export interface RoomUpdate {
  readonly metadata?: string | undefined;
  readonly max_participants?: number | undefined;
  readonly empty_timeout?: number | undefined;
}

/**
 * Body of `POST /v1/rtc/rooms/{room_id}/data`: `data` is standard base64; with neither destination
 * list, every participant of the room receives it.
 */
export interface DataMessageRequest {
  readonly data: string;
  readonly topic?: string | undefined;
  readonly destination_participant_ids?: readonly string[] | undefined;
  readonly destination_user_ids?: readonly string[] | undefined;
  readonly reliable?: boolean | undefined;
}

/** Answer of `POST /v1/rtc/rooms/{room_id}/data`. */
export interface DataMessageSent {
  readonly sent: true;
  /** The live participants the message was addressed to, as presence listed them when it was sent. */
  readonly recipients: number;
}

/**
 * Body of `PATCH /v1/rtc/rooms/{room_id}/participants/{participant_id}`: new permissions of a live
 * participant; fields left out keep their value, and `subscribe_streams` replaces `subscribe_room`.
 */
export interface ParticipantPermissions {
  readonly publish_streams?: readonly number[] | undefined;
  readonly subscribe_streams?: readonly number[] | undefined;
  readonly subscribe_room?: boolean | undefined;
}

/**
 * The same body's metadata fields: `metadata` replaces the participant's; `attributes` merge into
 * its attributes, a key whose value is '' or null being deleted.
 */
export interface ParticipantUpdate extends ParticipantPermissions {
  readonly metadata?: string | undefined;
  readonly attributes?: Readonly<Record<string, string | null>> | undefined;
}
