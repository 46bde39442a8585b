/** The ports the services use, in domain terms; adapters implement them (memory, SQLite, ...). */
import type { WebhookEventType } from '@rtc/protocol';

export interface Clock {
  nowMs(): number;
}

export interface AccountRecord {
  readonly id: string;
  readonly email: string;
  readonly passwordHash: string;
  readonly createdAt: number;
}

export type SessionStatus = 'active' | 'rotated' | 'ended';

/** One access/refresh pair of a console session; rotations of one login share a family. */
export interface SessionRecord {
  readonly id: string;
  readonly accountId: string;
  readonly familyId: string;
  readonly accessHash: string;
  readonly accessExpiresAt: number;
  readonly refreshHash: string;
  readonly refreshExpiresAt: number;
  readonly status: SessionStatus;
  readonly createdAt: number;
}

export interface ProjectRecord {
  readonly id: string;
  readonly accountId: string;
  readonly name: string;
  /** App ID shown on temporary tokens issued from the console (no secret exists for it). */
  readonly consoleAppId: string;
  readonly archivedAt: number | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface Scopes {
  readonly publisher: boolean;
  readonly subscriber: boolean;
}

export interface CredentialRecord {
  readonly appId: string;
  readonly projectId: string;
  readonly name: string;
  readonly secretHash: string;
  readonly scopes: Scopes;
  readonly ipAllowlist: readonly string[];
  readonly maxTtlSeconds: number;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly rotatedAt: number | null;
  readonly revokedAt: number | null;
}

/** A credential with what the token API needs of its project, read in one look-up. */
export interface AuthCredential extends CredentialRecord {
  readonly projectArchived: boolean;
}

export interface RevocationRecord {
  readonly grantId: string;
  readonly projectId: string;
  readonly expiresAt: number;
}

/**
 * A project's archive cut-off (docs/decisions.md, "Archiving ends live sessions"): every grant and
 * signaling token of the project issued at or before `cutAt` is refused, also after an unarchive.
 * Kept until `expiresAt`, when every such token has expired anyway.
 */
export interface ProjectCutoffRecord {
  readonly projectId: string;
  readonly cutAt: number;
  readonly expiresAt: number;
}

/** A grant a live participant has used and that has not expired: removing the participant revokes each. */
export interface LiveGrant {
  readonly grantId: string;
  readonly expiresAt: number;
}

/**
 * A participant joined on a media node, as the media node records it at join and drops at leave
 * (docs/reference/room-api.md): read by the api and token nodes, which do not hold the rooms.
 */
/** Tokens issued for a project on one UTC day (`YYYY-MM-DD`): the console's usage figures. */
export interface TokenCount {
  readonly projectId: string;
  readonly day: string;
  readonly count: number;
}

/** Counts issued tokens in memory and writes them to the store in batches (services/token-usage.ts). */
export interface TokenCounter {
  count(projectId: string, issuedAtSec: number): void;
  /** Writes what was counted so far. */
  flush(): Promise<void>;
}

export interface LiveParticipantRecord {
  readonly participantId: string;
  readonly projectId: string;
  readonly roomId: string;
  readonly userId: string;
  readonly role: string;
  readonly publishStreams: readonly number[];
  readonly subscribeStreams: readonly number[];
  readonly subscribeRoom: boolean;
  readonly joinedAt: number;
  /** When the room started on its media node (its first participant there joined). */
  readonly roomStartedAt: number;
  /** `host:port`, as the media node announces itself. */
  readonly mediaNode: string;
  readonly grants: readonly LiveGrant[];
}

export interface LiveParticipantPermissions {
  readonly publishStreams: readonly number[];
  readonly subscribeStreams: readonly number[];
  readonly subscribeRoom: boolean;
}

export interface ProjectPatch {
  readonly name?: string;
  readonly archivedAt?: number | null;
  readonly updatedAt: number;
}

export interface CredentialPatch {
  readonly name?: string;
  readonly scopes?: Scopes;
  readonly ipAllowlist?: readonly string[];
  readonly maxTtlSeconds?: number;
  readonly secretHash?: string;
  readonly rotatedAt?: number;
  readonly revokedAt?: number;
  readonly updatedAt: number;
}

/** A priced quote; immutable once stored (docs/billing.md). */
export interface QuoteRecord {
  readonly id: string;
  readonly accountId: string;
  readonly priceListVersion: string;
  readonly createdAt: number;
  /** The quote exactly as shown to the customer (JSON), fixed at creation. */
  readonly document: string;
}

export type SubscriptionRequestStatus = 'pending' | 'approved' | 'rejected' | 'cancelled';

/** A customer's request to put a project on a plan; an operator approves or rejects it. */
export interface SubscriptionRequestRecord {
  readonly id: string;
  readonly accountId: string;
  readonly projectId: string;
  readonly plan: string;
  readonly quoteId: string | null;
  readonly note: string | null;
  readonly status: SubscriptionRequestStatus;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** When it left `pending`. */
  readonly decidedAt: number | null;
  /** The operator's reason for a rejection. */
  readonly reason: string | null;
}

export interface SubscriptionRequestFilter {
  /** Undefined: every account (operator views). */
  readonly accountId?: string | undefined;
  readonly projectId?: string | undefined;
  readonly status?: SubscriptionRequestStatus | undefined;
}

/** One page of a newest-first listing: `afterId` is the last id of the previous page. */
export interface PageRequest {
  readonly limit: number;
  readonly afterId?: string | undefined;
}

export interface SubscriptionTransition {
  readonly status: Exclude<SubscriptionRequestStatus, 'pending'>;
  readonly at: number;
  readonly reason?: string | null | undefined;
}

/** The key ring as a store keeps it: the document of `keys.json` (JSON text, secret) and its version. */
export interface StoredKeyRing {
  readonly document: string;
  /** 1 when created, one more on each replacement. */
  readonly version: number;
}

export interface Store extends WebhookStore {
  ping(): Promise<void>;
  close(): Promise<void>;

