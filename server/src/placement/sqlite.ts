import Database from 'better-sqlite3';
import { ApiError } from '../core/errors.ts';
import {
  choosePlacement, DEFAULT_MAX_SESSIONS, placementUserKey, rendezvousOrder, RESERVATION_MS,
  type MediaNode, type MediaNodeDirectory, type PlacementPolicy,
} from '../core/media-placement.ts';

export interface SqliteMediaNodeDirectoryOptions extends Partial<PlacementPolicy> {
  /** Milliseconds since the epoch (tests move it). */
  readonly nowMs?: () => number;
}

/** As in Redis (redis/media-nodes.ts): live for 6 s after an announcement, announced every 2 s. */
const NODE_LIVENESS_MS = 6000;
const ANNOUNCE_INTERVAL_MS = 2000;
const REFRESH_INTERVAL_MS = 1000;
const PLACEMENT_MARGIN_MS = 60_000;
/** Nodes silent this long leave the tables. */
const FORGET_MS = 60_000;

interface NodeRow { node_id: string; host: string; port: number }

const noMediaNode = (): ApiError =>
  new ApiError('unavailable', 'no media node is available right now; retry shortly', { retryAfterSec: 1 });

/**
 * The media nodes of the processes that share one data directory (`rtc serve` with
 * `RTC_MEDIA_WORKERS`, docs/operations/scale-out.md, "Every core of one machine"): the same
 * announcements and the same placement rule as the Redis directory, in the store's SQLite file.
 * Each placement is one `BEGIN IMMEDIATE` transaction: it reads the live nodes, the room's nodes,
 * the loads and the user's node, and records its answer before another process can place.
 */
