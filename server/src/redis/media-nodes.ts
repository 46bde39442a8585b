import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { ApiError } from '../core/errors.ts';
import {
  DEFAULT_MAX_SESSIONS, placementUserKey, rendezvousOrder, RESERVATION_MS, type MediaNode, type MediaNodeDirectory, type PlacementPolicy,
} from '../core/media-placement.ts';

export interface MediaNodeDirectoryOptions extends Partial<PlacementPolicy> {
  readonly keyPrefix?: string;
  /** Milliseconds since the epoch (tests move it). */
  readonly nowMs?: () => number;
}

/** A node that has not announced itself for this long is not live: it receives no new rooms. */
export const NODE_LIVENESS_MS = 6000;
const ANNOUNCE_INTERVAL_MS = 2000;
const REFRESH_INTERVAL_MS = 1000;
/** A room's placement outlives its newest grant by this much (renewals extend it). */
const PLACEMENT_MARGIN_SECONDS = 60;

/** Placements tried per token: a candidate found gone in Redis makes the token node re-read the live nodes and try again. */
const PLACE_ATTEMPTS = 3;

// The rule of choosePlacement (core/media-placement.ts), in one atomic step. KEYS[1] the room's
// nodes (a sorted set scored by when the room's placement there ends), KEYS[2] the live nodes,
// KEYS[3] each node's reported sessions. ARGV: key prefix, user key, now (ms), the placement's
// lifetime (ms), capacity, spill (1/0), reservation lifetime (ms), then the live nodes in the room's
// rendezvous order as the token node last read them. A node's reservations (`<prefix>:res:<node>`,
// user keys scored by expiry) and its users with a live session (`<prefix>:live:<node>`, set by its
// announcement) are named from the prefix: one Redis, not a Redis Cluster (scale-out.md).
// Returns {node, over capacity 1/0}, or nil when no node of the list is live any more (the
// token node re-reads the list and asks again).
const PLACE_SCRIPT = `
local prefix, user, now, room_ms, cap, spill, res_ms = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6] == '1', tonumber(ARGV[7])
if redis.call('TYPE', KEYS[1]).ok == 'string' then
  local old = redis.call('GET', KEYS[1])
  redis.call('DEL', KEYS[1])
  redis.call('ZADD', KEYS[1], now + room_ms, old)
end
local function live(m)
  local s = redis.call('ZSCORE', KEYS[2], m)
  return s and tonumber(s) > now
end
local loads = {}
local function load(m)
  if loads[m] == nil then
    local r = prefix .. ':res:' .. m
    redis.call('ZREMRANGEBYSCORE', r, '-inf', now)
    loads[m] = (tonumber(redis.call('HGET', KEYS[3], m)) or 0) + redis.call('ZCARD', r)
  end
  return loads[m]
end
local function settle(m, reserve, over)
  local current = redis.call('ZSCORE', KEYS[1], m)
  if not current or tonumber(current) < now + room_ms then redis.call('ZADD', KEYS[1], now + room_ms, m) end
  if redis.call('PTTL', KEYS[1]) < room_ms then redis.call('PEXPIRE', KEYS[1], room_ms) end
  if reserve then
    local r = prefix .. ':res:' .. m
    redis.call('ZADD', r, now + res_ms, user)
    redis.call('PEXPIRE', r, res_ms)
  end
  return {m, over and 1 or 0}
end
local function least(list, room_only)
  local best
  for _, m in ipairs(list) do
    if (not room_only or load(m) < cap) and (best == nil or load(m) < load(best)) then best = m end
  end
  return best
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local room = {}
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if live(m) then
    if redis.call('SISMEMBER', prefix .. ':live:' .. m, user) == 1 then return settle(m, false, false) end
    local reserved = redis.call('ZSCORE', prefix .. ':res:' .. m, user)
    if reserved and tonumber(reserved) > now then return settle(m, true, false) end
    room[#room + 1] = m
  end
end
local open = least(room, true)
if open then return settle(open, true, false) end
if #room > 0 and not spill then return settle(least(room, false), true, true) end
local candidates = {}
for i = 8, #ARGV do
  if live(ARGV[i]) then
    if load(ARGV[i]) < cap then return settle(ARGV[i], true, false) end
    candidates[#candidates + 1] = ARGV[i]
  end
end
for _, m in ipairs(candidates) do room[#room + 1] = m end
local fallback = least(room, false)
if fallback then return settle(fallback, true, true) end
return false
`;

// A node's announcement: KEYS[1] the live nodes, KEYS[2] the reported sessions. ARGV: the node,
// live until (ms), its joined sessions, now (ms), key prefix, then its users with a live session:
// they replace the node's set, and their reservations there end (they joined).
const ANNOUNCE_SCRIPT = `
local node, prefix = ARGV[1], ARGV[5]
redis.call('ZADD', KEYS[1], ARGV[2], node)
redis.call('HSET', KEYS[2], node, ARGV[3])
local live, res = prefix .. ':live:' .. node, prefix .. ':res:' .. node
redis.call('DEL', live)
for i = 6, #ARGV do
  redis.call('SADD', live, ARGV[i])
  redis.call('ZREM', res, ARGV[i])
end
redis.call('PEXPIRE', live, 60000)
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[4]) - 60000)
for _, m in ipairs(gone) do
  redis.call('HDEL', KEYS[2], m)
  redis.call('ZREM', KEYS[1], m)
end
return 1
`;

