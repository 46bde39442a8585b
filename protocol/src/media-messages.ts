/**
 * Messages of the media protocol (docs/protocol/media.md, "Handshake" and "Control messages"), with
 * their field names as on the wire, and the parsers each end runs on what it receives. A parser
 * returns the typed message, or undefined for anything the document does not allow: the receiver
 * closes with protocol_error.
 */
import { MAX_STREAM_ID } from './limits.ts';
import {
  MAX_GRANT_CHARS, MAX_REQUEST_ID, MAX_RTC_TRACKS, MAX_SDP_CHARS, MAX_SIMULCAST_LAYERS, MAX_VIDEO_DIMENSION, MEDIA_KINDS, STREAM_SOURCES,
  type MediaKind, type StreamSource,
} from './media-limits.ts';
import { ROLES, type GrantedPermissions, type Role } from './wire.ts';

/** `challenge`: the server's first message, as text. */
export interface ChallengeMessage {
  readonly type: 'challenge';
  readonly version: number;
  /** b64u, 32 bytes. */
  readonly nonce: string;
}

/** `join`: the client's answer to the challenge, as text. Nonce and proof are b64u, 32 bytes. */
export interface JoinMessage {
  readonly type: 'join';
  readonly grant: string;
  readonly nonce: string;
  readonly proof: string;
}

/** Control messages a joined client sends, sealed under its client-to-server key. */
export type ClientControl =
  /** `source`: what the stream carries (optional; the room service API shows `unknown` without it). */
  | { readonly type: 'publish'; readonly id: number; readonly stream_id: number; readonly kind: MediaKind; readonly source?: StreamSource }
  | { readonly type: 'unpublish'; readonly id: number; readonly stream_id: number }
  | { readonly type: 'renew'; readonly id: number; readonly grant: string; readonly nonce: string; readonly proof: string }
  | { readonly type: 'ping'; readonly id: number }
  | { readonly type: 'leave' }
  /**
   * An SDP offer for the session's WebRTC peer connection (docs/protocol/media.md, "WebRTC media");
   * `new_connection`: the first offer of a new client peer connection that replaces the previous one.
   */
  | { readonly type: 'rtc_offer'; readonly id: number; readonly sdp: string; readonly tracks: readonly RtcTrack[]; readonly new_connection?: boolean }
  /**
   * How much of a received video stream the client wants (docs/protocol/media.md, "Layers"): the server forwards
   * the largest simulcast layer within these bounds that fits the client's downlink; `null` is no bound, a size of
   * 0 asks for no video at all (a hidden tile).
   */
  | RtcVideoPreference;

/** `rtc_video`: a subscriber's bounds on the layer it receives of one video stream. */
export interface RtcVideoPreference {
  readonly type: 'rtc_video';
  readonly stream_id: number;
  readonly max_width: number | null;
  readonly max_height: number | null;
  readonly max_layer: number | null;
}

/** One audio or video m-line of an `rtc_offer`: which stream it sends or receives. */
export interface RtcTrack {
  readonly mid: string;
  readonly stream_id: number;
  /** `send`: the client publishes the stream on this m-line; `recv`: it receives it. */
  readonly direction: RtcTrackDirection;
}

export type RtcTrackDirection = 'send' | 'recv';

/** A client control message before the connection gives it its request id. */
export type ClientRequest = ClientControl extends infer C ? (C extends { readonly id: number } ? Omit<C, 'id'> : C) : never;

/**
 * Participant object. `metadata` and `attributes` are set by the customer's server through the room
 * service API (docs/reference/room-api.md, "Metadata and attributes"); a server that predates them
 * leaves them out, and a client then reads '' and {}.
 */
export interface ParticipantInfo {
  readonly participant_id: string;
  readonly user_id: string;
  readonly role: Role;
  readonly metadata?: string;
  readonly attributes?: Readonly<Record<string, string>>;
}

/** Stream object: the key only for a member that receives the stream. */
export type StreamInfo = {
  readonly stream_id: number;
  readonly kind: MediaKind;
  readonly participant_id: string;
  readonly user_id: string;
} & ({ readonly subscribed: false } | { readonly subscribed: true; readonly epoch: number; readonly key: string });

/** What a grant allows, as `joined` and `renewed` state it. */
export interface GrantFields extends GrantedPermissions {
  readonly expires_at: number;
}

