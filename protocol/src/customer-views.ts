/**
 * Response bodies of the customer API, the room API and the public price list as clients read them (docs/reference/api.md,
 * "Schemas"). Field names are the wire's, snake_case; times are seconds since the Unix epoch.
 */
import type { RtcRoom } from './wire.ts';
import type { ParticipantLeftReason, WebhookEventType } from './webhooks.ts';

/** A signed-in account (`Account`). */
export interface Account {
  /** `acc_` followed by 22 base64url characters. */
  readonly id: string;
  readonly email: string;
  readonly created_at: number;
}

/** A console session (`SessionTokens`): register, login and refresh answer it. */
export interface SessionTokens {
  readonly account: Account;
  /** `cs_…`: sent as `Authorization: Bearer` on the customer API. */
  readonly access_token: string;
  /** `rt_…`: single use; `POST /v1/auth/refresh` returns a new pair. */
  readonly refresh_token: string;
  readonly token_type: 'Bearer';
  /** Lifetime of `access_token` in seconds. */
  readonly expires_in: number;
}

/** A project (`Project`). */
export interface Project {
  readonly id: string;
  readonly name: string;
  readonly archived: boolean;
  readonly archived_at: number | null;
  readonly created_at: number;
  readonly updated_at: number;
}

/** `GET /v1/projects` (`ProjectList`). */
export interface ProjectList {
  readonly projects: readonly Project[];
}

/** A scope a credential may hold. */
export type CredentialScope = 'publisher' | 'subscriber';

/** A credential of a project, without its App Secret (`Credential`). */
export interface Credential {
  readonly app_id: string;
  readonly project_id: string;
  readonly name: string;
  readonly scopes: readonly CredentialScope[];
  /** IPv4/IPv6 CIDRs; empty: any address. */
  readonly ip_allowlist: readonly string[];
  readonly max_ttl_seconds: number;
  readonly status: 'active' | 'revoked';
  readonly created_at: number;
  readonly updated_at: number;
  readonly rotated_at: number | null;
  readonly revoked_at: number | null;
}

/** A credential as shown once, at creation or rotation (`CredentialWithSecret`). */
export interface CredentialWithSecret extends Credential {
  /** `sk_…`: shown only here. */
  readonly app_secret: string;
}

/** `GET /v1/projects/{id}/credentials` (`CredentialList`). */
export interface CredentialList {
  readonly credentials: readonly Credential[];
}

/** Tokens issued for a project on one UTC day. */
export interface TokenDayCount {
  /** `YYYY-MM-DD`. */
  readonly day: string;
  readonly tokens: number;
}

/** Participant minutes of a project on one UTC day (not priced: docs/console.md, "Usage"). */
export interface ParticipantDayMinutes {
  /** `YYYY-MM-DD`. */
  readonly day: string;
  readonly participant_seconds: number;
  /** `participant_seconds` in minutes, rounded up. */
  readonly participant_minutes: number;
  /**
   * The day's minutes per usage kind of the price list, each kind's seconds rounded up: every kind
   * listed, 0 when none; `turn_relay` counts on top of the audio or video kinds.
   */
  readonly minutes_by_kind: Readonly<Record<string, number>>;
}

/** What the minutes of the usage period would cost under the project's plan, as a quote prices them. */
export interface UsageCost {
  readonly plan: string;
  /** `subscription`: the project's approved plan; `default`: no subscription, the price list's first plan. */
  readonly plan_source: 'subscription' | 'default';
  /** The first and last UTC day of the period (`YYYY-MM-DD`). */
  readonly from_day: string;
  readonly to_day: string;
  /** The minutes per usage kind of the period: the sum of the days' `minutes_by_kind`. */
  readonly usage: Readonly<Record<string, number>>;
  readonly currency: string;
  readonly minor_units: number;
  readonly price_list_version: string;
  /** As `POST /v1/billing/quotes` answers for `plan` and `usage`: monthly fee, lines, discount. */
  readonly plan_fee_minor: number;
  readonly usage_subtotal_minor: number;
  readonly discount_minor: number;
  readonly total_minor: number;
}