// A node's withdrawal: KEYS as the announcement's; ARGV the node and the key prefix.
const WITHDRAW_SCRIPT = `
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('DEL', ARGV[2] .. ':live:' .. ARGV[1], ARGV[2] .. ':res:' .. ARGV[1])
return 1
`;

/** Runs a script by its digest, sending its text only when Redis does not have it yet. */
async function runScript(client: Redis, script: string, keys: number, args: (string | number)[]): Promise<unknown> {
  const sha = createHash('sha1').update(script).digest('hex');
  try {
    return await client.evalsha(sha, keys, ...args);
  } catch (err) {
    if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
    return await client.eval(script, keys, ...args);
  }
}

const encode = (node: MediaNode): string => JSON.stringify([node.id, node.host, node.port]);

function decode(member: string): MediaNode | undefined {
  try {
    const [id, host, port] = JSON.parse(member) as unknown[];
    if (typeof id === 'string' && typeof host === 'string' && typeof port === 'number') return { id, host, port };
  } catch {
    // not ours: ignored
  }
  return undefined;
}

const noMediaNode = (): ApiError =>
  new ApiError('unavailable', 'no media node is available right now; retry shortly', { retryAfterSec: 1 });

/**
 * The media nodes of a cluster, in Redis (docs/operations/scale-out.md, "Media nodes"): each media
 * node announces itself every two seconds in a sorted set scored by when it stops counting as live,
 * with its joined sessions and their users; a room's placement is a sorted set of its nodes, kept
 * while those nodes are live and the room's grants last. Liveness is checked in Redis at each
 * placement, not in the list read once a second: a node withdrawn (a drain) receives no room from
 * the moment the withdrawal is answered, a killed one none from `NODE_LIVENESS_MS` after its last
 * announcement. Capacity and reservations: choosePlacement (core/media-placement.ts).
 */
export function createRedisMediaNodeDirectory(
  client: Redis, options: MediaNodeDirectoryOptions = {},
): MediaNodeDirectory & { refresh(): Promise<void> } {
  const prefix = options.keyPrefix ?? 'rtc:media';
  const nodesKey = `${prefix}:nodes`;
  const loadKey = `${prefix}:load`;
  const nowMs = options.nowMs ?? Date.now;
  const capacity = options.capacity ?? DEFAULT_MAX_SESSIONS;
  const spill = options.spill ?? false;
  let live: readonly MediaNode[] = [];
  let loaded: Promise<void> | undefined;
  let overCapacity = 0;

  const refresh = async (): Promise<void> => {
    const members = await client.zrangebyscore(nodesKey, nowMs(), '+inf');
    live = members.map(decode).filter((n): n is MediaNode => n !== undefined);
  };
  // a failed refresh keeps the last list: placement itself checks liveness in Redis
  const timer = setInterval(() => void refresh().catch(() => {}), REFRESH_INTERVAL_MS);
  timer.unref();

  return {
    async place(projectId, roomId, userId, ttlSeconds) {
      if (live.length === 0) {
        loaded ??= refresh().finally(() => {
          loaded = undefined;
        });
        await loaded.catch(() => {});
      }
      const roomKey = `${prefix}:room:${projectId}:${roomId}`;
      const user = placementUserKey(projectId, roomId, userId);
      for (let attempt = 1; attempt <= PLACE_ATTEMPTS; attempt++) {
        if (live.length === 0) throw noMediaNode();
        const order = rendezvousOrder(live, projectId, roomId).map(encode);
        let placed: unknown;
        try {
          placed = await runScript(client, PLACE_SCRIPT, 3, [roomKey, nodesKey, loadKey, prefix, user, nowMs(),
            (ttlSeconds + PLACEMENT_MARGIN_SECONDS) * 1000, capacity, spill ? 1 : 0, RESERVATION_MS, ...order]);
        } catch (cause) {
          // Redis unreachable: refused like the limits, never a placement other nodes would not see
          throw new ApiError('unavailable', 'the media node directory is unreachable; retry shortly', { retryAfterSec: 1, cause });
        }
        if (Array.isArray(placed) && typeof placed[0] === 'string') {
          const node = decode(placed[0]);
          if (node) {
            if (placed[1] === 1) overCapacity += 1;
            return node;
          }
        }
        // a miss: every node of the list left (withdrawn or expired) since it was read
        await refresh().catch(() => {
          live = [];
        });
      }
      throw noMediaNode();
    },
    nodes: () => live,
    overCapacityPlacements: () => overCapacity,
    refresh,
    async announce(node, onError, load) {
      const member = encode(node);
      const beat = (): Promise<void> => {
        const { sessions, users } = load?.() ?? { sessions: 0, users: [] };
        return runScript(client, ANNOUNCE_SCRIPT, 2, [nodesKey, loadKey, member, nowMs() + NODE_LIVENESS_MS, sessions, nowMs(), prefix, ...users])
          .then(() => undefined, onError);
      };
      await beat();
      const heartbeat = setInterval(() => void beat(), ANNOUNCE_INTERVAL_MS);
      heartbeat.unref();
      return async () => {
        clearInterval(heartbeat);
        await runScript(client, WITHDRAW_SCRIPT, 2, [nodesKey, loadKey, member, prefix]).then(() => undefined, onError);
      };
    },
    close() {
      clearInterval(timer);
    },
  };
}