export function createSqliteMediaNodeDirectory(path: string, options: SqliteMediaNodeDirectoryOptions = {}): MediaNodeDirectory & { refresh(): void } {
  const db = new Database(path);
  db.pragma('busy_timeout = 5000');
  const nowMs = options.nowMs ?? Date.now;
  const policy: PlacementPolicy = { capacity: options.capacity ?? DEFAULT_MAX_SESSIONS, spill: options.spill ?? false };
  const liveNodes = db.prepare<[number], NodeRow>('SELECT node_id, host, port FROM placement_nodes WHERE live_until > ?');
  const roomNodes = db.prepare<[string, number, number], { node_id: string }>(
    `SELECT r.node_id FROM placement_rooms r JOIN placement_nodes n ON n.node_id = r.node_id
      WHERE r.room_key = ? AND r.expires_at > ? AND n.live_until > ? ORDER BY r.node_id`);
  const userLive = db.prepare<[string, string], { one: number }>('SELECT 1 AS one FROM placement_users WHERE node_id = ? AND user_key = ?');
  const userReserved = db.prepare<[string, string, number], { one: number }>(
    'SELECT 1 AS one FROM placement_reservations WHERE node_id = ? AND user_key = ? AND expires_at > ?');
  const loadOf = db.prepare<[number, string], { load: number }>(
    `SELECT n.sessions + (SELECT COUNT(*) FROM placement_reservations r WHERE r.node_id = n.node_id AND r.expires_at > ?) AS load
       FROM placement_nodes n WHERE n.node_id = ?`);
  const reserve = db.prepare<[string, string, number]>(
    `INSERT INTO placement_reservations (node_id, user_key, expires_at) VALUES (?, ?, ?)
     ON CONFLICT (node_id, user_key) DO UPDATE SET expires_at = excluded.expires_at`);
  const keepRoom = db.prepare<[string, string, number]>(
    `INSERT INTO placement_rooms (room_key, node_id, expires_at) VALUES (?, ?, ?)
     ON CONFLICT (room_key, node_id) DO UPDATE SET expires_at = MAX(expires_at, excluded.expires_at)`);
  const upsertNode = db.prepare<[string, string, number, number, number]>(
    `INSERT INTO placement_nodes (node_id, host, port, live_until, sessions) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (node_id) DO UPDATE SET host = excluded.host, port = excluded.port, live_until = excluded.live_until, sessions = excluded.sessions`);
  const clearUsers = db.prepare<[string]>('DELETE FROM placement_users WHERE node_id = ?');
  const addUser = db.prepare<[string, string]>('INSERT OR IGNORE INTO placement_users (node_id, user_key) VALUES (?, ?)');
  const joined = db.prepare<[string, string]>('DELETE FROM placement_reservations WHERE node_id = ? AND user_key = ?');
  const deleteNode = db.prepare<[string]>('DELETE FROM placement_nodes WHERE node_id = ?');
  const clearReservations = db.prepare<[string]>('DELETE FROM placement_reservations WHERE node_id = ?');
  const purge = [
    db.prepare<[number]>('DELETE FROM placement_reservations WHERE expires_at <= ?'),
    db.prepare<[number]>('DELETE FROM placement_rooms WHERE expires_at <= ?'),
  ];
  const forgotten = db.prepare<[number], { node_id: string }>('SELECT node_id FROM placement_nodes WHERE live_until <= ?');

  let live: readonly MediaNode[] = [];
  let overCapacity = 0;
  const refresh = (): void => {
    live = liveNodes.all(nowMs()).map((r) => ({ id: r.node_id, host: r.host, port: r.port }));
  };
  const timer = setInterval(() => {
    try {
      refresh();
    } catch {
      // the last list stays; placement reads the nodes in its own transaction
    }
  }, REFRESH_INTERVAL_MS);
  timer.unref();

  const placeNow = db.transaction((projectId: string, roomId: string, userId: string, ttlSeconds: number): MediaNode | undefined => {
    const now = nowMs();
    const nodes = liveNodes.all(now).map((r) => ({ id: r.node_id, host: r.host, port: r.port }));
    const roomKey = `${projectId}\n${roomId}`;
    const user = placementUserKey(projectId, roomId, userId);
    const inRoom = roomNodes.all(roomKey, now, now).map((r) => r.node_id);
    const liveOn = inRoom.find((id) => userLive.get(id, user) !== undefined);
    const reservedOn = liveOn === undefined ? inRoom.find((id) => userReserved.get(id, user, now) !== undefined) : undefined;
    const choice = choosePlacement({
      roomNodes: inRoom,
      userNode: liveOn !== undefined ? { id: liveOn, live: true } : reservedOn !== undefined ? { id: reservedOn, live: false } : undefined,
      candidates: rendezvousOrder(nodes, projectId, roomId).map((n) => n.id),
      load: (id) => loadOf.get(now, id)?.load ?? 0,
    }, policy);
    if (!choice) return undefined;
    if (choice.reserve) reserve.run(choice.nodeId, user, now + RESERVATION_MS);
    keepRoom.run(roomKey, choice.nodeId, now + ttlSeconds * 1000 + PLACEMENT_MARGIN_MS);
    if (choice.overCapacity) overCapacity += 1;
    return nodes.find((n) => n.id === choice.nodeId);
  });

  const announceNow = db.transaction((node: MediaNode, sessions: number, users: readonly string[]) => {
    const now = nowMs();
    upsertNode.run(node.id, node.host, node.port, now + NODE_LIVENESS_MS, sessions);
    clearUsers.run(node.id);
    for (const user of users) {
      addUser.run(node.id, user);
      joined.run(node.id, user);
    }
    for (const p of purge) p.run(now);
    for (const { node_id } of forgotten.all(now - FORGET_MS)) withdrawNow(node_id);
  });
  const withdrawNow = (nodeId: string): void => {
    deleteNode.run(nodeId);
    clearUsers.run(nodeId);
    clearReservations.run(nodeId);
  };

  return {
    async place(projectId, roomId, userId, ttlSeconds) {
      let placed: MediaNode | undefined;
      try {
        placed = placeNow.immediate(projectId, roomId, userId, ttlSeconds);
      } catch (cause) {
        throw new ApiError('unavailable', 'the media node directory is unreachable; retry shortly', { retryAfterSec: 1, cause });
      }
      if (!placed) throw noMediaNode();
      return placed;
    },
    nodes: () => live,
    overCapacityPlacements: () => overCapacity,
    refresh,
    async announce(node, onError, load) {
      const beat = (): void => {
        try {
          const { sessions, users } = load?.() ?? { sessions: 0, users: [] };
          announceNow.immediate(node, sessions, users);
        } catch (err) {
          onError(err);
        }
      };
      beat();
      const heartbeat = setInterval(beat, ANNOUNCE_INTERVAL_MS);
      heartbeat.unref();
      return async () => {
        clearInterval(heartbeat);
        try {
          db.transaction(withdrawNow).immediate(node.id);
        } catch (err) {
          onError(err);
        }
      };
    },
    close() {
      clearInterval(timer);
      db.close();
    },
  };
}
