import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { AuthCredential, CredentialPatch, CredentialRecord, ProjectCutoffRecord, ProjectPatch, ProjectRecord } from '../customers/store.ts';
import type { LiveParticipantRecord } from '../rooms/store.ts';
import type { Store } from './port.ts';
import type { TokenCount } from '../tokens/store.ts';
import {
  toLiveParticipant, type LiveParticipantRow, toAccount, toProject, toQuote, toSession, toSubscriptionRequest, type AccountRow, type ProjectRow, type QuoteRow,
  type SessionRow, type SubscriptionRequestRow,
} from './rows.ts';
import { SQLITE_WEBHOOK_MIGRATION, sqliteWebhookStore } from '../webhooks/sqlite.ts';

// Each entry moves the schema one version forward; PRAGMA user_version records how far a file is.
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE accounts (
     id TEXT PRIMARY KEY,
     email TEXT NOT NULL UNIQUE,
     password_hash TEXT NOT NULL,
     created_at INTEGER NOT NULL
   );
   CREATE TABLE sessions (
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     family_id TEXT NOT NULL,
     access_hash TEXT NOT NULL UNIQUE,
     access_expires_at INTEGER NOT NULL,
     refresh_hash TEXT NOT NULL UNIQUE,
     refresh_expires_at INTEGER NOT NULL,
     status TEXT NOT NULL CHECK (status IN ('active','rotated','ended')),
     created_at INTEGER NOT NULL
   );
   CREATE INDEX sessions_family ON sessions(family_id);
   CREATE TABLE projects (
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     name TEXT NOT NULL,
     console_app_id TEXT NOT NULL UNIQUE,
     archived_at INTEGER,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL
   );
   CREATE INDEX projects_account ON projects(account_id, created_at);
   CREATE TABLE credentials (
     app_id TEXT PRIMARY KEY,
     project_id TEXT NOT NULL REFERENCES projects(id),
     name TEXT NOT NULL,
     secret_hash TEXT NOT NULL,
     scope_publisher INTEGER NOT NULL,
     scope_subscriber INTEGER NOT NULL,
     ip_allowlist TEXT NOT NULL,
     max_ttl_seconds INTEGER NOT NULL,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL,
     rotated_at INTEGER,
     revoked_at INTEGER
   );
   CREATE INDEX credentials_project ON credentials(project_id, created_at);
   CREATE TABLE revocations (
     grant_id TEXT PRIMARY KEY,
     project_id TEXT NOT NULL,
     expires_at INTEGER NOT NULL
   );
   CREATE INDEX revocations_expiry ON revocations(expires_at);`,
  // billing: quotes are immutable documents; at most one pending subscription request per project
  `CREATE TABLE quotes (
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     price_list_version TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     document TEXT NOT NULL
   );
   CREATE INDEX quotes_account ON quotes(account_id);
   CREATE TABLE subscription_requests (
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     project_id TEXT NOT NULL REFERENCES projects(id),
     plan TEXT NOT NULL,
     quote_id TEXT REFERENCES quotes(id),
     note TEXT,
     status TEXT NOT NULL CHECK (status IN ('pending','approved','rejected','cancelled')),
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL,
     decided_at INTEGER,
     reason TEXT
   );
   CREATE INDEX subscription_requests_account ON subscription_requests(account_id);
   CREATE INDEX subscription_requests_project ON subscription_requests(project_id);
   CREATE UNIQUE INDEX subscription_requests_one_pending ON subscription_requests(project_id) WHERE status = 'pending';`,
  // platform events shared by the processes of one data directory (adapters/bus/sqlite.ts)
  `CREATE TABLE bus_events (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     origin TEXT NOT NULL,
     body TEXT NOT NULL,
     created_at INTEGER NOT NULL
   );`,
  // archive cut-offs: a project's tokens issued up to its archive are refused (docs/decisions.md)
  `CREATE TABLE project_cutoffs (
     project_id TEXT PRIMARY KEY,
     cut_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL
   );
   CREATE INDEX project_cutoffs_expiry ON project_cutoffs(expires_at);`,
  // the key ring document of a deployment that keeps it in its store (docs/operations/configuration.md, "Keys"): one row
  `CREATE TABLE key_ring (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     document TEXT NOT NULL,
     version INTEGER NOT NULL
   );`,
  // participants joined on the media nodes, and when each node was last seen (docs/reference/room-api.md)
  `CREATE TABLE live_participants (
     participant_id TEXT PRIMARY KEY,
     project_id TEXT NOT NULL,
     room_id TEXT NOT NULL,
     user_id TEXT NOT NULL,
     role TEXT NOT NULL,
     publish_streams TEXT NOT NULL,
     subscribe_streams TEXT NOT NULL,
     subscribe_room INTEGER NOT NULL,
     joined_at INTEGER NOT NULL,
     room_started_at INTEGER NOT NULL,
     media_node TEXT NOT NULL,
     grants TEXT NOT NULL
   );
   CREATE INDEX live_participants_project ON live_participants(project_id, room_id);
   CREATE INDEX live_participants_node ON live_participants(media_node);
   CREATE TABLE media_node_heartbeats (
     node_id TEXT PRIMARY KEY,
     seen_at INTEGER NOT NULL
   );`,
  // webhook endpoints and the outbox of their deliveries (docs/reference/webhooks.md)
  SQLITE_WEBHOOK_MIGRATION,
  // tokens issued per project and UTC day (docs/console.md, "Usage")
  `CREATE TABLE token_counts (
     project_id TEXT NOT NULL,
     day TEXT NOT NULL,
     count INTEGER NOT NULL,
     PRIMARY KEY (project_id, day)
   );`,
];

interface CredentialRow {
  app_id: string; project_id: string; name: string; secret_hash: string; scope_publisher: number;
  scope_subscriber: number; ip_allowlist: string; max_ttl_seconds: number; created_at: number;
  updated_at: number; rotated_at: number | null; revoked_at: number | null;
}

const toCredential = (r: CredentialRow): CredentialRecord => ({
  appId: r.app_id, projectId: r.project_id, name: r.name, secretHash: r.secret_hash,
  scopes: { publisher: r.scope_publisher === 1, subscriber: r.scope_subscriber === 1 },
  ipAllowlist: JSON.parse(r.ip_allowlist) as string[], maxTtlSeconds: r.max_ttl_seconds,
  createdAt: r.created_at, updatedAt: r.updated_at, rotatedAt: r.rotated_at, revokedAt: r.revoked_at,
});

interface CutoffRow { project_id: string; cut_at: number; expires_at: number }

const toCutoff = (r: CutoffRow): ProjectCutoffRecord => ({ projectId: r.project_id, cutAt: r.cut_at, expiresAt: r.expires_at });

/** Opens (and migrates) the embedded store: one SQLite file in WAL mode. */
export function createSqliteStore(path: string): Store {
  // the file holds password and secret hashes: a new one, and a new data directory, are their
  // owner's only (SQLite gives -wal/-shm the same mode)
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  closeSync(openSync(path, 'a', 0o600));
  const db = new Database(path);
  // first, so that processes opening one file together wait for each other's locks instead of failing
  db.pragma('busy_timeout = 5000');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  migrate(db);

  const q = {
    ping: db.prepare('SELECT 1'),
    insertAccount: db.prepare(`INSERT INTO accounts (id, email, password_hash, created_at)
      VALUES (@id, @email, @passwordHash, @createdAt) ON CONFLICT (email) DO NOTHING`),
    accountByEmail: db.prepare<[string], AccountRow>('SELECT * FROM accounts WHERE email = ?'),
    accountById: db.prepare<[string], AccountRow>('SELECT * FROM accounts WHERE id = ?'),
    insertSession: db.prepare(`INSERT INTO sessions (id, account_id, family_id, access_hash, access_expires_at,
      refresh_hash, refresh_expires_at, status, created_at) VALUES (@id, @accountId, @familyId, @accessHash,
      @accessExpiresAt, @refreshHash, @refreshExpiresAt, @status, @createdAt)`),
    sessionByAccess: db.prepare<[string], SessionRow>('SELECT * FROM sessions WHERE access_hash = ?'),
    sessionByRefresh: db.prepare<[string], SessionRow>('SELECT * FROM sessions WHERE refresh_hash = ?'),
    rotateSession: db.prepare(`UPDATE sessions SET status = 'rotated' WHERE id = ? AND status = 'active'`),
    endFamily: db.prepare(`UPDATE sessions SET status = 'ended' WHERE family_id = ?`),
    insertProject: db.prepare(`INSERT INTO projects (id, account_id, name, console_app_id, archived_at, created_at,
      updated_at) VALUES (@id, @accountId, @name, @consoleAppId, @archivedAt, @createdAt, @updatedAt)`),
    listProjects: db.prepare<[string], ProjectRow>(
      // rowid breaks ties in insertion order (ids are random; created_at has one-second steps)
      'SELECT * FROM projects WHERE account_id = ? ORDER BY created_at, rowid'),
    getProject: db.prepare<[string, string], ProjectRow>('SELECT * FROM projects WHERE account_id = ? AND id = ?'),
    projectById: db.prepare<[string], ProjectRow>('SELECT * FROM projects WHERE id = ?'),
    countProjects: db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM projects WHERE account_id = ?'),
    insertCredential: db.prepare(`INSERT INTO credentials (app_id, project_id, name, secret_hash, scope_publisher,
      scope_subscriber, ip_allowlist, max_ttl_seconds, created_at, updated_at, rotated_at, revoked_at)
      VALUES (@appId, @projectId, @name, @secretHash, @publisher, @subscriber, @ipAllowlist, @maxTtlSeconds,
      @createdAt, @updatedAt, @rotatedAt, @revokedAt)`),
    listCredentials: db.prepare<[string], CredentialRow>(
      'SELECT * FROM credentials WHERE project_id = ? ORDER BY created_at, rowid'),
    getCredential: db.prepare<[string, string], CredentialRow>(
      'SELECT * FROM credentials WHERE project_id = ? AND app_id = ?'),
    credentialById: db.prepare<[string], CredentialRow>('SELECT * FROM credentials WHERE app_id = ?'),
    // revoked credentials stay listed but no longer count toward the project's limit
    countCredentials: db.prepare<[string], { n: number }>(
      'SELECT count(*) AS n FROM credentials WHERE project_id = ? AND revoked_at IS NULL'),
    authCredential: db.prepare<[string], CredentialRow & { project_archived_at: number | null }>(
      `SELECT c.*, p.archived_at AS project_archived_at FROM credentials c JOIN projects p ON p.id = c.project_id
       WHERE c.app_id = ?`),
    // together they move whenever the file was written: data_version by other connections (a plain
    // PRAGMA; the pragma_data_version() table form re-prepares on every call), total_changes() by this one
    dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
    totalChanges: db.prepare<[], number>('SELECT total_changes()').pluck(),
    insertRevocation: db.prepare(`INSERT INTO revocations (grant_id, project_id, expires_at)
      VALUES (@grantId, @projectId, @expiresAt) ON CONFLICT (grant_id) DO NOTHING`),
    isRevoked: db.prepare<[string], { one: number }>('SELECT 1 AS one FROM revocations WHERE grant_id = ?'),
    listRevocations: db.prepare<[number], { grant_id: string; project_id: string; expires_at: number }>(
      'SELECT * FROM revocations WHERE expires_at >= ?'),
    purgeRevocations: db.prepare('DELETE FROM revocations WHERE expires_at < ?'),
    insertProjectCutoff: db.prepare(`INSERT INTO project_cutoffs (project_id, cut_at, expires_at)
      VALUES (@projectId, @cutAt, @expiresAt) ON CONFLICT (project_id) DO UPDATE
      SET cut_at = max(cut_at, excluded.cut_at), expires_at = max(expires_at, excluded.expires_at)`),
    projectCutoff: db.prepare<[string], CutoffRow>('SELECT * FROM project_cutoffs WHERE project_id = ?'),
    listProjectCutoffs: db.prepare<[number], CutoffRow>('SELECT * FROM project_cutoffs WHERE expires_at >= ?'),
    purgeProjectCutoffs: db.prepare('DELETE FROM project_cutoffs WHERE expires_at < ?'),
    upsertLiveParticipant: db.prepare(`INSERT INTO live_participants (participant_id, project_id, room_id, user_id, role,
      publish_streams, subscribe_streams, subscribe_room, joined_at, room_started_at, media_node, grants)
      VALUES (@participantId, @projectId, @roomId, @userId, @role, @publishStreams, @subscribeStreams, @subscribeRoom,
      @joinedAt, @roomStartedAt, @mediaNode, @grants) ON CONFLICT (participant_id) DO UPDATE SET
      publish_streams = excluded.publish_streams, subscribe_streams = excluded.subscribe_streams,
      subscribe_room = excluded.subscribe_room, grants = excluded.grants`),
    deleteLiveParticipant: db.prepare<[string]>('DELETE FROM live_participants WHERE participant_id = ?'),
    updateLiveParticipant: db.prepare<{ id: string; pub: string; subs: string; subRoom: number }>(`UPDATE live_participants
      SET publish_streams = @pub, subscribe_streams = @subs, subscribe_room = @subRoom WHERE participant_id = @id`),
    liveParticipant: db.prepare<[string], LiveParticipantRow>('SELECT * FROM live_participants WHERE participant_id = ?'),
    listLiveParticipants: db.prepare<{ projectId: string; roomId: string | null; seenSince: number }, LiveParticipantRow>(
      `SELECT p.* FROM live_participants p JOIN media_node_heartbeats h ON h.node_id = p.media_node
       WHERE p.project_id = @projectId AND (@roomId IS NULL OR p.room_id = @roomId) AND h.seen_at >= @seenSince
       ORDER BY p.joined_at, p.rowid`),
    heartbeatMediaNode: db.prepare<[string, number]>(`INSERT INTO media_node_heartbeats (node_id, seen_at) VALUES (?, ?)
      ON CONFLICT (node_id) DO UPDATE SET seen_at = max(seen_at, excluded.seen_at)`),
    clearNodeParticipants: db.prepare<[string]>('DELETE FROM live_participants WHERE media_node = ?'),
    clearNodeHeartbeat: db.prepare<[string]>('DELETE FROM media_node_heartbeats WHERE node_id = ?'),
    staleNodes: db.prepare<[number], string>('SELECT node_id FROM media_node_heartbeats WHERE seen_at < ?').pluck(),
    addTokenCount: db.prepare<[string, string, number]>(`INSERT INTO token_counts (project_id, day, count) VALUES (?, ?, ?)
      ON CONFLICT (project_id, day) DO UPDATE SET count = count + excluded.count`),
    listTokenCounts: db.prepare<[string, string], { project_id: string; day: string; count: number }>(
      'SELECT project_id, day, count FROM token_counts WHERE project_id = ? AND day >= ? ORDER BY day'),
    insertQuote: db.prepare(`INSERT INTO quotes (id, account_id, price_list_version, created_at, document)
      VALUES (@id, @accountId, @priceListVersion, @createdAt, @document)`),
    getQuote: db.prepare<[string, string], QuoteRow>('SELECT * FROM quotes WHERE account_id = ? AND id = ?'),
    // newest first: rowid follows insertion order (rows are never deleted)
    listQuotes: db.prepare<{ accountId: string; afterId: string | null; limit: number }, QuoteRow>(
      `SELECT * FROM quotes WHERE account_id = @accountId
       AND (@afterId IS NULL OR rowid < (SELECT rowid FROM quotes WHERE id = @afterId AND account_id = @accountId))
       ORDER BY rowid DESC LIMIT @limit`),
    insertSubscriptionRequest: db.prepare(`INSERT INTO subscription_requests (id, account_id, project_id, plan, quote_id,
      note, status, created_at, updated_at, decided_at, reason) VALUES (@id, @accountId, @projectId, @plan, @quoteId,
      @note, @status, @createdAt, @updatedAt, @decidedAt, @reason) ON CONFLICT DO NOTHING`),
    subscriptionRequestById: db.prepare<[string], SubscriptionRequestRow>('SELECT * FROM subscription_requests WHERE id = ?'),
    listSubscriptionRequests: db.prepare<{
      accountId: string | null; projectId: string | null; status: string | null; afterId: string | null; limit: number;
    }, SubscriptionRequestRow>(
      `SELECT * FROM subscription_requests
       WHERE (@accountId IS NULL OR account_id = @accountId) AND (@projectId IS NULL OR project_id = @projectId)
       AND (@status IS NULL OR status = @status)
       AND (@afterId IS NULL OR rowid < (SELECT rowid FROM subscription_requests WHERE id = @afterId))
       ORDER BY rowid DESC LIMIT @limit`),
    readKeyRing: db.prepare<[], { document: string; version: number }>('SELECT document, version FROM key_ring WHERE id = 1'),
    insertKeyRing: db.prepare<[string]>('INSERT INTO key_ring (id, document, version) VALUES (1, ?, 1) ON CONFLICT (id) DO NOTHING'),
    replaceKeyRing: db.prepare<[string, number]>('UPDATE key_ring SET document = ?, version = version + 1 WHERE id = 1 AND version = ?'),
    transitionSubscriptionRequest: db.prepare<{ id: string; status: string; at: number; reason: string | null }>(
      `UPDATE subscription_requests SET status = @status, updated_at = @at, decided_at = @at, reason = @reason
       WHERE id = @id AND status = 'pending'`),
  };

  // The token API looks its caller's credential up on every request. Rows read for it are kept
  // only while nothing has written to the file since (any table, any connection or process), so a
  // rotation, revocation or archive is seen by the very next request, as without the cache.
  const authCache = { dataVersion: -1, changes: -1, rows: new Map<string, AuthCredential>() };
  const MAX_CACHED_AUTH_CREDENTIALS = 10_000;

  const addTokenCounts = db.transaction((counts: readonly TokenCount[]): void => {
    for (const c of counts) q.addTokenCount.run(c.projectId, c.day, c.count);
  });
  const clearMediaNode = db.transaction((nodeId: string): void => {
    q.clearNodeParticipants.run(nodeId);
    q.clearNodeHeartbeat.run(nodeId);
  });
  const purgeMediaNodes = db.transaction((seenBefore: number): number => {
    const stale = q.staleNodes.all(seenBefore);
    for (const nodeId of stale) clearMediaNode(nodeId);
    return stale.length;
  });
  const liveParams = (p: LiveParticipantRecord) => ({
    ...p, publishStreams: JSON.stringify(p.publishStreams), subscribeStreams: JSON.stringify(p.subscribeStreams),
    subscribeRoom: p.subscribeRoom ? 1 : 0, grants: JSON.stringify(p.grants),
  });

  const updateProject = db.transaction((id: string, patch: ProjectPatch): ProjectRecord | undefined => {
    const row = q.projectById.get(id);
    if (!row) return undefined;
    const next: ProjectRow = {
      ...row,
      name: patch.name ?? row.name,
      archived_at: patch.archivedAt === undefined ? row.archived_at : patch.archivedAt,
      updated_at: patch.updatedAt,
    };
    db.prepare('UPDATE projects SET name = ?, archived_at = ?, updated_at = ? WHERE id = ?')
      .run(next.name, next.archived_at, next.updated_at, id);
    return toProject(next);
  });

  const updateCredential = db.transaction((appId: string, patch: CredentialPatch): CredentialRecord | undefined => {
    const row = q.credentialById.get(appId);
    if (!row) return undefined;
    const next: CredentialRow = {
      ...row,
      name: patch.name ?? row.name,
      secret_hash: patch.secretHash ?? row.secret_hash,
      scope_publisher: patch.scopes ? Number(patch.scopes.publisher) : row.scope_publisher,
      scope_subscriber: patch.scopes ? Number(patch.scopes.subscriber) : row.scope_subscriber,
      ip_allowlist: patch.ipAllowlist ? JSON.stringify(patch.ipAllowlist) : row.ip_allowlist,
      max_ttl_seconds: patch.maxTtlSeconds ?? row.max_ttl_seconds,
      rotated_at: patch.rotatedAt ?? row.rotated_at,
      revoked_at: patch.revokedAt ?? row.revoked_at,
      updated_at: patch.updatedAt,
    };
    db.prepare(`UPDATE credentials SET name = @name, secret_hash = @secret_hash, scope_publisher = @scope_publisher,
      scope_subscriber = @scope_subscriber, ip_allowlist = @ip_allowlist, max_ttl_seconds = @max_ttl_seconds,
      rotated_at = @rotated_at, revoked_at = @revoked_at, updated_at = @updated_at WHERE app_id = @app_id`).run(next);
    return toCredential(next);
  });

  return {
    ...sqliteWebhookStore(db),
    async ping() { q.ping.get(); },
    async close() { db.close(); },

    async readKeyRing() { return q.readKeyRing.get(); },
    async insertKeyRingIfAbsent(document) { return q.insertKeyRing.run(document).changes === 1; },
    async replaceKeyRing(document, expectedVersion) { return q.replaceKeyRing.run(document, expectedVersion).changes === 1; },

    async insertAccount(a) { return q.insertAccount.run(a).changes === 1; },
    async findAccountByEmail(email) { const r = q.accountByEmail.get(email); return r && toAccount(r); },
    async getAccount(id) { const r = q.accountById.get(id); return r && toAccount(r); },

    async insertSession(s) { q.insertSession.run(s); },
    async findSessionByAccessHash(h) { const r = q.sessionByAccess.get(h); return r && toSession(r); },
    async findSessionByRefreshHash(h) { const r = q.sessionByRefresh.get(h); return r && toSession(r); },
    async markSessionRotated(id) { return q.rotateSession.run(id).changes === 1; },
    async endSessionFamily(familyId) { q.endFamily.run(familyId); },

    async insertProject(p) { q.insertProject.run(p); },
    async listProjects(accountId) { return q.listProjects.all(accountId).map(toProject); },
    async getProject(accountId, id) { const r = q.getProject.get(accountId, id); return r && toProject(r); },
    async updateProject(id, patch) { return updateProject(id, patch); },
    async countProjects(accountId) { return q.countProjects.get(accountId)?.n ?? 0; },

    async insertCredential(c) {
      q.insertCredential.run({
        appId: c.appId, projectId: c.projectId, name: c.name, secretHash: c.secretHash,
        publisher: Number(c.scopes.publisher), subscriber: Number(c.scopes.subscriber),
        ipAllowlist: JSON.stringify(c.ipAllowlist), maxTtlSeconds: c.maxTtlSeconds, createdAt: c.createdAt,
        updatedAt: c.updatedAt, rotatedAt: c.rotatedAt, revokedAt: c.revokedAt,
      });
    },
    async listCredentials(projectId) { return q.listCredentials.all(projectId).map(toCredential); },
    async getCredential(projectId, appId) { const r = q.getCredential.get(projectId, appId); return r && toCredential(r); },
    async updateCredential(appId, patch) { return updateCredential(appId, patch); },
    async countCredentials(projectId) { return q.countCredentials.get(projectId)?.n ?? 0; },
    async findCredentialForAuth(appId) {
      const dataVersion = q.dataVersion.get()!;
      const changes = q.totalChanges.get()!;
      if (dataVersion !== authCache.dataVersion || changes !== authCache.changes) {
        authCache.rows.clear();
        authCache.dataVersion = dataVersion;
        authCache.changes = changes;
      }
      const cached = authCache.rows.get(appId);
      if (cached) return cached;
      const r = q.authCredential.get(appId);
      if (!r) return undefined;
      const cred = toCredential(r);
      Object.freeze(cred.scopes);
      Object.freeze(cred.ipAllowlist);
      const found: AuthCredential = Object.freeze({ ...cred, projectArchived: r.project_archived_at !== null });
      if (authCache.rows.size >= MAX_CACHED_AUTH_CREDENTIALS) authCache.rows.clear();
      authCache.rows.set(appId, found);
      return found;
    },

    async insertRevocation(r) { q.insertRevocation.run(r); },
    async isRevoked(grantId) { return q.isRevoked.get(grantId) !== undefined; },
    async listRevocations(nowSec) {
      return q.listRevocations.all(nowSec).map((r) => ({ grantId: r.grant_id, projectId: r.project_id, expiresAt: r.expires_at }));
    },
    async purgeRevocations(nowSec) { return q.purgeRevocations.run(nowSec).changes; },

    async insertProjectCutoff(c) { q.insertProjectCutoff.run(c); },
    async projectCutoff(projectId) { const r = q.projectCutoff.get(projectId); return r && toCutoff(r); },
    async listProjectCutoffs(nowSec) { return q.listProjectCutoffs.all(nowSec).map(toCutoff); },
    async purgeProjectCutoffs(nowSec) { return q.purgeProjectCutoffs.run(nowSec).changes; },

    async upsertLiveParticipant(p) { q.upsertLiveParticipant.run(liveParams(p)); },
    async deleteLiveParticipant(participantId) { q.deleteLiveParticipant.run(participantId); },
    async updateLiveParticipant(participantId, perm) {
      const changes = q.updateLiveParticipant.run({
        id: participantId, pub: JSON.stringify(perm.publishStreams), subs: JSON.stringify(perm.subscribeStreams),
        subRoom: perm.subscribeRoom ? 1 : 0,
      }).changes;
      const r = changes === 1 ? q.liveParticipant.get(participantId) : undefined;
      return r && toLiveParticipant(r);
    },
    async listLiveParticipants(projectId, roomId, seenSince) {
      return q.listLiveParticipants.all({ projectId, roomId: roomId ?? null, seenSince }).map(toLiveParticipant);
    },
    async heartbeatMediaNode(nodeId, nowSec) { q.heartbeatMediaNode.run(nodeId, nowSec); },
    async clearMediaNode(nodeId) { clearMediaNode(nodeId); },
    async purgeMediaNodes(seenBefore) { return purgeMediaNodes(seenBefore); },

    async addTokenCounts(counts) { addTokenCounts(counts); },
    async listTokenCounts(projectId, sinceDay) {
      return q.listTokenCounts.all(projectId, sinceDay).map((r) => ({ projectId: r.project_id, day: r.day, count: r.count }));
    },
    async insertQuote(quote) { q.insertQuote.run(quote); },
    async getQuote(accountId, id) { const r = q.getQuote.get(accountId, id); return r && toQuote(r); },
    async listQuotes(accountId, page) {
      return q.listQuotes.all({ accountId, afterId: page.afterId ?? null, limit: page.limit }).map(toQuote);
    },
    async insertSubscriptionRequest(request) { return q.insertSubscriptionRequest.run(request).changes === 1; },
    async getSubscriptionRequest(id, accountId) {
      const r = q.subscriptionRequestById.get(id);
      return r && (accountId === undefined || r.account_id === accountId) ? toSubscriptionRequest(r) : undefined;
    },
    async listSubscriptionRequests(filter, page) {
      return q.listSubscriptionRequests.all({
        accountId: filter.accountId ?? null, projectId: filter.projectId ?? null, status: filter.status ?? null,
        afterId: page.afterId ?? null, limit: page.limit,
      }).map(toSubscriptionRequest);
    },
    async transitionSubscriptionRequest(id, to) {
      const changed = q.transitionSubscriptionRequest.run({ id, status: to.status, at: to.at, reason: to.reason ?? null }).changes;
      const r = changed === 1 ? q.subscriptionRequestById.get(id) : undefined;
      return r && toSubscriptionRequest(r);
    },
  };
}

/**
 * Brings the file to the newest schema. The version is read and every missing step applied inside
 * one write transaction taken up front (BEGIN IMMEDIATE), so processes that start together on one
 * file migrate it once: the others wait for the lock, then find nothing left to do.
 */
function migrate(db: Database.Database): void {
  db.transaction(() => {
    const current = db.pragma('user_version', { simple: true }) as number;
    if (current > MIGRATIONS.length) {
      throw new Error(`the data file has schema version ${current}, newer than this build knows (${MIGRATIONS.length})`);
    }
    for (let version = current; version < MIGRATIONS.length; version++) db.exec(MIGRATIONS[version]!);
    if (current < MIGRATIONS.length) db.pragma(`user_version = ${MIGRATIONS.length}`);
  }).immediate();
}
