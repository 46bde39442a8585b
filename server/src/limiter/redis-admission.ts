import type { Redis } from 'ioredis';
import type { AdmissionRequest, AdmissionResult, CredentialVersions, LimitResult, TokenAdmission } from '../core/ports.ts';
import { LimiterUnavailableError } from './redis.ts';

/** How long a change's mark stands at most: longer than any store write of a change. */
export const CHANGING_MARK_MS = 30_000;
/** A version key nobody read for this long goes; the next read starts a new version (a cache miss). */
const VERSION_LIFETIME_SECONDS = 86_400;
const CHANGING = 'changing';

// The same fixed windows as `createRedisLimiter` (rate-limiter-flexible's keys and increment), so
// both count one total: a hit sets the key to 0 with the window's expiry unless it exists, then
// increments; over `max` it is refused with the key's remaining time.
//
// KEYS: 1 block, 2 address rate, 3 project version, 4 App ID rate.
// ARGV: 1 block max, 2 rate max, 3 rate window, 4 '1' to read the version, 5 the version the App ID
// is counted under ('' never), 6 App ID max, 7 App ID window, 8 version lifetime (s).
// Returns {0, ms left} when the address is refused, else {1, 0, version ('' none)} and, when the App
// ID was counted, {.., 1, 0} or {.., 0, ms left}.
const ADMIT_SCRIPT = `
local function over(key, max, window)
  redis.call('SET', key, 0, 'EX', window, 'NX')
  local n = redis.call('INCR', key)
  local ttl = redis.call('PTTL', key)
  if ttl == -1 then
    redis.call('EXPIRE', key, window)
    ttl = 1000 * tonumber(window)
  end
  if n > tonumber(max) then return ttl end
  return false
end
local failures = redis.call('GET', KEYS[1])
if failures and tonumber(failures) >= tonumber(ARGV[1]) then
  return {0, redis.call('PTTL', KEYS[1])}
end
local refused = over(KEYS[2], ARGV[2], ARGV[3])
if refused then return {0, refused} end
local version = ''
if ARGV[4] == '1' then
  local current = redis.call('GET', KEYS[3])
  if not current then
    local t = redis.call('TIME')
    current = 'v' .. t[1] .. '.' .. t[2]
    redis.call('SET', KEYS[3], current, 'EX', ARGV[8])
  end
  if current ~= '${CHANGING}' then version = current end
end
if ARGV[5] ~= '' and version == ARGV[5] then
  local appRefused = over(KEYS[4], ARGV[6], ARGV[7])
  if appRefused then return {1, 0, version, 0, appRefused} end
  return {1, 0, version, 1, 0}
end
return {1, 0, version}
`;

type AdmitReply = [number, number, string?, number?, number?];
type AdmitCommand = (...args: (string | number)[]) => Promise<AdmitReply>;

const OK: LimitResult = Object.freeze({ ok: true, retryAfterSec: 0 });
const refusedFor = (ms: number): LimitResult => ({ ok: false, retryAfterSec: Math.max(1, Math.ceil(ms / 1000)) });

/**
 * Token admission in one Redis round trip (docs/decisions/scale-out.md, "Credential cache"): the address's
 * block and rate limit, the version of the claimed credential's project, and the App ID's hit when
 * the caller's cached credential is still current. `limitPrefix` is `createRedisLimiter`'s, so that
 * a limit counted here and one counted there are the same count.
 */
