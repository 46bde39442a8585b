import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { ApiError } from '../core/errors.ts';
import { placeRoom, type MediaNode, type MediaNodeDirectory } from '../core/media-placement.ts';

export interface MediaNodeDirectoryOptions {
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

// KEYS[1] the room's placement, KEYS[2] the live nodes; ARGV: candidate node, placement lifetime,
// now (ms). Keeps the room on its node while that node is live, else places it on the candidate if
// that one is live in Redis now; returns nil (a miss) when it is not: the token node's list of live
// nodes is older than a withdrawal or an expiry, so it re-reads the list and asks again.
const PLACE_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if current then
  local seen = redis.call('ZSCORE', KEYS[2], current)
  if seen and tonumber(seen) > tonumber(ARGV[3]) then
    if redis.call('TTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
    return current
  end
end
local candidate = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not candidate or tonumber(candidate) <= tonumber(ARGV[3]) then return false end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return ARGV[1]
`;

const PLACE_SCRIPT_SHA = createHash('sha1').update(PLACE_SCRIPT).digest('hex');

/** Runs the placement script by its digest, sending its text only when Redis does not have it yet. */
async function runPlaceScript(client: Redis, args: (string | number)[]): Promise<string | null> {
  try {
    return await client.evalsha(PLACE_SCRIPT_SHA, 2, ...args) as string | null;
  } catch (err) {
    if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
    return await client.eval(PLACE_SCRIPT, 2, ...args) as string | null;
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
 * node announces itself every two seconds in a sorted set scored by when it stops counting as live;
 * a room's placement is a key that names its node, kept while that node is live and the room's
 * grants last, so every participant of a room is sent to the same node. Liveness is checked in
 * Redis at each placement, not in the list read once a second: a node withdrawn (a drain) receives
 * no room from the moment the withdrawal is answered, a killed one none from `NODE_LIVENESS_MS`
 * after its last announcement.
 */
export function createRedisMediaNodeDirectory(
  client: Redis, options: MediaNodeDirectoryOptions = {},
): MediaNodeDirectory & { refresh(): Promise<void> } {
  const prefix = options.keyPrefix ?? 'rtc:media';
  const nodesKey = `${prefix}:nodes`;
  const nowMs = options.nowMs ?? Date.now;
  let live: readonly MediaNode[] = [];
  let loaded: Promise<void> | undefined;

  const refresh = async (): Promise<void> => {
    const members = await client.zrangebyscore(nodesKey, nowMs(), '+inf');
    live = members.map(decode).filter((n): n is MediaNode => n !== undefined);
  };
  // a failed refresh keeps the last list: placement itself checks liveness in Redis
  const timer = setInterval(() => void refresh().catch(() => {}), REFRESH_INTERVAL_MS);
  timer.unref();

  return {
    async place(projectId, roomId, ttlSeconds) {
      if (live.length === 0) {
        loaded ??= refresh().finally(() => {
          loaded = undefined;
        });
        await loaded.catch(() => {});
      }
      const roomKey = `${prefix}:room:${projectId}:${roomId}`;
      for (let attempt = 1; attempt <= PLACE_ATTEMPTS; attempt++) {
        const candidate = placeRoom(live, projectId, roomId);
        if (!candidate) throw noMediaNode();
        let placed: string | null;
        try {
          placed = await runPlaceScript(client, [roomKey, nodesKey, encode(candidate), ttlSeconds + PLACEMENT_MARGIN_SECONDS, nowMs()]);
        } catch (cause) {
          // Redis unreachable: refused like the limits, never a placement other nodes would not see
          throw new ApiError('unavailable', 'the media node directory is unreachable; retry shortly', { retryAfterSec: 1, cause });
        }
        if (placed !== null) return decode(placed) ?? candidate;
        // a miss: the candidate left (withdrawn or expired) since the list was read
        await refresh().catch(() => {
          live = live.filter((n) => n.id !== candidate.id);
        });
      }
      throw noMediaNode();
    },
    nodes: () => live,
    refresh,
    async announce(node, onError) {
      const member = encode(node);
      const beat = (): Promise<void> => client.zadd(nodesKey, nowMs() + NODE_LIVENESS_MS, member)
        // nodes dead for a minute leave the set
        .then(() => client.zremrangebyscore(nodesKey, '-inf', nowMs() - 60_000))
        .then(() => undefined, onError);
      await beat();
      const heartbeat = setInterval(() => void beat(), ANNOUNCE_INTERVAL_MS);
      heartbeat.unref();
      return async () => {
        clearInterval(heartbeat);
        await client.zrem(nodesKey, member).catch(onError);
      };
    },
    close() {
      clearInterval(timer);
    },
  };
}