  /** Undefined until a ring was inserted. */
  readKeyRing(): Promise<StoredKeyRing | undefined>;
  /** Stores the first ring at version 1; false (nothing changed) when one exists. */
  insertKeyRingIfAbsent(document: string): Promise<boolean>;
  /** Replaces the ring only if it is still at `expectedVersion`, moving it one version on; false otherwise. */
  replaceKeyRing(document: string, expectedVersion: number): Promise<boolean>;

  /** False when the e-mail address is taken. */
  insertAccount(account: AccountRecord): Promise<boolean>;
  findAccountByEmail(email: string): Promise<AccountRecord | undefined>;
  getAccount(id: string): Promise<AccountRecord | undefined>;

  insertSession(session: SessionRecord): Promise<void>;
  findSessionByAccessHash(hash: string): Promise<SessionRecord | undefined>;
  findSessionByRefreshHash(hash: string): Promise<SessionRecord | undefined>;
  /** Moves an active session to `rotated`; false when it was not active (a race lost). */
  markSessionRotated(id: string): Promise<boolean>;
  endSessionFamily(familyId: string): Promise<void>;

  insertProject(project: ProjectRecord): Promise<void>;
  listProjects(accountId: string): Promise<ProjectRecord[]>;
  getProject(accountId: string, projectId: string): Promise<ProjectRecord | undefined>;
  updateProject(projectId: string, patch: ProjectPatch): Promise<ProjectRecord | undefined>;
  countProjects(accountId: string): Promise<number>;

  insertCredential(credential: CredentialRecord): Promise<void>;
  listCredentials(projectId: string): Promise<CredentialRecord[]>;
  getCredential(projectId: string, appId: string): Promise<CredentialRecord | undefined>;
  updateCredential(appId: string, patch: CredentialPatch): Promise<CredentialRecord | undefined>;
  countCredentials(projectId: string): Promise<number>;
  findCredentialForAuth(appId: string): Promise<AuthCredential | undefined>;

  insertRevocation(revocation: RevocationRecord): Promise<void>;
  isRevoked(grantId: string): Promise<boolean>;
  listRevocations(nowSec: number): Promise<RevocationRecord[]>;
  purgeRevocations(nowSec: number): Promise<number>;

