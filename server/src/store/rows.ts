import type { QuoteRecord, SubscriptionRequestRecord, SubscriptionRequestStatus } from '../billing/store.ts';
import type { AccountRecord, ProjectRecord, SessionRecord, SessionStatus } from '../customers/store.ts';
import type { LiveGrant, LiveParticipantRecord } from '../rooms/store.ts';

/**
 * Rows both SQL stores read, with the same column names and types in SQLite and PostgreSQL, and
 * their records. The credential row differs (SQLite has no booleans or JSON) and stays with each store.
 */

export interface ProjectRow {
  id: string; account_id: string; name: string; console_app_id: string;
  archived_at: number | null; created_at: number; updated_at: number;
}
export interface SessionRow {
  id: string; account_id: string; family_id: string; access_hash: string; access_expires_at: number;
  refresh_hash: string; refresh_expires_at: number; status: SessionStatus; created_at: number;
}
export interface AccountRow { id: string; email: string; password_hash: string; created_at: number }
export interface QuoteRow { id: string; account_id: string; price_list_version: string; created_at: number; document: string }
export interface SubscriptionRequestRow {
  id: string; account_id: string; project_id: string; plan: string; quote_id: string | null; note: string | null;
  status: SubscriptionRequestStatus; created_at: number; updated_at: number; decided_at: number | null; reason: string | null;
}

export const toQuote = (r: QuoteRow): QuoteRecord => ({
  id: r.id, accountId: r.account_id, priceListVersion: r.price_list_version, createdAt: r.created_at, document: r.document,
});

export const toSubscriptionRequest = (r: SubscriptionRequestRow): SubscriptionRequestRecord => ({
  id: r.id, accountId: r.account_id, projectId: r.project_id, plan: r.plan, quoteId: r.quote_id, note: r.note,
  status: r.status, createdAt: r.created_at, updatedAt: r.updated_at, decidedAt: r.decided_at, reason: r.reason,
});

export const toAccount = (r: AccountRow): AccountRecord =>
  ({ id: r.id, email: r.email, passwordHash: r.password_hash, createdAt: r.created_at });

export const toSession = (r: SessionRow): SessionRecord => ({
  id: r.id, accountId: r.account_id, familyId: r.family_id, accessHash: r.access_hash,
  accessExpiresAt: r.access_expires_at, refreshHash: r.refresh_hash, refreshExpiresAt: r.refresh_expires_at,
  status: r.status, createdAt: r.created_at,
});

export const toProject = (r: ProjectRow): ProjectRecord => ({
  id: r.id, accountId: r.account_id, name: r.name, consoleAppId: r.console_app_id,
  archivedAt: r.archived_at, createdAt: r.created_at, updatedAt: r.updated_at,
});

/** A `live_participants` row; the lists are JSON text in both stores. */
export interface LiveParticipantRow {
  participant_id: string; project_id: string; room_id: string; user_id: string; role: string; publish_streams: string;
  subscribe_streams: string; subscribe_room: number | boolean; joined_at: number; room_started_at: number; media_node: string;
  grants: string;
}

export const toLiveParticipant = (r: LiveParticipantRow): LiveParticipantRecord => ({
  participantId: r.participant_id, projectId: r.project_id, roomId: r.room_id, userId: r.user_id, role: r.role,
  publishStreams: JSON.parse(r.publish_streams) as number[], subscribeStreams: JSON.parse(r.subscribe_streams) as number[],
  subscribeRoom: r.subscribe_room === true || r.subscribe_room === 1, joinedAt: r.joined_at, roomStartedAt: r.room_started_at,
  mediaNode: r.media_node, grants: JSON.parse(r.grants) as LiveGrant[],
});
