import type { Role, WebhookEventType } from '@rtc/protocol';
/** The ports every module shares, in domain terms; adapters implement them (memory, SQLite, Redis, ...). */

/** The database behind the store answers (readiness). */
export interface StoreHealth {
  ping(): Promise<void>;
}

export interface Clock {
  nowMs(): number;
}

/** Counts issued tokens in memory and writes them to the store in batches (tokens/usage.ts). */
export interface TokenCounter {
  count(projectId: string, issuedAtSec: number): void;
  /** Writes what was counted so far. */
  flush(): Promise<void>;
}

/** One page of a newest-first listing: `afterId` is the last id of the previous page. */
export interface PageRequest {
  readonly limit: number;
  readonly afterId?: string | undefined;
}

export interface LimitResult {
  readonly ok: boolean;
  /** Whole seconds until the window ends (0 when ok). */
  readonly retryAfterSec: number;
}

/** Fixed-window counters keyed by string; the window opens with the first hit. */
export interface Limiter {
  /** Counts one hit; not ok when this hit went over `max` within the window. */
  hit(key: string, max: number, windowSec: number): Promise<LimitResult>;
  /** Without counting: not ok when `max` hits were already counted in the open window. */
  peek(key: string, max: number, windowSec: number): Promise<LimitResult>;
}

/**
 * Step 1 of a token request (docs/reference/token-api.md, "Order of checks": the address's failure
 * block and rate limit) and, where the deployment keeps credential versions (a cluster, in Redis),
 * the version of the claimed credential's project and the App ID's count, in one step.
 */
export interface TokenAdmission {
  admit(request: AdmissionRequest): Promise<AdmissionResult>;
}

/** One fixed-window limit of `Limiter`: `key` counted under `max` hits per `windowSec`. */
export interface LimitSpec {
  readonly key: string;
  readonly max: number;
  readonly windowSec: number;
}

export interface AdmissionRequest {
  /** Peeked: refused once `max` failures are counted (the address is blocked). */
  readonly block: LimitSpec;
  /** Hit when not blocked. */
  readonly rate: LimitSpec;
  /** The project the claimed App ID belongs to, when this process knows it: its credential version is read. */
  readonly projectId?: string | undefined;
  /**
   * Hit in the same step only if `projectId`'s version is still `version`: the caller's cached
   * credential is current and the presented secret matched it (the App ID limit counts only
   * authenticated requests).
   */
  readonly app?: (LimitSpec & { readonly version: string }) | undefined;
}

export interface AdmissionResult {
  /** The address's block and rate limit; not ok: 429 before anything else. */
  readonly address: LimitResult;
  /** The project's credential version read in this step; undefined: none (nothing may be cached). */
  readonly version?: string | undefined;
  /** The App ID's hit when it was counted in this step (`app` given and its version current). */
  readonly app?: LimitResult | undefined;
}

/**
 * Versions of each project's credentials (with its archived state), shared by every node: a node
 * uses what it cached of a credential only while the version it cached with is the current one.
 */
export interface CredentialVersions {
  /**
   * Before a store write to a credential or its project: from now on no node uses what it cached of
   * the project's credentials. Throws when the versions cannot be reached (the change is refused).
   */
  beforeChange(projectId: string): Promise<void>;
  /** Once the write is done: caching may resume sooner (never throws; the first mark expires anyway). */
  afterChange(projectId: string): Promise<void>;
}

