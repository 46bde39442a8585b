/**
 * The messages of a relay link's control channel (docs/protocol/relay.md): the handshake in text
 * frames, then control messages sealed in binary frames. Parsing is strict: anything else is a
 * protocol error, and nothing a peer sends is echoed back.
 */
import { MAX_CLIENT_MESSAGE_BYTES } from '@rtc/protocol';
import { fromB64u } from '../../core/encoding.ts';

export const RELAY_PATH = '/v1/media/relay';
export const RELAY_PROTOCOL_VERSION = 1;
export const NONCE_BYTES = 32;
export const PROOF_BYTES = 32;
export const STREAM_KEY_BYTES = 32;
/** Simulcast layers a subscription may name (0 the lowest); audio uses layer 0. */
export const MAX_LAYER = 7;
/** NACK misses of one message, at most. */
export const MAX_NACK_SEQUENCES = 512;
const MAX_ID_LENGTH = 256;
/** Largest media frame a `frame` message carries: a client's largest message. */
export const MAX_RELAYED_FRAME_BYTES = MAX_CLIENT_MESSAGE_BYTES;
/** Largest control or handshake message, in bytes: a `frame` message of the largest frame, sealed. */
export const MAX_CONTROL_BYTES = 96 * 1024;

/** WebSocket close codes of a relay link (docs/protocol/relay.md, "Close codes"). */
export const RelayClose = {
  /** A proof did not verify, or the hello named a key this node does not hold. */
  unauthorized: 4001,
  /** A message out of place, malformed, or a control frame that did not open. */
  protocol_error: 4004,
  /** The handshake did not finish in time. */
  handshake_timeout: 4008,
  /** No answer to keepalives. */
  timeout: 4009,
} as const;

/** A stream of a room, as nodes name it between them. */
export interface RelayStreamRef {
  readonly project_id: string;
  readonly room_id: string;
  readonly stream_id: number;
}

export interface RelayChallenge { readonly type: 'relay_challenge'; readonly version: number; readonly node: string; readonly nonce: string }
export interface RelayHello {
  readonly type: 'relay_hello'; readonly version: number; readonly node: string; readonly kid: string;
  readonly nonce: string; readonly link: number; readonly proof: string;
}
export interface RelayWelcome { readonly type: 'relay_welcome'; readonly link: number; readonly udp_port: number; readonly proof: string }

/** Control messages after the handshake, in either direction. */
export type RelayControl =
  | { readonly type: 'subscribe'; readonly track: number; readonly stream: RelayStreamRef; readonly layers: readonly number[] }
  | { readonly type: 'unsubscribe'; readonly track: number }
  | { readonly type: 'key_frame'; readonly track: number; readonly layer: number }
  | { readonly type: 'nack_miss'; readonly track: number; readonly layer: number; readonly seqs: readonly number[] }
  /** A subscriber of the track on the sending node lost access: the origin rotates the stream's key. */
  | { readonly type: 'rotate_key'; readonly track: number }
  | { readonly type: 'stream_key'; readonly track: number; readonly epoch: number; readonly key: string }
  | { readonly type: 'stream_end'; readonly track: number }
  /** A sealed media frame of a WebSocket stream (`data`), as its publisher sent it (b64u). */
  | { readonly type: 'frame'; readonly track: number; readonly frame: string };

type Fields = Record<string, unknown>;

function object(text: string): Fields | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Fields : undefined;
  } catch {
    return undefined;
  }
}

const exactly = (o: Fields, keys: readonly string[]): boolean => {
  const own = Object.keys(o);
  return own.length === keys.length && keys.every((k) => own.includes(k));
};
const isUint = (v: unknown, max: number, min = 0): v is number => Number.isInteger(v) && (v as number) >= min && (v as number) <= max;
const isId = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= MAX_ID_LENGTH;
const isBytes = (v: unknown, length: number): v is string => typeof v === 'string' && fromB64u(v)?.length === length;
/**
 * Base64url text of a frame: checked by its characters only, so a frame is decoded once, where it is
 * taken (a non-canonical one is dropped there).
 */
const B64U_TEXT = /^[A-Za-z0-9_-]+$/;
const isTrack = (v: unknown): v is number => isUint(v, 0xffff_ffff, 1);
const isLayer = (v: unknown): v is number => isUint(v, MAX_LAYER);