  /** Records a cut-off; a project archived again keeps the later `cutAt` and `expiresAt`. */
  insertProjectCutoff(cutoff: ProjectCutoffRecord): Promise<void>;
  /** The project's cut-off, expired or not (undefined once purged). */
  projectCutoff(projectId: string): Promise<ProjectCutoffRecord | undefined>;
  /** Cut-offs whose `expiresAt` is `nowSec` or later. */
  listProjectCutoffs(nowSec: number): Promise<ProjectCutoffRecord[]>;
  purgeProjectCutoffs(nowSec: number): Promise<number>;

  /** Records a participant, or replaces its row (a renewal brings a grant). */
  upsertLiveParticipant(participant: LiveParticipantRecord): Promise<void>;
  deleteLiveParticipant(participantId: string): Promise<void>;
  /** Changes the permissions of a participant's row; undefined when there is none. */
  updateLiveParticipant(participantId: string, permissions: LiveParticipantPermissions): Promise<LiveParticipantRecord | undefined>;
  /**
   * A project's participants (of one room when `roomId` is given) on media nodes seen at
   * `seenSince` or later, oldest join first.
   */
  listLiveParticipants(projectId: string, roomId: string | undefined, seenSince: number): Promise<LiveParticipantRecord[]>;
  /** Adds to the tokens issued per project and day (each process adds what it issued). */
  addTokenCounts(counts: readonly TokenCount[]): Promise<void>;
  /** Tokens issued for a project per day, from `sinceDay` on, oldest first; days without any are left out. */
  listTokenCounts(projectId: string, sinceDay: string): Promise<TokenCount[]>;
  /** A media node is alive at `nowSec`. */
  heartbeatMediaNode(nodeId: string, nowSec: number): Promise<void>;
  /** Drops a media node's participants and heartbeat (at its start and close). */
  clearMediaNode(nodeId: string): Promise<void>;
  /** Drops the participants and heartbeats of media nodes last seen before `seenBefore` (crashed nodes); how many nodes. */
  purgeMediaNodes(seenBefore: number): Promise<number>;

  insertQuote(quote: QuoteRecord): Promise<void>;
  getQuote(accountId: string, id: string): Promise<QuoteRecord | undefined>;
  /** An account's quotes, newest first. */
  listQuotes(accountId: string, page: PageRequest): Promise<QuoteRecord[]>;

