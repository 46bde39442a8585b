import { BILLING_TABLES } from '../billing/tables.ts';
import { BUS_EVENTS } from '../bus/tables.ts';
import { CUSTOMER_TABLES, PROJECT_CUTOFFS } from '../customers/tables.ts';
import { KEY_RING } from '../keys/tables.ts';
import {
  GRANT_PERMISSIONS, LIVE_PARTICIPANTS, PARTICIPANT_QUALITY, PERMISSION_SET_AT, PUBLISHED_STREAMS, ROOM_CUTOFFS, ROOM_SETTINGS,
  ROOM_NODES, ROOM_STARTED_AT,
} from '../rooms/tables.ts';
import { MEDIA_SESSIONS, SESSION_USAGE } from '../sessions/tables.ts';
import { MEDIA_NODE_DIRECTORY } from '../placement/tables.ts';
import { POSTGRES, SQLITE, type DialectName, type Migration } from '../sql/dialect.ts';
import { REDEEMED_INVITATIONS, REVOCATIONS, TOKEN_COUNTS } from '../tokens/tables.ts';
import { WEBHOOK_TABLES } from '../webhooks/tables.ts';

/**
 * The schema history of the one database every module's adapter shares: each module declares its
 * tables in its own tables.ts, and this list says which step runs when. Each entry moves the schema
 * one version forward; an entry only for the other database is no version there (the SQLite bus's
 * table), so the same step has a different number on each. Entries are only ever appended: a
 * database records the number of the last one it ran.
 */
const HISTORY: readonly (readonly Migration[])[] = [
  [CUSTOMER_TABLES, REVOCATIONS],
  [BILLING_TABLES],
  [BUS_EVENTS],
  [PROJECT_CUTOFFS],
  [KEY_RING],
  [LIVE_PARTICIPANTS],
  [WEBHOOK_TABLES],
  [TOKEN_COUNTS],
  [ROOM_CUTOFFS],
  [ROOM_SETTINGS],
  [MEDIA_SESSIONS],
  [PUBLISHED_STREAMS],
  [SESSION_USAGE],
  [PARTICIPANT_QUALITY],
  [REDEEMED_INVITATIONS],
  [ROOM_STARTED_AT],
  [GRANT_PERMISSIONS],
  [PERMISSION_SET_AT],
  [MEDIA_NODE_DIRECTORY],
  [ROOM_NODES],
];

/** The SQL of every schema version on one database, oldest first: version n is the entry at n - 1. */
export function migrationsFor(name: DialectName): string[] {
  const dialect = name === 'sqlite' ? SQLITE : POSTGRES;
  return HISTORY
    .map((steps) => steps.filter((s) => s.only === undefined || s.only === name))
    .filter((steps) => steps.length > 0)
    .map((steps) => steps.map((s) => s.sql(dialect)).join('\n   '));
}
