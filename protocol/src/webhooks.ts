/**
 * The webhook contract (docs/reference/webhooks.md): the headers of a delivery, the signature
 * header's format, the event types and the shapes of their bodies. The HMAC itself is computed by
 * each side with the crypto it has.
 */

/** Header names of a delivery (docs/reference/webhooks.md, "Headers and signature"). */
export const WEBHOOK_HEADERS = {
  /** The event id, as in the body. */
  id: 'rtc-webhook-id',
  /** The time of this attempt, in whole seconds since the Unix epoch. */
  timestamp: 'rtc-webhook-timestamp',
  /** `v1=<hex>`, or during a secret's grace period `v1=<hex> v1=<hex>`. */
  signature: 'rtc-webhook-signature',
} as const;

/** The `user-agent` of every delivery. */
export const WEBHOOK_USER_AGENT = 'rtc-webhooks/1';

/** The signature scheme version: `rtc-webhook-signature: v1=<hex>`. */
export const WEBHOOK_SIGNATURE_VERSION = 'v1';

/** How far a receiver lets `rtc-webhook-timestamp` be from its clock, either way, by default: older deliveries are replays. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

/** Every event type, in the order docs/reference/webhooks.md lists them under "Events". */
export const WEBHOOK_EVENT_TYPES = [
  'participant.joined', 'participant.left', 'track.published', 'track.unpublished', 'room.started', 'room.finished', 'token.revoked',
  'credential.rotated', 'credential.revoked', 'project.archived', 'webhook.test',
] as const;

/**
 * What the HMAC-SHA256 of a delivery covers: `<timestamp>.` followed by the raw body, exactly as
 * sent. This is the part before the body.
 */
export function webhookSignedPrefix(timestampSec: number): string {
  return `${timestampSec}.`;
}

/** The `rtc-webhook-signature` value: `v1=<hex>` for each signature (lowercase hex), space-separated. */
export function formatWebhookSignatures(hexSignatures: readonly string[]): string {
  return hexSignatures.map((hex) => `${WEBHOOK_SIGNATURE_VERSION}=${hex}`).join(' ');
}

/** The hex signatures of the current scheme in an `rtc-webhook-signature` value; other versions are skipped. */
export function parseWebhookSignatures(header: string): string[] {
  const prefix = `${WEBHOOK_SIGNATURE_VERSION}=`;
  return header.split(' ').filter((s) => s.startsWith(prefix)).map((s) => s.slice(prefix.length));
}

/** An `rtc-webhook-timestamp` value as seconds, or undefined when it is not a whole number of seconds. */
export function parseWebhookTimestamp(text: string): number | undefined {
  return /^\d{1,12}$/.test(text) ? Number(text) : undefined;
}

/** A media room's event: the room, and the media node that hosts it (null on a single node). */
export interface RoomEventData {
  readonly room_id: string;
  readonly media_node: string | null;
  /** Participants in the room on that media node once the event happened. */
  readonly num_participants: number;
  readonly [key: string]: unknown;
}

/**
 * Why a participant left its media room (docs/reference/webhooks.md, "Why a participant left"): a
 * closed list; `replaced` is a newer session of the same user in the same room taking over.
 */
export const PARTICIPANT_LEFT_REASONS = [
  'left', 'removed', 'room_ended', 'revoked', 'expired', 'replaced', 'timeout', 'disconnected',
  'going_away', 'slow_consumer', 'protocol_error', 'rate_limited',
] as const;

export type ParticipantLeftReason = (typeof PARTICIPANT_LEFT_REASONS)[number];

/** A participant's event: the room's fields and who joined or left. */
export interface ParticipantEventData extends RoomEventData {
  readonly participant_id: string;
  readonly user_id: string;
  readonly role: string;
}

/** `participant.left`: the participant's fields and why it left. */
export interface ParticipantLeftData extends ParticipantEventData {
  readonly reason: ParticipantLeftReason;
}

/** A published stream's event: who publishes it in which room, and what it is. */
export interface TrackEventData extends RoomEventData {
  readonly participant_id: string;
  readonly user_id: string;
  readonly stream_id: number;
  readonly kind: string;
  readonly source: string;
}

/** The data of each event type (docs/reference/webhooks.md, "Events"). */
export interface WebhookEventData {
  'participant.joined': ParticipantEventData;
  'participant.left': ParticipantLeftData;
  'track.published': TrackEventData;
  'track.unpublished': TrackEventData;
  'room.started': RoomEventData;
  'room.finished': RoomEventData;
  'token.revoked': { readonly grant_id: string; readonly expires_at: number };
  'credential.rotated': { readonly app_id: string };
  'credential.revoked': { readonly app_id: string };
  'project.archived': Readonly<Record<string, never>>;
  'webhook.test': { readonly webhook_id: string };
}

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** The JSON body of a delivery, discriminated by `type`. */
export type WebhookEvent = {
  [T in WebhookEventType]: {
    /** `evt_…`: the same on every retry of the event; de-duplicate on it. */
    readonly id: string;
    readonly type: T;
    readonly project_id: string;
    /** Seconds since the Unix epoch. */
    readonly occurred_at: number;
    readonly data: WebhookEventData[T];
  }
}[WebhookEventType];