  /** False when the project already has a pending request (at most one pending request per project). */
  insertSubscriptionRequest(request: SubscriptionRequestRecord): Promise<boolean>;
  /** By id; with an account id, only that account's request. */
  getSubscriptionRequest(id: string, accountId?: string): Promise<SubscriptionRequestRecord | undefined>;
  /** Newest first. */
  listSubscriptionRequests(filter: SubscriptionRequestFilter, page: PageRequest): Promise<SubscriptionRequestRecord[]>;
  /** Moves a pending request to a final state; undefined when it was not pending (a race lost or a final state). */
  transitionSubscriptionRequest(id: string, to: SubscriptionTransition): Promise<SubscriptionRequestRecord | undefined>;
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

export type BusEvent =
  | { readonly type: 'grant.revoked'; readonly grantId: string; readonly projectId: string; readonly expiresAt: number }
  | { readonly type: 'credential.changed'; readonly appId: string }
  | { readonly type: 'project.archived'; readonly projectId: string; readonly cutAt: number; readonly expiresAt: number }
  | {
    readonly type: 'participant.updated'; readonly projectId: string; readonly roomId: string; readonly participantId: string;
    readonly publish: readonly number[]; readonly subscribe: readonly number[]; readonly subscribeRoom: boolean;
  };

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

/** A webhook endpoint of a project (docs/reference/webhooks.md). */
export interface WebhookRecord {
  readonly id: string;
  readonly projectId: string;
  readonly url: string;
  readonly description: string;
  /** Types it receives; empty: every type. */
  readonly eventTypes: readonly ProjectEventType[];
  readonly enabled: boolean;
  /** The signing secret, kept as-is: the platform signs with it (docs/decisions.md, "Webhook secrets"). */
  readonly secret: string;
  /** The secret before the last rotation, still signed with until `previousSecretExpiresAt` (ms). */
  readonly previousSecret: string | null;
  readonly previousSecretExpiresAt: number | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface WebhookPatch {
  readonly url?: string;
  readonly description?: string;
  readonly eventTypes?: readonly ProjectEventType[];
  readonly enabled?: boolean;
  readonly secret?: string;
  readonly previousSecret?: string | null;
  readonly previousSecretExpiresAt?: number | null;
  readonly updatedAt: number;
}

/** An event as kept in the outbox: `body` is the exact JSON every endpoint receives. */
export interface OutboxEvent {
  readonly id: string;
  readonly projectId: string;
  readonly type: ProjectEventType;
  readonly body: string;
  /** Milliseconds since the epoch: the first attempt is due then. */
  readonly recordedAt: number;
  /** Only this endpoint (the test event), enabled or not; undefined: every enabled endpoint that wants the type. */
  readonly webhookId?: string | undefined;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One event for one endpoint; times in milliseconds since the epoch. */
export interface DeliveryRecord {
  readonly id: string;
  readonly webhookId: string;
  readonly eventId: string;
  readonly eventType: ProjectEventType;
  readonly status: DeliveryStatus;
  readonly attempts: number;
  readonly lastStatusCode: number | null;
  readonly lastError: string | null;
  /** Null once delivered or failed. */
  readonly nextAttemptAt: number | null;
  readonly deliveredAt: number | null;
  readonly createdAt: number;
}

/** A claimed delivery: what the worker needs to send it. */
export interface DeliveryJob {
  readonly id: string;
  readonly webhookId: string;
  readonly eventId: string;
  readonly url: string;
  readonly body: string;
  readonly secrets: readonly string[];
  readonly attempts: number;
  readonly createdAt: number;
}

export interface DeliveryClaim {
  readonly nowMs: number;
  readonly leaseMs: number;
  readonly owner: string;
  readonly limit: number;
  /** Endpoints that already have as many deliveries in flight as they may. */
  readonly excludeWebhookIds: readonly string[];
  /** At most this many deliveries of one endpoint in this claim (the oldest due), so one endpoint cannot take every slot. */
  readonly perWebhook: number;
}

/** The outcome of one attempt: `nextAttemptAt` set retries, `delivered` ends, neither: failed for good. */
export interface DeliveryOutcome {
  readonly attemptedAt: number;
  readonly delivered: boolean;
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly nextAttemptAt: number | null;
}

/** Webhook endpoints and the outbox of their deliveries, in the same store as the rest. */
export interface WebhookStore {
  insertWebhook(webhook: WebhookRecord): Promise<void>;
  listWebhooks(projectId: string): Promise<WebhookRecord[]>;
  getWebhook(projectId: string, id: string): Promise<WebhookRecord | undefined>;
  updateWebhook(id: string, patch: WebhookPatch): Promise<WebhookRecord | undefined>;
  /** Removes the endpoint and every delivery of it; false when it did not exist. */
  deleteWebhook(projectId: string, id: string): Promise<boolean>;
  countWebhooks(projectId: string): Promise<number>;

  /** One delivery per endpoint that wants the event, in one transaction; how many. */
  recordEvent(event: OutboxEvent): Promise<number>;
  /**
   * Leases up to `limit` due pending deliveries for `leaseMs`: no other claim gets them until the
   * lease ends (several processes never send one delivery at the same time).
   */
  claimDeliveries(claim: DeliveryClaim): Promise<DeliveryJob[]>;
  /** Records an attempt and ends the lease; false when the lease was lost (another owner took it). */
  completeDelivery(id: string, owner: string, outcome: DeliveryOutcome): Promise<boolean>;
  getDelivery(webhookId: string, id: string): Promise<DeliveryRecord | undefined>;
  /** An endpoint's deliveries, newest first. */
  listDeliveries(webhookId: string, page: PageRequest): Promise<DeliveryRecord[]>;
  /** Drops delivered and failed deliveries recorded before `beforeMs` (pending ones stay); how many. */
  purgeDeliveries(beforeMs: number): Promise<number>;
}