export function createRedisTokenAdmission(client: Redis, limitPrefix = 'rtc:limit', versionPrefix = 'rtc:auth:version'): TokenAdmission {
  client.defineCommand('rtcAdmitToken', { numberOfKeys: 4, lua: ADMIT_SCRIPT });
  const admit = (client as unknown as { rtcAdmitToken: AdmitCommand }).rtcAdmitToken.bind(client);
  const limitKey = (l: { key: string; max: number; windowSec: number }): string => `${limitPrefix}:${l.max}/${l.windowSec}:${l.key}`;
  // A version is good for one connection: a Redis that comes back from a snapshot, or a promoted
  // replica that missed the last writes, may hold a version a change had removed. Every lost
  // connection starts a new generation, and a version is handed out as `<generation>/<version>`,
  // so nothing cached under an earlier connection is used again (docs/decisions/scale-out.md, "Credential cache").
  let generation = 0;
  client.on('close', () => {
    generation += 1;
  });
  const scoped = (version: string): string => `${generation}/${version}`;
  /** The Redis version of a scoped one of this connection; '' for another connection's (never matches). */
  const unscoped = (version: string | undefined): string => {
    const prefix = `${generation}/`;
    return version?.startsWith(prefix) ? version.slice(prefix.length) : '';
  };
  return {
    async admit(req: AdmissionRequest): Promise<AdmissionResult> {
      if (client.status !== 'ready') throw new LimiterUnavailableError(new Error('Redis connection is not ready'));
      const { block, rate, app, projectId } = req;
      const sentIn = generation;
      let reply: AdmitReply;
      try {
        reply = await admit(
          limitKey(block), limitKey(rate), `${versionPrefix}:${projectId ?? ''}`, app ? limitKey(app) : `${limitPrefix}:`,
          block.max, rate.max, rate.windowSec, projectId === undefined ? '0' : '1', unscoped(app?.version),
          app?.max ?? 0, app?.windowSec ?? 0, VERSION_LIFETIME_SECONDS,
        );
      } catch (err) {
        throw new LimiterUnavailableError(err);
      }
      const [addressOk, addressMs, version, appOk, appMs] = reply;
      if (addressOk !== 1) return { address: refusedFor(addressMs) };
      return {
        address: OK,
        // an answer that straddles a lost connection confirms nothing
        version: version && generation === sentIn ? scoped(version) : undefined,
        app: appOk === undefined ? undefined : appOk === 1 ? OK : refusedFor(appMs ?? 0),
      };
    },
  };
}

// KEYS[1] the project's version, KEYS[2] its count of changes under way; ARGV[1] how long a mark stands (ms).
const BEFORE_CHANGE_SCRIPT = `
redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
redis.call('SET', KEYS[1], '${CHANGING}', 'PX', ARGV[1])
return 1
`;
// The last change under way to finish removes the mark: the next read starts a new version.
const AFTER_CHANGE_SCRIPT = `
if redis.call('DECR', KEYS[2]) <= 0 then
  redis.call('DEL', KEYS[2])
  redis.call('DEL', KEYS[1])
end
return 1
`;
type ChangeCommand = (versionKey: string, changesKey: string, ms: number) => Promise<number>;

/**
 * A project's credential versions in Redis (docs/decisions/scale-out.md, "Credential cache"). A change marks
 * the project as changing before its store write: while the mark stands no node uses or fills its
 * cache for the project's credentials. The last change under way removes the mark once its write
 * is done, or the mark expires after `CHANGING_MARK_MS` when that never happens (a crash, Redis
 * unreachable); either way the next read starts a new version, so nothing cached before the change
 * is used again.
 */
export function createRedisCredentialVersions(client: Redis, versionPrefix = 'rtc:auth:version'): CredentialVersions {
  client.defineCommand('rtcBeforeCredentialChange', { numberOfKeys: 2, lua: BEFORE_CHANGE_SCRIPT });
  client.defineCommand('rtcAfterCredentialChange', { numberOfKeys: 2, lua: AFTER_CHANGE_SCRIPT });
  const commands = client as unknown as { rtcBeforeCredentialChange: ChangeCommand; rtcAfterCredentialChange: ChangeCommand };
  const keys = (projectId: string): [string, string] => [`${versionPrefix}:${projectId}`, `${versionPrefix}:changes:${projectId}`];
  return {
    async beforeChange(projectId) {
      try {
        await commands.rtcBeforeCredentialChange.call(client, ...keys(projectId), CHANGING_MARK_MS);
      } catch (err) {
        throw new LimiterUnavailableError(err);
      }
    },
    async afterChange(projectId) {
      await commands.rtcAfterCredentialChange.call(client, ...keys(projectId), CHANGING_MARK_MS).catch(() => {
        // the mark stands until it expires: the caches stay unused until then
      });
    },
  };
}
