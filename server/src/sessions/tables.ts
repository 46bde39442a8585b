import type { Migration } from '../sql/dialect.ts';

/** Every media session from join to leave, for the session history and participant minutes (docs/console.md, "Session history"). */
export const MEDIA_SESSIONS: Migration = {
  sql: (d) => `CREATE TABLE media_sessions (
     seq ${d.serialKey},
     participant_id TEXT NOT NULL UNIQUE,
     project_id TEXT NOT NULL,
     room_id TEXT NOT NULL,
     user_id TEXT NOT NULL,
     role TEXT NOT NULL,
     media_node TEXT,
     joined_at ${d.bigint} NOT NULL,
     left_at ${d.bigint},
     reason TEXT
   );
   CREATE INDEX media_sessions_project ON media_sessions(project_id, seq);
   CREATE INDEX media_sessions_room ON media_sessions(project_id, room_id, seq);
   CREATE INDEX media_sessions_joined ON media_sessions(project_id, joined_at);
   CREATE INDEX media_sessions_open ON media_sessions(media_node) WHERE left_at IS NULL;
   CREATE INDEX media_sessions_left ON media_sessions(left_at);`,
};

/** The usage kind of each session, set at its leave, for the cost of participant minutes (docs/console.md, "Usage"). */
export const SESSION_USAGE: Migration = {
  sql: (d) => `ALTER TABLE media_sessions ADD COLUMN usage_kind TEXT;
   ALTER TABLE media_sessions ADD COLUMN relayed ${d.boolean} NOT NULL DEFAULT ${d.false};`,
};