/** The `limits` object of `joined`. */
export interface MediaLimits {
  readonly max_message_bytes: number;
  readonly replay_window: number;
  readonly handshake_timeout_ms: number;
  readonly idle_timeout_ms: number;
}

/** Why a renewal was refused (the `reason` of a `renew_refused` error). */
export type RenewRefusal = 'invalid_grant' | 'expired' | 'revoked' | 'bad_proof' | 'identity_mismatch' | 'stale_challenge' | 'too_many_grants';

/** `code` of an `error` reply. */
export type RequestErrorCode =
  | 'stream_not_allowed' | 'stream_in_use' | 'already_published' | 'not_published' | 'renew_refused'
  | 'rtc_invalid_offer' | 'rtc_unavailable';

/** Control messages the server sends, sealed under the server-to-client key. */
export type ServerControl =
  | ({
    readonly type: 'joined';
    readonly participant_id: string;
    readonly room_id: string;
    readonly project_id: string;
    readonly user_id: string;
    readonly server_time_ms: number;
    readonly renew_nonce: string;
    readonly participants: readonly ParticipantInfo[];
    readonly streams: readonly StreamInfo[];
    readonly limits: MediaLimits;
    /** The room's metadata as the customer's server last set it ('' when none); absent from servers that predate it. */
    readonly room_metadata?: string;
  } & GrantFields)
  | { readonly type: 'participant_joined'; readonly participant: ParticipantInfo }
  | { readonly type: 'participant_left'; readonly participant_id: string; readonly user_id: string }
  | { readonly type: 'stream_added'; readonly stream: StreamInfo }
  | { readonly type: 'stream_removed'; readonly stream_id: number; readonly participant_id: string; readonly user_id: string }
  | { readonly type: 'stream_key'; readonly stream_id: number; readonly epoch: number; readonly key: string }
  | { readonly type: 'stream_unsubscribed'; readonly stream_id: number }
  | { readonly type: 'published'; readonly id: number; readonly stream_id: number; readonly kind: MediaKind; readonly epoch: number; readonly key: string }
  | { readonly type: 'unpublished'; readonly id: number; readonly stream_id: number }
  | ({ readonly type: 'renewed'; readonly id: number; readonly renew_nonce: string } & GrantFields)
  /** The server's SDP answer to an `rtc_offer`; `refused` lists the mids it will neither send nor forward. */
  | { readonly type: 'rtc_answer'; readonly id: number; readonly sdp: string; readonly refused: readonly string[] }
  | { readonly type: 'pong'; readonly id: number; readonly server_time_ms: number }
  /**
   * The server stopped forwarding a received video stream: even its smallest layer does not fit the
   * downlink (`bandwidth`), or the node lost its relay link to the node the stream is published on (`relay`).
   */
  | { readonly type: 'stream_paused'; readonly stream_id: number; readonly reason: 'bandwidth' | 'relay' }
  /** Video of a paused stream flows again, starting with a key frame. */
  | { readonly type: 'stream_resumed'; readonly stream_id: number }
  /**
   * Which simulcast layers of a video it publishes the client should send (`active[i]` for layer i, 0
   * the smallest): no subscriber on any media node needs the others, so its encoder may rest them.
   */
  | { readonly type: 'publish_layers'; readonly stream_id: number; readonly active: readonly boolean[] }
  /** The layer the server now forwards of a received video stream: 0 is the smallest; size 0 while unknown. */
  | { readonly type: 'stream_layer'; readonly stream_id: number; readonly layer: number; readonly width: number; readonly height: number }
  /**
   * The customer's server muted or unmuted a published stream (docs/protocol/media.md, "stream_muted"): while muted
   * the server forwards none of its media. Sent to its publisher and every other member of the room.
   */
  | { readonly type: 'stream_muted'; readonly stream_id: number; readonly participant_id: string; readonly muted: boolean }
  /** The customer's server changed what this session may publish and receive (docs/protocol/media.md, "permissions"). */
  | {
    readonly type: 'permissions';
    readonly publish_streams: readonly number[];
    readonly subscribe_streams: readonly number[];
    readonly subscribe_room: boolean;
  }
  /** The customer's server set the room's metadata (docs/protocol/media.md, "room_metadata"). */
  | { readonly type: 'room_metadata'; readonly metadata: string }
  /** The customer's server set a participant's metadata or attributes: their whole new values (this session's own too). */
  | {
    readonly type: 'participant_metadata'; readonly participant_id: string; readonly user_id: string;
    readonly metadata: string; readonly attributes: Readonly<Record<string, string>>;
  }
  /** A data message from the customer's server; `data` is base64, `topic` null when none was given. */
  | { readonly type: 'server_data'; readonly data: string; readonly topic: string | null }
  | {
    readonly type: 'error';
    readonly id: number;
    readonly code: RequestErrorCode;
    readonly message: string;
    readonly reason?: RenewRefusal;
    readonly renew_nonce?: string;
  };

