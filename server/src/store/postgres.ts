import pg from 'pg';
import type { AuthCredential, CredentialRecord, ProjectCutoffRecord } from '../customers/store.ts';
import type { Store } from './port.ts';
import type { RevocationRecord } from '../tokens/store.ts';
import {
  toLiveParticipant, type LiveParticipantRow,
  toAccount, toProject, toQuote, toSession, toSubscriptionRequest, type AccountRow, type ProjectRow, type QuoteRow,
  type SessionRow, type SubscriptionRequestRow,
} from './rows.ts';
import { POSTGRES_WEBHOOK_MIGRATION, postgresWebhookStore } from '../webhooks/postgres.ts';

/**
 * Each entry moves the schema one version forward; `schema_migrations` records the versions applied.
 * The tables are those of the SQLite store (sqlite.ts) with PostgreSQL types: timestamps are BIGINT
 * (milliseconds do not fit an INTEGER), scopes BOOLEAN, the IP allow-list JSONB. Quote documents stay
 * TEXT: they are kept exactly as shown to the customer (docs/billing.md), which JSONB would not do.
 * `seq` gives the insertion order that SQLite's rowid gives there: lists and cursors follow it.
 */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE accounts (
     id TEXT PRIMARY KEY,
     email TEXT NOT NULL UNIQUE,
     password_hash TEXT NOT NULL,
     created_at BIGINT NOT NULL
   );
   CREATE TABLE sessions (
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     family_id TEXT NOT NULL,
     access_hash TEXT NOT NULL UNIQUE,
     access_expires_at BIGINT NOT NULL,
     refresh_hash TEXT NOT NULL UNIQUE,
     refresh_expires_at BIGINT NOT NULL,
     status TEXT NOT NULL CHECK (status IN ('active','rotated','ended')),
     created_at BIGINT NOT NULL
   );
   CREATE INDEX sessions_family ON sessions(family_id);
   CREATE TABLE projects (
     seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     name TEXT NOT NULL,
     console_app_id TEXT NOT NULL UNIQUE,
     archived_at BIGINT,
     created_at BIGINT NOT NULL,
     updated_at BIGINT NOT NULL
   );
   CREATE INDEX projects_account ON projects(account_id, created_at, seq);
   CREATE TABLE credentials (
     seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
     app_id TEXT PRIMARY KEY,
     project_id TEXT NOT NULL REFERENCES projects(id),
     name TEXT NOT NULL,
     secret_hash TEXT NOT NULL,
     scope_publisher BOOLEAN NOT NULL,
     scope_subscriber BOOLEAN NOT NULL,
     ip_allowlist JSONB NOT NULL,
     max_ttl_seconds BIGINT NOT NULL,
     created_at BIGINT NOT NULL,
     updated_at BIGINT NOT NULL,
     rotated_at BIGINT,
     revoked_at BIGINT
   );
   CREATE INDEX credentials_project ON credentials(project_id, created_at, seq);
   CREATE TABLE revocations (
     grant_id TEXT PRIMARY KEY,
     project_id TEXT NOT NULL,
     expires_at BIGINT NOT NULL
   );
   CREATE INDEX revocations_expiry ON revocations(expires_at);`,
  // billing: quotes are immutable documents; at most one pending subscription request per project
  `CREATE TABLE quotes (
     seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     price_list_version TEXT NOT NULL,
     created_at BIGINT NOT NULL,
     document TEXT NOT NULL
   );
   CREATE INDEX quotes_account ON quotes(account_id, seq);
   CREATE TABLE subscription_requests (
     seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     project_id TEXT NOT NULL REFERENCES projects(id),
     plan TEXT NOT NULL,
     quote_id TEXT REFERENCES quotes(id),
     note TEXT,
     status TEXT NOT NULL CHECK (status IN ('pending','approved','rejected','cancelled')),
     created_at BIGINT NOT NULL,
     updated_at BIGINT NOT NULL,
     decided_at BIGINT,
     reason TEXT
   );
   CREATE INDEX subscription_requests_account ON subscription_requests(account_id);
   CREATE INDEX subscription_requests_project ON subscription_requests(project_id);
   CREATE UNIQUE INDEX subscription_requests_one_pending ON subscription_requests(project_id) WHERE status = 'pending';`,
  // archive cut-offs: a project's tokens issued up to its archive are refused (docs/decisions.md)
  `CREATE TABLE project_cutoffs (
     project_id TEXT PRIMARY KEY,
     cut_at BIGINT NOT NULL,
     expires_at BIGINT NOT NULL
   );
   CREATE INDEX project_cutoffs_expiry ON project_cutoffs(expires_at);`,
  // the cluster's key ring (docs/operations/configuration.md, "Keys"): one row, the keys.json document and its version
  `CREATE TABLE key_ring (
     id SMALLINT PRIMARY KEY CHECK (id = 1),
     document TEXT NOT NULL,
     version BIGINT NOT NULL
   );`,
  // participants joined on the media nodes, and when each node was last seen (docs/reference/room-api.md)
  `CREATE TABLE live_participants (
     seq BIGSERIAL,
     participant_id TEXT PRIMARY KEY,
     project_id TEXT NOT NULL,
     room_id TEXT NOT NULL,
     user_id TEXT NOT NULL,
     role TEXT NOT NULL,
     publish_streams TEXT NOT NULL,
     subscribe_streams TEXT NOT NULL,
     subscribe_room BOOLEAN NOT NULL,
     joined_at BIGINT NOT NULL,
     room_started_at BIGINT NOT NULL,
     media_node TEXT NOT NULL,
     grants TEXT NOT NULL
   );
   CREATE INDEX live_participants_project ON live_participants(project_id, room_id);
   CREATE INDEX live_participants_node ON live_participants(media_node);
   CREATE TABLE media_node_heartbeats (
     node_id TEXT PRIMARY KEY,
     seen_at BIGINT NOT NULL
   );`,
  // webhook endpoints and the outbox of their deliveries (docs/reference/webhooks.md)
  POSTGRES_WEBHOOK_MIGRATION,
  // tokens issued per project and UTC day (docs/console.md, "Usage")
  `CREATE TABLE token_counts (
     project_id TEXT NOT NULL,
     day TEXT NOT NULL,
     count BIGINT NOT NULL,
     PRIMARY KEY (project_id, day)
   );`,
];

/** The advisory lock that serialises migrations: one key for this schema in each database. */
const MIGRATION_LOCK_KEY = 0x7274_6373; // 'rtcs'
const DEFAULT_POOL_SIZE = 10;
const INT8_OID = 20;

export interface PostgresStoreOptions {
  /** Connections kept at most (default 10). */
  readonly poolSize?: number | undefined;
  /** An idle connection failed (the server restarted, the network dropped); the pool replaces it. */
  readonly onConnectionError?: ((err: Error) => void) | undefined;
}

interface CredentialRow {
  app_id: string; project_id: string; name: string; secret_hash: string; scope_publisher: boolean;
  scope_subscriber: boolean; ip_allowlist: string[]; max_ttl_seconds: number; created_at: number;
  updated_at: number; rotated_at: number | null; revoked_at: number | null;
}
interface RevocationRow { grant_id: string; project_id: string; expires_at: number }
interface CutoffRow { project_id: string; cut_at: number; expires_at: number }

const toCutoff = (r: CutoffRow): ProjectCutoffRecord => ({ projectId: r.project_id, cutAt: r.cut_at, expiresAt: r.expires_at });

const toCredential = (r: CredentialRow): CredentialRecord => ({
  appId: r.app_id, projectId: r.project_id, name: r.name, secretHash: r.secret_hash,
  scopes: { publisher: r.scope_publisher, subscriber: r.scope_subscriber },
  ipAllowlist: r.ip_allowlist, maxTtlSeconds: r.max_ttl_seconds,
  createdAt: r.created_at, updatedAt: r.updated_at, rotatedAt: r.rotated_at, revokedAt: r.revoked_at,
});

/** BIGINT columns (timestamps, counts) arrive as numbers, as the domain has them; other types as pg parses them. */
const TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => (oid === INT8_OID && format !== 'binary'
    ? (value: string) => toSafeInteger(value)
    : pg.types.getTypeParser(oid, format ?? 'text'))) as pg.CustomTypesConfig['getTypeParser'],
};

function toSafeInteger(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new RangeError('a BIGINT column holds a value beyond the safe integer range');
  return n;
}

/**
 * Opens a PostgreSQL store on `url` (postgres:// or postgresql://) and brings its schema up to date;
 * the same behaviour as the SQLite store, for several processes sharing one database
 * (docs/operations/configuration.md). `close()` ends the pool.
 */
export async function createPostgresStore(url: string, options: PostgresStoreOptions = {}): Promise<Store> {
  const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? DEFAULT_POOL_SIZE, types: TYPES });
  // without a listener, an idle connection that breaks would end the process
  pool.on('error', (err) => options.onConnectionError?.(err));
  try {
    await migrate(pool);
  } catch (err) {
    await pool.end();
    throw err;
  }

  const rows = async <R extends object>(text: string, values: readonly unknown[] = []): Promise<R[]> => {
    // PostgreSQL text cannot hold NUL, so no row matches such a key; SQLite answers "not found" for
    // it too, where PostgreSQL would fail the query (an App ID or e-mail address comes from the caller)
    if (text.startsWith('SELECT') && values.some((v) => typeof v === 'string' && v.includes('\0'))) return [];
    return (await pool.query<R>(text, [...values])).rows;
  };
  const one = async <R extends object>(text: string, values: readonly unknown[]): Promise<R | undefined> =>
    (await rows<R>(text, values))[0];
  const changed = async (text: string, values: readonly unknown[]): Promise<number> =>
    (await pool.query(text, [...values])).rowCount ?? 0;

  return {
    ...postgresWebhookStore(pool),
    async ping() { await pool.query('SELECT 1'); },
    // a second close does nothing, as with SQLite (pg's pool refuses a second end)
    async close() {
      if (!pool.ending) await pool.end();
    },

    async readKeyRing() {
      return one<{ document: string; version: number }>('SELECT document, version FROM key_ring WHERE id = $1', [1]);
    },
    // of processes starting together on an empty database, the first insert wins; the others wait
    // for its commit, insert nothing and read the winner's ring
    async insertKeyRingIfAbsent(document) {
      return await changed(`INSERT INTO key_ring (id, document, version) VALUES (1, $1, 1) ON CONFLICT (id) DO NOTHING`,
        [document]) === 1;
    },
    // compare-and-swap: of two concurrent replacements the second waits for the first's row lock,
    // then finds the version moved on and changes nothing
    async replaceKeyRing(document, expectedVersion) {
      return await changed(`UPDATE key_ring SET document = $1, version = version + 1 WHERE id = 1 AND version = $2`,
        [document, expectedVersion]) === 1;
    },

    async insertAccount(a) {
      return await changed(`INSERT INTO accounts (id, email, password_hash, created_at) VALUES ($1, $2, $3, $4)
        ON CONFLICT (email) DO NOTHING`, [a.id, a.email, a.passwordHash, a.createdAt]) === 1;
    },
    async findAccountByEmail(email) {
      const r = await one<AccountRow>('SELECT * FROM accounts WHERE email = $1', [email]);
      return r && toAccount(r);
    },
    async getAccount(id) {
      const r = await one<AccountRow>('SELECT * FROM accounts WHERE id = $1', [id]);
      return r && toAccount(r);
    },

    async insertSession(s) {
      await pool.query(`INSERT INTO sessions (id, account_id, family_id, access_hash, access_expires_at, refresh_hash,
        refresh_expires_at, status, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [s.id, s.accountId, s.familyId, s.accessHash, s.accessExpiresAt, s.refreshHash, s.refreshExpiresAt, s.status, s.createdAt]);
    },
    async findSessionByAccessHash(h) {
      const r = await one<SessionRow>('SELECT * FROM sessions WHERE access_hash = $1', [h]);
      return r && toSession(r);
    },
    async findSessionByRefreshHash(h) {
      const r = await one<SessionRow>('SELECT * FROM sessions WHERE refresh_hash = $1', [h]);
      return r && toSession(r);
    },
    // one statement: of two concurrent rotations the second waits for the first's row lock, then
    // sees the row no longer active and changes nothing
    async markSessionRotated(id) {
      return await changed(`UPDATE sessions SET status = 'rotated' WHERE id = $1 AND status = 'active'`, [id]) === 1;
    },
    async endSessionFamily(familyId) {
      await pool.query(`UPDATE sessions SET status = 'ended' WHERE family_id = $1`, [familyId]);
    },

    async insertProject(p) {
      await pool.query(`INSERT INTO projects (id, account_id, name, console_app_id, archived_at, created_at, updated_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7)`, [p.id, p.accountId, p.name, p.consoleAppId, p.archivedAt, p.createdAt, p.updatedAt]);
    },
    async listProjects(accountId) {
      return (await rows<ProjectRow>(`SELECT * FROM projects WHERE account_id = $1 ORDER BY created_at, seq`,
        [accountId])).map(toProject);
    },
    async getProject(accountId, id) {
      const r = await one<ProjectRow>(`SELECT * FROM projects WHERE account_id = $1 AND id = $2`, [accountId, id]);
      return r && toProject(r);
    },
    // one statement, so a patch never overwrites a concurrent one's other fields with values read before it
    async updateProject(id, patch) {
      const r = await one<ProjectRow>(`UPDATE projects SET name = COALESCE($2, name),
        archived_at = CASE WHEN $3::boolean THEN $4::bigint ELSE archived_at END, updated_at = $5
        WHERE id = $1 RETURNING *`,
      [id, patch.name ?? null, patch.archivedAt !== undefined, patch.archivedAt ?? null, patch.updatedAt]);
      return r && toProject(r);
    },
    async countProjects(accountId) {
      return (await one<{ n: number }>('SELECT count(*) AS n FROM projects WHERE account_id = $1', [accountId]))?.n ?? 0;
    },

    async insertCredential(c) {
      await pool.query(`INSERT INTO credentials (app_id, project_id, name, secret_hash, scope_publisher, scope_subscriber,
        ip_allowlist, max_ttl_seconds, created_at, updated_at, rotated_at, revoked_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10, $11, $12)`,
      [c.appId, c.projectId, c.name, c.secretHash, c.scopes.publisher, c.scopes.subscriber, JSON.stringify(c.ipAllowlist),
        c.maxTtlSeconds, c.createdAt, c.updatedAt, c.rotatedAt, c.revokedAt]);
    },
    async listCredentials(projectId) {
      return (await rows<CredentialRow>(
        `SELECT * FROM credentials WHERE project_id = $1 ORDER BY created_at, seq`, [projectId],
      )).map(toCredential);
    },
    async getCredential(projectId, appId) {
      const r = await one<CredentialRow>(`SELECT * FROM credentials WHERE project_id = $1 AND app_id = $2`,
        [projectId, appId]);
      return r && toCredential(r);
    },
    async updateCredential(appId, patch) {
      const r = await one<CredentialRow>(`UPDATE credentials SET name = COALESCE($2, name),
        secret_hash = COALESCE($3, secret_hash),
        scope_publisher = COALESCE($4::boolean, scope_publisher), scope_subscriber = COALESCE($5::boolean, scope_subscriber),
        ip_allowlist = COALESCE($6::jsonb, ip_allowlist), max_ttl_seconds = COALESCE($7::bigint, max_ttl_seconds),
        rotated_at = COALESCE($8::bigint, rotated_at), revoked_at = COALESCE($9::bigint, revoked_at), updated_at = $10
        WHERE app_id = $1 RETURNING *`,
      [appId, patch.name ?? null, patch.secretHash ?? null, patch.scopes?.publisher ?? null, patch.scopes?.subscriber ?? null,
        patch.ipAllowlist ? JSON.stringify(patch.ipAllowlist) : null, patch.maxTtlSeconds ?? null, patch.rotatedAt ?? null,
        patch.revokedAt ?? null, patch.updatedAt]);
      return r && toCredential(r);
    },
    // revoked credentials stay listed but no longer count toward the project's limit
    async countCredentials(projectId) {
      return (await one<{ n: number }>('SELECT count(*) AS n FROM credentials WHERE project_id = $1 AND revoked_at IS NULL',
        [projectId]))?.n ?? 0;
    },
    // read on every token request, never cached: a rotation, revocation or archive made by any
    // process is seen by the very next request (docs/reference/token-api.md)
    async findCredentialForAuth(appId) {
      const r = await one<CredentialRow & { project_archived_at: number | null }>(
        `SELECT c.*, p.archived_at AS project_archived_at
         FROM credentials c JOIN projects p ON p.id = c.project_id WHERE c.app_id = $1`, [appId]);
      if (!r) return undefined;
      const cred = toCredential(r);
      Object.freeze(cred.scopes);
      Object.freeze(cred.ipAllowlist);
      const found: AuthCredential = Object.freeze({ ...cred, projectArchived: r.project_archived_at !== null });
      return found;
    },

    async insertRevocation(r) {
      await pool.query(`INSERT INTO revocations (grant_id, project_id, expires_at) VALUES ($1, $2, $3)
        ON CONFLICT (grant_id) DO NOTHING`, [r.grantId, r.projectId, r.expiresAt]);
    },
    async isRevoked(grantId) {
      return (await one<{ one: number }>('SELECT 1 AS one FROM revocations WHERE grant_id = $1', [grantId])) !== undefined;
    },
    async listRevocations(nowSec) {
      return (await rows<RevocationRow>('SELECT grant_id, project_id, expires_at FROM revocations WHERE expires_at >= $1', [nowSec]))
        .map((r): RevocationRecord => ({ grantId: r.grant_id, projectId: r.project_id, expiresAt: r.expires_at }));
    },
    async purgeRevocations(nowSec) { return changed('DELETE FROM revocations WHERE expires_at < $1', [nowSec]); },

    async insertProjectCutoff(c) {
      await pool.query(`INSERT INTO project_cutoffs (project_id, cut_at, expires_at) VALUES ($1, $2, $3)
        ON CONFLICT (project_id) DO UPDATE SET cut_at = GREATEST(project_cutoffs.cut_at, EXCLUDED.cut_at),
        expires_at = GREATEST(project_cutoffs.expires_at, EXCLUDED.expires_at)`, [c.projectId, c.cutAt, c.expiresAt]);
    },
    async projectCutoff(projectId) {
      const r = await one<CutoffRow>('SELECT project_id, cut_at, expires_at FROM project_cutoffs WHERE project_id = $1', [projectId]);
      return r && toCutoff(r);
    },
    async listProjectCutoffs(nowSec) {
      return (await rows<CutoffRow>('SELECT project_id, cut_at, expires_at FROM project_cutoffs WHERE expires_at >= $1', [nowSec]))
        .map(toCutoff);
    },
    async purgeProjectCutoffs(nowSec) { return changed('DELETE FROM project_cutoffs WHERE expires_at < $1', [nowSec]); },

    async upsertLiveParticipant(p) {
      await pool.query(`INSERT INTO live_participants (participant_id, project_id, room_id, user_id, role, publish_streams,
        subscribe_streams, subscribe_room, joined_at, room_started_at, media_node, grants)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT (participant_id) DO UPDATE SET
        publish_streams = EXCLUDED.publish_streams, subscribe_streams = EXCLUDED.subscribe_streams,
        subscribe_room = EXCLUDED.subscribe_room, grants = EXCLUDED.grants`,
      [p.participantId, p.projectId, p.roomId, p.userId, p.role, JSON.stringify(p.publishStreams),
        JSON.stringify(p.subscribeStreams), p.subscribeRoom, p.joinedAt, p.roomStartedAt, p.mediaNode, JSON.stringify(p.grants)]);
    },
    async deleteLiveParticipant(participantId) {
      await pool.query('DELETE FROM live_participants WHERE participant_id = $1', [participantId]);
    },
    async updateLiveParticipant(participantId, perm) {
      const r = await one<LiveParticipantRow>(`UPDATE live_participants SET publish_streams = $2, subscribe_streams = $3,
        subscribe_room = $4 WHERE participant_id = $1 RETURNING *`,
      [participantId, JSON.stringify(perm.publishStreams), JSON.stringify(perm.subscribeStreams), perm.subscribeRoom]);
      return r && toLiveParticipant(r);
    },
    async listLiveParticipants(projectId, roomId, seenSince) {
      return (await rows<LiveParticipantRow>(`SELECT p.* FROM live_participants p
        JOIN media_node_heartbeats h ON h.node_id = p.media_node
        WHERE p.project_id = $1 AND ($2::text IS NULL OR p.room_id = $2) AND h.seen_at >= $3
        ORDER BY p.joined_at, p.seq`, [projectId, roomId ?? null, seenSince])).map(toLiveParticipant);
    },
    async heartbeatMediaNode(nodeId, nowSec) {
      await pool.query(`INSERT INTO media_node_heartbeats (node_id, seen_at) VALUES ($1, $2) ON CONFLICT (node_id)
        DO UPDATE SET seen_at = GREATEST(media_node_heartbeats.seen_at, EXCLUDED.seen_at)`, [nodeId, nowSec]);
    },
    async clearMediaNode(nodeId) {
      await pool.query(`WITH gone AS (DELETE FROM live_participants WHERE media_node = $1)
        DELETE FROM media_node_heartbeats WHERE node_id = $1`, [nodeId]);
    },
    async purgeMediaNodes(seenBefore) {
      const stale = await rows<{ node_id: string }>(`WITH stale AS (DELETE FROM media_node_heartbeats WHERE seen_at < $1 RETURNING node_id),
        gone AS (DELETE FROM live_participants WHERE media_node IN (SELECT node_id FROM stale)) SELECT node_id FROM stale`, [seenBefore]);
      return stale.length;
    },

    async addTokenCounts(counts) {
      if (counts.length === 0) return;
      // one statement: the rows of a batch are added together or not at all
      await pool.query(`INSERT INTO token_counts (project_id, day, count)
        SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
        ON CONFLICT (project_id, day) DO UPDATE SET count = token_counts.count + excluded.count`,
      [counts.map((c) => c.projectId), counts.map((c) => c.day), counts.map((c) => c.count)]);
    },
    async listTokenCounts(projectId, sinceDay) {
      return (await rows<{ project_id: string; day: string; count: string }>(
        'SELECT project_id, day, count FROM token_counts WHERE project_id = $1 AND day >= $2 ORDER BY day', [projectId, sinceDay],
      )).map((r) => ({ projectId: r.project_id, day: r.day, count: Number(r.count) }));
    },
    async insertQuote(q) {
      await pool.query(`INSERT INTO quotes (id, account_id, price_list_version, created_at, document) VALUES ($1, $2, $3, $4, $5)`,
        [q.id, q.accountId, q.priceListVersion, q.createdAt, q.document]);
    },
    async getQuote(accountId, id) {
      const r = await one<QuoteRow>(`SELECT * FROM quotes WHERE account_id = $1 AND id = $2`, [accountId, id]);
      return r && toQuote(r);
    },
    // newest first; an `afterId` that is not one of the account's quotes gives an empty page, as with SQLite
    async listQuotes(accountId, page) {
      return (await rows<QuoteRow>(`SELECT * FROM quotes WHERE account_id = $1
        AND ($2::text IS NULL OR seq < (SELECT seq FROM quotes WHERE id = $2 AND account_id = $1))
        ORDER BY seq DESC LIMIT $3`, [accountId, page.afterId ?? null, page.limit])).map(toQuote);
    },

    // any uniqueness conflict (the id, or a second pending request of the project) answers false
    async insertSubscriptionRequest(s) {
      return await changed(`INSERT INTO subscription_requests (id, account_id, project_id, plan, quote_id, note, status,
        created_at, updated_at, decided_at, reason) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT DO NOTHING`,
      [s.id, s.accountId, s.projectId, s.plan, s.quoteId, s.note, s.status, s.createdAt, s.updatedAt, s.decidedAt, s.reason]) === 1;
    },
    async getSubscriptionRequest(id, accountId) {
      const r = await one<SubscriptionRequestRow>(`SELECT * FROM subscription_requests
        WHERE id = $1 AND ($2::text IS NULL OR account_id = $2)`, [id, accountId ?? null]);
      return r && toSubscriptionRequest(r);
    },
    async listSubscriptionRequests(filter, page) {
      return (await rows<SubscriptionRequestRow>(`SELECT * FROM subscription_requests
        WHERE ($1::text IS NULL OR account_id = $1) AND ($2::text IS NULL OR project_id = $2) AND ($3::text IS NULL OR status = $3)
        AND ($4::text IS NULL OR seq < (SELECT seq FROM subscription_requests WHERE id = $4))
        ORDER BY seq DESC LIMIT $5`,
      [filter.accountId ?? null, filter.projectId ?? null, filter.status ?? null, page.afterId ?? null, page.limit]))
        .map(toSubscriptionRequest);
    },
    // one statement: of two concurrent decisions only the first finds the request pending
    async transitionSubscriptionRequest(id, to) {
      const r = await one<SubscriptionRequestRow>(`UPDATE subscription_requests
        SET status = $2, updated_at = $3, decided_at = $3, reason = $4
        WHERE id = $1 AND status = 'pending' RETURNING *`,
      [id, to.status, to.at, to.reason ?? null]);
      return r && toSubscriptionRequest(r);
    },
  };
}

/**
 * Brings the database to the newest schema in one transaction that first takes a transaction-level
 * advisory lock: processes that start together on one database migrate it once, the others wait
 * for the lock, then find nothing left to do. A failed step rolls every step of this run back.
 */
async function migrate(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)`);
    const current = (await client.query<{ v: number }>('SELECT COALESCE(max(version), 0)::int AS v FROM schema_migrations'))
      .rows[0]?.v ?? 0;
    if (current > MIGRATIONS.length) {
      throw new Error(`the database has schema version ${current}, newer than this build knows (${MIGRATIONS.length})`);
    }
    for (let version = current; version < MIGRATIONS.length; version++) {
      await client.query(MIGRATIONS[version]!);
      await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [version + 1, Date.now()]);
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