/** `GET /v1/projects/{id}/usage` (`ProjectUsage`): the last 14 days. */
export interface ProjectUsage {
  readonly tokens_per_day: readonly TokenDayCount[];
  readonly participant_minutes_per_day: readonly ParticipantDayMinutes[];
  readonly cost: UsageCost;
}

/** One media session of the history (`MediaSession`); `left_at` and `reason` are null while it is open. */
export interface MediaSession {
  readonly participant_id: string;
  readonly room_id: string;
  readonly user_id: string;
  readonly role: string;
  readonly media_node: string | null;
  readonly joined_at: number;
  readonly left_at: number | null;
  /** As `participant.left` says, or `node_lost` when the media node stopped without closing the session. */
  readonly reason: ParticipantLeftReason | 'node_lost' | null;
  readonly duration_seconds: number;
  /** What its minutes are priced as (docs/console.md, "Usage"); null while open, or when its media node was lost. */
  readonly usage_kind: string | null;
  /** Its media went through a TURN relay (`turn_relay` minutes on top). */
  readonly turn_relay: boolean;
}

/** `GET /v1/projects/{id}/sessions` (`MediaSessionList`): newest first. */
export interface MediaSessionList {
  readonly sessions: readonly MediaSession[];
  readonly next_cursor: string | null;
}

/** One event's delivery to a webhook endpoint (`WebhookDelivery`). */
export interface WebhookDelivery {
  readonly id: string;
  readonly event_id: string;
  readonly event_type: WebhookEventType;
  readonly status: 'pending' | 'delivered' | 'failed';
  readonly attempts: number;
  readonly last_status_code: number | null;
  readonly last_error: string | null;
  /** Seconds since the epoch (rounded up); null once delivered or failed. */
  readonly next_attempt_at: number | null;
  readonly delivered_at: number | null;
  readonly created_at: number;
}

/** `GET /v1/projects/{id}/webhooks/{webhook_id}/deliveries` (`WebhookDeliveryList`): the delivery log, newest first. */
export interface WebhookDeliveryList {
  readonly deliveries: readonly WebhookDelivery[];
  readonly next_cursor: string | null;
}

/** `GET /v1/rtc/rooms` and `GET /v1/projects/{id}/rooms` (`RoomList`): one page of the live rooms, by room id. */
export interface RoomList {
  readonly rooms: readonly RtcRoom[];
  /** Pass as `cursor` for the next page; null on the last page. */
  readonly next_cursor: string | null;
}

/** `POST /v1/rtc/rooms/{room_id}/end` (`RoomEnded`). */
export interface RoomEnded {
  readonly ended: true;
  /** How many participants were closed. */
  readonly participants: number;
  /** Stored before the answer: the room's tokens issued (`iat`) at or before this second are refused. */
  readonly cut_off_at: number;
}

/** The optional body of `POST /v1/rtc/rooms/{room_id}/participants/{participant_id}/remove` (`RemovalRequest`). */
export interface RemovalRequest {
  /** Keep the user out of the room this long (1 to 604800): its tokens for the room issued until then are refused. */
  readonly ban_seconds?: number | undefined;
}

/** `POST /v1/rtc/rooms/{room_id}/participants/{participant_id}/remove` (`ParticipantRemoved`). */
export interface ParticipantRemoved {
  readonly removed: true;
  /** The user removed: the cut-off applies to every session of this user in the room. */
  readonly user_id: string;
  /** Stored before the answer: the room's tokens of the user issued (`iat`) at or before this second are refused. */
  readonly cut_off_at: number;
  /** Present while a ban is in force (asked for now, or from an earlier removal): equal to `cut_off_at`. */
  readonly banned_until?: number;
}

/** A plan of the price list, one of `plans` of `GET /v1/public/pricing/plans` (`PricingPlans`). */
export interface PricingPlan {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly currency: string;
  readonly monthly_fee_minor: number;
  /** Minutes included every month, one entry per usage kind. */
  readonly included_minutes: Readonly<Record<string, number>>;
}

/** `POST /v1/rtc/tokens/revoke` (`RevocationResult`). */
export interface RevocationResult {
  readonly revoked: true;
}