const CLIENT_FIELDS: Readonly<Record<string, readonly string[]>> = {
  join: ['type', 'grant', 'nonce', 'proof'],
  publish: ['type', 'id', 'stream_id', 'kind'],
  unpublish: ['type', 'id', 'stream_id'],
  renew: ['type', 'id', 'grant', 'nonce', 'proof'],
  ping: ['type', 'id'],
  leave: ['type'],
  rtc_offer: ['type', 'id', 'sdp', 'tracks'],
  rtc_video: ['type', 'stream_id', 'max_width', 'max_height', 'max_layer'],
};

/** Fields a client message may leave out. */
const OPTIONAL_CLIENT_FIELDS: Readonly<Record<string, readonly string[]>> = {
  publish: ['source'],
  rtc_offer: ['new_connection'],
};

const TRACK_FIELDS = ['mid', 'stream_id', 'direction'];
const MID = /^[A-Za-z0-9_-]{1,16}$/;

/** 32 bytes in canonical base64url: 43 characters, the last one without stray low bits. */
const B64U_32 = /^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/;

function parseObject(text: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** A JSON object whose fields are exactly those of its client message `type`. */
function parseClientObject(text: string): Record<string, unknown> | undefined {
  const record = parseObject(text);
  const type = record?.['type'];
  const fields = typeof type === 'string' && Object.hasOwn(CLIENT_FIELDS, type) ? CLIENT_FIELDS[type] : undefined;
  if (!record || !fields) return undefined;
  const optional = OPTIONAL_CLIENT_FIELDS[type as string] ?? [];
  const keys = Object.keys(record);
  return fields.every((k) => Object.hasOwn(record, k)) && keys.every((k) => fields.includes(k) || optional.includes(k)) ? record : undefined;
}

function isBytes32(value: unknown): value is string {
  return typeof value === 'string' && B64U_32.test(value);
}

function isGrantText(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_GRANT_CHARS;
}

function isRequestId(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 0 && (value as number) <= MAX_REQUEST_ID;
}

function isStreamId(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 1 && (value as number) <= MAX_STREAM_ID;
}

function isMediaKind(value: unknown): value is MediaKind {
  return (MEDIA_KINDS as readonly unknown[]).includes(value);
}

function isSource(value: unknown): value is StreamSource {
  return (STREAM_SOURCES as readonly unknown[]).includes(value);
}

/** Parses `join`; undefined for another message or a field that is missing, extra or malformed. */
export function parseJoin(text: string): JoinMessage | undefined {
  const r = parseClientObject(text);
  if (r?.['type'] !== 'join') return undefined;
  const { grant, nonce, proof } = r;
  return isGrantText(grant) && isBytes32(nonce) && isBytes32(proof) ? { type: 'join', grant, nonce, proof } : undefined;
}

/** Parses a client control message; undefined for anything section 6.1 does not allow. */
export function parseClientControl(text: string): ClientControl | undefined {
  const r = parseClientObject(text);
  if (!r) return undefined;
  const id = r['id'];
  switch (r['type']) {
    case 'publish': {
      const { stream_id, kind, source } = r;
      if (source !== undefined && !isSource(source)) return undefined;
      return isRequestId(id) && isStreamId(stream_id) && isMediaKind(kind)
        ? { type: 'publish', id, stream_id, kind, ...(source !== undefined && { source }) } : undefined;
    }
    case 'unpublish': {
      const { stream_id } = r;
      return isRequestId(id) && isStreamId(stream_id) ? { type: 'unpublish', id, stream_id } : undefined;
    }
    case 'renew': {
      const { grant, nonce, proof } = r;
      return isRequestId(id) && isGrantText(grant) && isBytes32(nonce) && isBytes32(proof)
        ? { type: 'renew', id, grant, nonce, proof } : undefined;
    }
    case 'ping':
      return isRequestId(id) ? { type: 'ping', id } : undefined;
    case 'leave':
      return { type: 'leave' };
    case 'rtc_offer': {
      const { sdp, tracks, new_connection } = r;
      const parsed = parseTracks(tracks);
      if (new_connection !== undefined && typeof new_connection !== 'boolean') return undefined;
      return isRequestId(id) && typeof sdp === 'string' && sdp.length > 0 && sdp.length <= MAX_SDP_CHARS && parsed
        ? { type: 'rtc_offer', id, sdp, tracks: parsed, ...(new_connection ? { new_connection } : {}) } : undefined;
    }
    case 'rtc_video': {
      const { stream_id, max_width, max_height, max_layer } = r;
      return isStreamId(stream_id) && isBound(max_width, MAX_VIDEO_DIMENSION) && isBound(max_height, MAX_VIDEO_DIMENSION)
        && isBound(max_layer, MAX_SIMULCAST_LAYERS - 1)
        ? { type: 'rtc_video', stream_id, max_width, max_height, max_layer } : undefined;
    }
    default:
      return undefined;
  }
}

/** An integer 0..max, or null (no bound). */
function isBound(value: unknown, max: number): value is number | null {
  return value === null || (Number.isInteger(value) && (value as number) >= 0 && (value as number) <= max);
}

/** The `tracks` of an `rtc_offer`: at most 40, mids unique, a stream id at most once per direction. */
function parseTracks(value: unknown): RtcTrack[] | undefined {
  if (!Array.isArray(value) || value.length > MAX_RTC_TRACKS) return undefined;
  const mids = new Set<string>();
  const streams = new Set<string>();
  const tracks: RtcTrack[] = [];
  for (const item of value as unknown[]) {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return undefined;
    const t = item as Record<string, unknown>;
    const keys = Object.keys(t);
    if (keys.length !== TRACK_FIELDS.length || !keys.every((k) => TRACK_FIELDS.includes(k))) return undefined;
    const { mid, stream_id, direction } = t;
    if (typeof mid !== 'string' || !MID.test(mid) || !isStreamId(stream_id) || (direction !== 'send' && direction !== 'recv')) return undefined;
    if (mids.has(mid) || streams.has(`${direction}:${stream_id}`)) return undefined;
    mids.add(mid);
    streams.add(`${direction}:${stream_id}`);
    tracks.push({ mid, stream_id, direction });
  }
  return tracks;
}

/** Parses the server's `challenge`; undefined for anything else. */
export function parseChallenge(text: string): ChallengeMessage | undefined {
  const r = parseObject(text);
  if (r?.['type'] !== 'challenge' || !Number.isSafeInteger(r['version']) || !isBytes32(r['nonce'])) return undefined;
  return { type: 'challenge', version: r['version'] as number, nonce: r['nonce'] };
}

/** What a client receives: a control message of section 6.2, or why it is not one. */
export type ServerControlParse =
  | { readonly ok: true; readonly message: ServerControl }
  | { readonly ok: false; readonly error: 'malformed' | 'unknown_type' };

const isText = (v: unknown): v is string => typeof v === 'string';
const isInteger = (v: unknown): v is number => Number.isSafeInteger(v);
const isRole = (v: unknown): v is Role => (ROLES as readonly unknown[]).includes(v);
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const isAttributes = (v: unknown): v is Record<string, string> => isRecord(v) && Object.values(v).every(isText);

function isParticipant(v: unknown): v is ParticipantInfo {
  return isRecord(v) && isText(v['participant_id']) && isText(v['user_id']) && isRole(v['role'])
    && (v['metadata'] === undefined || isText(v['metadata'])) && (v['attributes'] === undefined || isAttributes(v['attributes']));
}

/** Standard base64 (RFC 4648 section 4), padded. */
const isBase64 = (v: unknown): v is string => isText(v) && v.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(v);

function isStream(v: unknown): v is StreamInfo {
  if (!isRecord(v) || !isInteger(v['stream_id']) || !isMediaKind(v['kind']) || !isText(v['participant_id']) || !isText(v['user_id'])) {
    return false;
  }
  if (v['subscribed'] === false) return true;
  return v['subscribed'] === true && isInteger(v['epoch']) && isBytes32(v['key']);
}

function hasGrantFields(r: Record<string, unknown>): boolean {
  const ids = (v: unknown): boolean => Array.isArray(v) && v.every(isInteger);
  return isRole(r['role']) && isInteger(r['expires_at']) && ids(r['publish_streams']) && ids(r['subscribe_streams'])
    && typeof r['subscribe_room'] === 'boolean';
}

/** The checks each server message type must pass; the SDK reads only what passed them. */
const SERVER_CHECKS: Readonly<Record<ServerControl['type'], (r: Record<string, unknown>) => boolean>> = {
  joined: (r) => hasGrantFields(r) && isText(r['participant_id']) && isText(r['room_id']) && isText(r['project_id'])
    && isText(r['user_id']) && isInteger(r['server_time_ms']) && isBytes32(r['renew_nonce'])
    && Array.isArray(r['participants']) && r['participants'].every(isParticipant)
    && Array.isArray(r['streams']) && r['streams'].every(isStream) && isRecord(r['limits'])
    && (r['room_metadata'] === undefined || isText(r['room_metadata'])),
  participant_joined: (r) => isParticipant(r['participant']),
  participant_left: (r) => isText(r['participant_id']) && isText(r['user_id']),
  stream_added: (r) => isStream(r['stream']),
  stream_removed: (r) => isInteger(r['stream_id']) && isText(r['participant_id']) && isText(r['user_id']),
  stream_key: (r) => isInteger(r['stream_id']) && isInteger(r['epoch']) && isBytes32(r['key']),
  stream_unsubscribed: (r) => isInteger(r['stream_id']),
  published: (r) => isRequestId(r['id']) && isInteger(r['stream_id']) && isMediaKind(r['kind']) && isInteger(r['epoch']) && isBytes32(r['key']),
  unpublished: (r) => isRequestId(r['id']) && isInteger(r['stream_id']),
  renewed: (r) => isRequestId(r['id']) && isBytes32(r['renew_nonce']) && hasGrantFields(r),
  pong: (r) => isRequestId(r['id']) && isInteger(r['server_time_ms']),
  stream_paused: (r) => isInteger(r['stream_id']) && isText(r['reason']),
  stream_resumed: (r) => isInteger(r['stream_id']),
  publish_layers: (r) => isInteger(r['stream_id']) && Array.isArray(r['active']) && r['active'].length >= 1
    && r['active'].length <= MAX_SIMULCAST_LAYERS && r['active'].every((a) => typeof a === 'boolean'),
  stream_layer: (r) => isInteger(r['stream_id']) && isInteger(r['layer']) && isInteger(r['width']) && isInteger(r['height']),
  rtc_answer: (r) => isRequestId(r['id']) && isText(r['sdp']) && Array.isArray(r['refused']) && r['refused'].every(isText),
  stream_muted: (r) => isInteger(r['stream_id']) && isText(r['participant_id']) && typeof r['muted'] === 'boolean',
  permissions: (r) => Array.isArray(r['publish_streams']) && r['publish_streams'].every(isInteger)
    && Array.isArray(r['subscribe_streams']) && r['subscribe_streams'].every(isInteger) && typeof r['subscribe_room'] === 'boolean',
  room_metadata: (r) => isText(r['metadata']),
  participant_metadata: (r) => isText(r['participant_id']) && isText(r['user_id']) && isText(r['metadata']) && isAttributes(r['attributes']),
  server_data: (r) => isBase64(r['data']) && (r['topic'] === null || isText(r['topic'])),
  error: (r) => isRequestId(r['id']) && isText(r['code']) && isText(r['message'])
    && (r['renew_nonce'] === undefined || isBytes32(r['renew_nonce'])) && (r['reason'] === undefined || isText(r['reason'])),
};

/** Parses a control message from the server (section 6.2); a type the client does not know is `unknown_type`. */
export function parseServerControl(text: string): ServerControlParse {
  const r = parseObject(text);
  const type = r?.['type'];
  if (!r || typeof type !== 'string') return { ok: false, error: 'malformed' };
  if (!Object.hasOwn(SERVER_CHECKS, type)) return { ok: false, error: 'unknown_type' };
  return SERVER_CHECKS[type as ServerControl['type']](r) ? { ok: true, message: r as ServerControl } : { ok: false, error: 'malformed' };
}
