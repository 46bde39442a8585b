/**
 * What the signaling service answers and streams (docs/protocol/signaling.md): the server builds
 * these shapes and the app SDK reads them.
 */
import type { Role } from './wire.ts';

/** A participant of the room: one user, present while at least one of their sessions is joined. */
export interface SignalingParticipant {
  readonly user_id: string;
  readonly role: Role;
  /** When the user joined, in milliseconds since the Unix epoch (server clock). */
  readonly joined_at_ms: number;
}

/** Answer of `POST /v1/signaling/join`. */
export interface SignalingJoinResult {
  readonly room_id: string;
  readonly user_id: string;
  readonly role: Role;
  readonly participants: readonly SignalingParticipant[];
  /** Position in the room's event log right after the join; the event stream starts there. */
  readonly last_event_id: string;
}

/** Why a participant left: an explicit leave, a revoked or expired token, or no event stream for 30 s. */
export const SIGNALING_LEAVE_REASONS = ['left', 'revoked', 'expired', 'timeout'] as const;
export type SignalingLeaveReason = (typeof SIGNALING_LEAVE_REASONS)[number];

/** An event of the room, as the event stream delivers it: the SSE `event` as `type`, its `id`, and its data's fields. */
export type SignalingEvent =
  | { readonly type: 'snapshot'; readonly id: string; readonly room_id: string;
    readonly participants: readonly SignalingParticipant[]; readonly reset: boolean }
  | { readonly type: 'join'; readonly id: string; readonly user_id: string; readonly role: Role; readonly at_ms: number }
  | { readonly type: 'leave'; readonly id: string; readonly user_id: string; readonly reason: SignalingLeaveReason; readonly at_ms: number }
  | { readonly type: 'message'; readonly id: string; readonly from: string; readonly to?: string; readonly data: unknown; readonly at_ms: number }
  /** The stream is open and live: `replayed` events missed since the last one came first. */
  | { readonly type: 'ready'; readonly room_id: string; readonly replayed: number; readonly at_ms: number }
  /** The token was revoked: the session is over and the stream ends after this event. */
  | { readonly type: 'revoked'; readonly at_ms: number }
  /** The token expired: the stream ends after this event. */
  | { readonly type: 'expired'; readonly at_ms: number };

export type SignalingEventType = SignalingEvent['type'];

/** The `data` line of an event: its fields without `type` (the SSE `event`) and `id` (the SSE `id`). */
export type SignalingEventData<T extends SignalingEventType> = Omit<Extract<SignalingEvent, { readonly type: T }>, 'type' | 'id'>;

const EVENT_TYPES: ReadonlySet<string> = new Set<SignalingEventType>(['snapshot', 'join', 'leave', 'message', 'ready', 'revoked', 'expired']);
// events outside the room's log carry no id
const UNLOGGED: ReadonlySet<string> = new Set<SignalingEventType>(['ready', 'revoked', 'expired']);

/** The JSON `data` line of an event of type `type`. */
export function encodeSignalingEventData<T extends SignalingEventType>(_type: T, data: SignalingEventData<T>): string {
  return JSON.stringify(data);
}

/**
 * An event from one Server-Sent Event frame; undefined for an event type this protocol does not
 * know, data that is not a JSON object, or a logged event without an id.
 */
export function parseSignalingEvent(frame: { readonly event: string; readonly id: string | undefined; readonly data: string }): SignalingEvent | undefined {
  if (!EVENT_TYPES.has(frame.event)) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(frame.data);
  } catch {
    return undefined;
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined;
  const logged = !UNLOGGED.has(frame.event);
  if (logged && frame.id === undefined) return undefined;
  return { ...data, type: frame.event, ...(logged && { id: frame.id }) } as SignalingEvent;
}