export type BusEvent =
  | { readonly type: 'grant.revoked'; readonly grantId: string; readonly projectId: string; readonly expiresAt: number }
  | { readonly type: 'credential.changed'; readonly appId: string }
  | { readonly type: 'project.archived'; readonly projectId: string; readonly cutAt: number; readonly expiresAt: number }
  /** A removal (one user, `userId`) or the end of a room (every user, `userId` null) cuts off the room's grants issued up to `cutAt`. */
  | {
    readonly type: 'room.cut_off'; readonly projectId: string; readonly roomId: string; readonly userId: string | null;
    readonly cutAt: number; readonly expiresAt: number;
  }
  | {
    readonly type: 'participant.updated'; readonly projectId: string; readonly roomId: string; readonly participantId: string;
    readonly publish: readonly number[]; readonly subscribe: readonly number[]; readonly subscribeRoom: boolean;
    /** When the room service made the change (ms): of two changes, the newest holds. */
    readonly setAt: number;
  }
  /** A room's settings changed through the room service API (docs/reference/room-api.md, "Room settings"): their new values. */
  | {
    readonly type: 'room.updated'; readonly projectId: string; readonly roomId: string; readonly metadata: string;
    readonly maxParticipants: number; readonly emptyTimeout: number;
  }
  /** A participant's metadata or attributes changed: their new values. */
  | {
    readonly type: 'participant.metadata'; readonly projectId: string; readonly roomId: string; readonly participantId: string;
    readonly metadata: string; readonly attributes: Readonly<Record<string, string>>;
  }
  /** A data message of the customer's server (base64) for the room's participants, or those named. */
  | {
    readonly type: 'room.data'; readonly projectId: string; readonly roomId: string; readonly data: string; readonly topic: string | null;
    readonly participantIds: readonly string[]; readonly userIds: readonly string[];
  }
  /** The customer's server muted or unmuted a participant's published stream (docs/reference/room-api.md, "Muting a stream"). */
  | {
    readonly type: 'stream.muted'; readonly projectId: string; readonly roomId: string; readonly participantId: string;
    readonly streamId: number; readonly muted: boolean;
  }
  /**
   * The streams a media node originates in a room, whole, at each change (an empty list included):
   * how the room's other nodes learn what to relay (docs/protocol/relay.md). `ask`: sent at a join,
   * the other nodes holding the room answer with theirs.
   */
  /**
   * Who is joined in a room on one media node: the room's other nodes show them to their members
   * (docs/protocol/media.md, "Rooms across media nodes"). `whole`: `members` is everyone joined there
   * (an empty list: nobody); otherwise `members` joined or changed and `left` left. `ask`: sent as the
   * room opens on the node, the other nodes holding it answer with their whole list.
   */
  | {
    readonly type: 'media.members'; readonly projectId: string; readonly roomId: string; readonly node: string;
    readonly members: readonly SpanMember[]; readonly left: readonly string[]; readonly whole: boolean; readonly ask: boolean;
  }
  | {
    readonly type: 'media.streams'; readonly projectId: string; readonly roomId: string; readonly node: string; readonly url: string;
    readonly streams: readonly OriginStream[]; readonly ask: boolean;
  };

/** A participant joined on one media node, as that node tells the room's other nodes (media/node/room-span.ts). */
export interface SpanMember {
  readonly participantId: string;
  readonly userId: string;
  readonly role: Role;
  readonly metadata: string;
  readonly attributes: Readonly<Record<string, string>>;
}

/** A stream as its origin node announces it to the room's other nodes. */
export interface OriginStream {
  readonly streamId: number;
  readonly kind: 'audio' | 'video' | 'data';
  /** Its simulcast layers (1: one layer, and audio and data). */
  readonly layers: number;
  readonly participantId: string;
  readonly userId: string;
  /** Muted by the customer's server (docs/reference/room-api.md, "Muting a stream"). */
  readonly muted: boolean;
}

/** Fan-out of platform events to every process (revocations reach every media server). */
export interface EventBus {
  /**
   * Which processes an event reaches: this one only (the in-process bus), or every process of the
   * deployment (processes of one data directory on SQLite, every node through Redis).
   */
  readonly reach: 'process' | 'deployment';
  publish(event: BusEvent): Promise<void>;
  subscribe(handler: (event: BusEvent) => void): () => void;
  /**
   * `handler` runs when events may have been missed (the connection to Redis was lost and is
   * back): subscribers re-read from the store what they keep. Revocations are in the store before
   * they are published, so none is lost. Buses that cannot miss events never call it.
   */
  onResync(handler: () => void): () => void;
  /**
   * False while an event published now may not reach the other processes in time (cut off from
   * Redis: it is kept and sent later); undefined: a bus that always reaches them.
   */
  live?(): boolean;
  close(): Promise<void>;
}

/** What happened in a project that its webhook endpoints are told about (docs/reference/webhooks.md). */
export type ProjectEventType = WebhookEventType;

/** JSON-safe details of an event: ids of rooms, participants, users, App IDs; never a secret. */
export type ProjectEventData = Readonly<Record<string, string | number | boolean | null | readonly string[] | readonly number[]>>;

export interface ProjectEventInput {
  readonly projectId: string;
  readonly type: ProjectEventType;
  /** Seconds since the epoch. */
  readonly occurredAt: number;
  readonly data: ProjectEventData;
}

/** Where services and the media role record project events; durable once `record` resolves. */
export interface ProjectEvents {
  record(event: ProjectEventInput): Promise<void>;
}

/** Checks a webhook endpoint URL's target before it is saved (SSRF): a problem to show, or undefined. */
export interface WebhookTargets {
  problem(url: string): Promise<string | undefined>;
}
