import type { Migration } from '../sql/dialect.ts';

/** Participants joined on the media nodes, and when each node was last seen (docs/reference/room-api.md). */
export const LIVE_PARTICIPANTS: Migration = {
  sql: (d) => `CREATE TABLE live_participants (
     ${d.serialSeqColumn}
     participant_id TEXT PRIMARY KEY,
     project_id TEXT NOT NULL,
     room_id TEXT NOT NULL,
     user_id TEXT NOT NULL,
     role TEXT NOT NULL,
     publish_streams TEXT NOT NULL,
     subscribe_streams TEXT NOT NULL,
     subscribe_room ${d.boolean} NOT NULL,
     joined_at ${d.bigint} NOT NULL,
     room_started_at ${d.bigint} NOT NULL,
     media_node TEXT NOT NULL,
     grants TEXT NOT NULL
   );
   CREATE INDEX live_participants_project ON live_participants(project_id, room_id);
   CREATE INDEX live_participants_node ON live_participants(media_node);
   CREATE TABLE media_node_heartbeats (
     node_id TEXT PRIMARY KEY,
     seen_at ${d.bigint} NOT NULL
   );`,
};

/** Cut-offs of removed participants and ended rooms (docs/reference/room-api.md); user_id '' stands for every user. */
export const ROOM_CUTOFFS: Migration = {
  sql: (d) => `CREATE TABLE room_cutoffs (
     project_id TEXT NOT NULL,
     room_id TEXT NOT NULL,
     user_id TEXT NOT NULL,
     cut_at ${d.bigint} NOT NULL,
     expires_at ${d.bigint} NOT NULL,
     PRIMARY KEY (project_id, room_id, user_id)
   );
   CREATE INDEX room_cutoffs_expiry ON room_cutoffs(expires_at);`,
};

/**
 * Metadata and attributes of live participants, and the settings of rooms created or configured
 * through the room service API (docs/reference/room-api.md, "Metadata and attributes", "Room settings").
 */
export const ROOM_SETTINGS: Migration = {
  sql: (d) => `ALTER TABLE live_participants ADD COLUMN metadata TEXT NOT NULL DEFAULT '';
   ALTER TABLE live_participants ADD COLUMN attributes TEXT NOT NULL DEFAULT '{}';
   CREATE TABLE room_settings (
     project_id TEXT NOT NULL,
     room_id TEXT NOT NULL,
     metadata TEXT NOT NULL,
     max_participants INTEGER NOT NULL,
     empty_timeout INTEGER NOT NULL,
     created_at ${d.bigint} NOT NULL,
     emptied_at ${d.bigint},
     PRIMARY KEY (project_id, room_id)
   );`,
};

/** What each live participant publishes (docs/reference/room-api.md, "Published streams"): JSON, as its media node records it. */
export const PUBLISHED_STREAMS: Migration = {
  sql: () => `ALTER TABLE live_participants ADD COLUMN streams TEXT NOT NULL DEFAULT '[]';`,
};

/**
 * Each live participant's media quality (docs/reference/room-api.md, "Quality"): JSON, as its media
 * node measures it; NULL until then.
 */
export const PARTICIPANT_QUALITY: Migration = {
  sql: () => 'ALTER TABLE live_participants ADD COLUMN quality TEXT;',
};

/**
 * When a stored room first had somebody in it: rooms created ahead that nobody joined yet are capped
 * per project (docs/reference/room-api.md, "Limits"); a room stored earlier counts as started unless
 * it never emptied since its creation.
 */
export const ROOM_STARTED_AT: Migration = {
  sql: (d) => `ALTER TABLE room_settings ADD COLUMN started_at ${d.bigint};
   UPDATE room_settings SET started_at = created_at WHERE emptied_at IS NULL OR emptied_at <> created_at;`,
};

/**
 * Permissions set through the room service API on the grants a participant used, until each expires
 * (docs/reference/room-api.md, "Changing permissions"): a reconnection with one of them gets them back.
 */
export const GRANT_PERMISSIONS: Migration = {
  sql: (d) => `CREATE TABLE grant_permissions (
     grant_id TEXT PRIMARY KEY,
     project_id TEXT NOT NULL,
     publish_streams TEXT NOT NULL,
     subscribe_streams TEXT NOT NULL,
     subscribe_room ${d.boolean} NOT NULL,
     expires_at ${d.bigint} NOT NULL
   );
   CREATE INDEX grant_permissions_expiry ON grant_permissions(expires_at);`,
};

/**
 * When the room service made each change (ms): of a session's permissions and those stored on a
 * grant it renews with, the newest win (docs/decisions.md, "The newest permission change wins").
 */
export const PERMISSION_SET_AT: Migration = {
  sql: (d) => `ALTER TABLE grant_permissions ADD COLUMN set_at ${d.bigint} NOT NULL DEFAULT 0;`,
};

/**
 * The media nodes each room is open on (docs/operations/scale-out.md, "Rooms across media nodes"): a
 * room that spans nodes starts when the first opens it and finishes when the last closes it, agreed
 * here once.
 */
export const ROOM_NODES: Migration = {
  sql: () => `CREATE TABLE room_nodes (
     project_id TEXT NOT NULL,
     room_id TEXT NOT NULL,
     node_id TEXT NOT NULL,
     PRIMARY KEY (project_id, room_id, node_id)
   );
   CREATE INDEX room_nodes_node ON room_nodes(node_id);`,
};