export function parseChallenge(text: string): RelayChallenge | undefined {
  const o = object(text);
  if (!o || !exactly(o, ['type', 'version', 'node', 'nonce']) || o['type'] !== 'relay_challenge') return undefined;
  return isUint(o['version'], 0xffff) && isId(o['node']) && isBytes(o['nonce'], NONCE_BYTES) ? o as unknown as RelayChallenge : undefined;
}

export function parseHello(text: string): RelayHello | undefined {
  const o = object(text);
  if (!o || !exactly(o, ['type', 'version', 'node', 'kid', 'nonce', 'link', 'proof']) || o['type'] !== 'relay_hello') return undefined;
  const ok = isUint(o['version'], 0xffff) && isId(o['node']) && isId(o['kid']) && isBytes(o['nonce'], NONCE_BYTES) &&
    isTrack(o['link']) && isBytes(o['proof'], PROOF_BYTES);
  return ok ? o as unknown as RelayHello : undefined;
}

export function parseWelcome(text: string): RelayWelcome | undefined {
  const o = object(text);
  if (!o || !exactly(o, ['type', 'link', 'udp_port', 'proof']) || o['type'] !== 'relay_welcome') return undefined;
  return isTrack(o['link']) && isUint(o['udp_port'], 65535, 1) && isBytes(o['proof'], PROOF_BYTES) ? o as unknown as RelayWelcome : undefined;
}

function isStreamRef(v: unknown): v is RelayStreamRef {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const o = v as Fields;
  return exactly(o, ['project_id', 'room_id', 'stream_id']) && isId(o['project_id']) && isId(o['room_id']) && isTrack(o['stream_id']);
}

/** A control message, or undefined when it is not exactly one (unknown type or field, value out of range). */
export function parseControl(text: string): RelayControl | undefined {
  const o = object(text);
  if (!o) return undefined;
  const track = isTrack(o['track']);
  switch (o['type']) {
    case 'subscribe': {
      const layers = o['layers'];
      const ok = exactly(o, ['type', 'track', 'stream', 'layers']) && track && isStreamRef(o['stream']) && Array.isArray(layers) &&
        layers.length <= MAX_LAYER + 1 && layers.every(isLayer) && new Set(layers).size === layers.length;
      return ok ? o as unknown as RelayControl : undefined;
    }
    case 'unsubscribe':
    case 'rotate_key':
    case 'stream_end':
      return exactly(o, ['type', 'track']) && track ? o as unknown as RelayControl : undefined;
    case 'key_frame':
      return exactly(o, ['type', 'track', 'layer']) && track && isLayer(o['layer']) ? o as unknown as RelayControl : undefined;
    case 'nack_miss': {
      const seqs = o['seqs'];
      const ok = exactly(o, ['type', 'track', 'layer', 'seqs']) && track && isLayer(o['layer']) && Array.isArray(seqs) &&
        seqs.length > 0 && seqs.length <= MAX_NACK_SEQUENCES && seqs.every((s) => isUint(s, 0xffff));
      return ok ? o as unknown as RelayControl : undefined;
    }
    case 'frame': {
      const frame = o['frame'];
      const ok = exactly(o, ['type', 'track', 'frame']) && track && typeof frame === 'string'
        && frame.length > 1 && frame.length <= Math.ceil(MAX_RELAYED_FRAME_BYTES * 4 / 3) && B64U_TEXT.test(frame) && frame.length % 4 !== 1;
      return ok ? o as unknown as RelayControl : undefined;
    }
    case 'stream_key':
      return exactly(o, ['type', 'track', 'epoch', 'key']) && track && isUint(o['epoch'], 0xffff, 1) && isBytes(o['key'], STREAM_KEY_BYTES)
        ? o as unknown as RelayControl : undefined;
    default:
      return undefined;
  }
}

/** The message as sent; a TypeError when the peer would refuse it (a bug of this node, never sent). */
export function serializeControl(message: RelayControl): string {
  const text = JSON.stringify(message);
  if (!parseControl(text)) throw new TypeError(`not a valid relay ${message.type} message (docs/protocol/relay.md, "Control messages")`);
  return text;
}
