/**
 * The scripts of the Redis room state (redis-rooms.ts). Each runs atomically in Redis, so every
 * node sees one order of joins, leaves and messages per room, and a session leaves once however
 * many nodes try to remove it.
 *
 * Keys, for a room prefix P (`rtc:sig:r:<project>:<room>`, both base64url) and the global prefix G:
 * - `P:meta`  hash: `epoch`, `seq` (the last event's sequence), `sc` (order of opened streams)
 * - `P:log`   stream: one entry per event, id `0-<seq>`, fields `a` (at, ms), `f` (the SSE frame),
 *             `t` (a direct message's recipient, or ""), `x` (the sending grant, or "")
 * - `P:users` hash: user id -> `<sessions>|<seq of their join>|<joined at ms>|<role>`
 * - `P:sess`  hash: grant id -> user id (the joined sessions)
 * - `P:st:<grant>` sorted set: the session's open streams, oldest first
 * - `G:leases` sorted set: grant id -> the time (ms) its session leaves unless a node renews it
 * - `G:grants` hash: grant id -> `<P>\n<user>\n<expires at ms>\n<project>\n<issued at>`
 * Every state change is published on the channel named P:
 * - `E\n<seq>\n<to>\n<except>\n<ending grant>\n<end kind>\n<frame>`: an event of the log
 * - `G\n<grant>\n<end kind>`: a session ended without an event (the user has other sessions)
 * - `S\n<grant>\n<stream id>`: a stream ended by the session's newest one
 */

const PRELUDE = `
local function trim(P, seq, now, keepEvents, keepMs)
  local log = P .. ':log'
  local minSeq = seq - keepEvents + 1
  if minSeq > 1 then redis.call('XTRIM', log, 'MINID', '0-' .. minSeq) end
  local cutoff = now - keepMs
  -- one entry at a time: the oldest is usually recent, and reading more would copy their frames
  for _ = 1, keepEvents do
    local first = redis.call('XRANGE', log, '-', '+', 'COUNT', 1)
    if not first[1] or tonumber(first[1][2][2]) >= cutoff then return end
    redis.call('XTRIM', log, 'MINID', '0-' .. (tonumber(string.sub(first[1][1], 3)) + 1))
  end
end

local function append(P, event, payload, to, except, endGrant, endKind, now, keepEvents, keepMs)
  local meta = P .. ':meta'
  local seq = redis.call('HINCRBY', meta, 'seq', 1)
  local epoch = redis.call('HGET', meta, 'epoch')
  local frame = 'id: ' .. epoch .. '.' .. seq .. '\\nevent: ' .. event .. '\\ndata: ' .. payload .. '\\n\\n'
  redis.call('XADD', P .. ':log', '0-' .. seq, 'a', now, 'f', frame, 't', to, 'x', except)
  trim(P, seq, now, keepEvents, keepMs)
  redis.call('PUBLISH', P, 'E\\n' .. seq .. '\\n' .. to .. '\\n' .. except .. '\\n' .. endGrant .. '\\n' .. endKind .. '\\n' .. frame)
  return seq
end
`;

/**
 * ARGV: P, G, grant, user, role, now, max sessions, join payload, new epoch, lease deadline,
 * grant info, kept events, kept ms. Returns {'full'} or {'ok', epoch, seq, users...}.
 */
export const JOIN_LUA = `${PRELUDE}
local P, G, grant, user = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local now = tonumber(ARGV[6])
local sess, meta, users = P .. ':sess', P .. ':meta', P .. ':users'
if redis.call('HEXISTS', sess, grant) == 0 then
  if redis.call('HLEN', sess) >= tonumber(ARGV[7]) then return {'full'} end
  if redis.call('HSETNX', meta, 'epoch', ARGV[9]) == 1 then redis.call('HSET', meta, 'seq', 0) end
  redis.call('HSET', sess, grant, user)
  local v = redis.call('HGET', users, user)
  if v then
    local n, rest = string.match(v, '^(%d+)(|.*)$')
    redis.call('HSET', users, user, (tonumber(n) + 1) .. rest)
  else
    local seq = append(P, 'join', ARGV[8], '', '', '', '', now, tonumber(ARGV[12]), tonumber(ARGV[13]))
    redis.call('HSET', users, user, '1|' .. seq .. '|' .. ARGV[6] .. '|' .. ARGV[5])
  end
  redis.call('ZADD', G .. ':leases', ARGV[10], grant)
  redis.call('HSET', G .. ':grants', grant, ARGV[11])
end
return {'ok', redis.call('HGET', meta, 'epoch'), redis.call('HGET', meta, 'seq'), redis.call('HGETALL', users)}
`;

/**
 * ARGV: P, G, grant, (unused), leave payload, now, mode ('any', or 'lease': only when the lease
 * ran out), end kind ('', 'revoked', 'expired'), kept events, kept ms. Returns 1 when removed.
 */
export const REMOVE_LUA = `${PRELUDE}
local P, G, grant = ARGV[1], ARGV[2], ARGV[3]
local now = tonumber(ARGV[6])
local sess, users = P .. ':sess', P .. ':users'
local user = redis.call('HGET', sess, grant)
if not user then
  redis.call('ZREM', G .. ':leases', grant)
  redis.call('HDEL', G .. ':grants', grant)
  return 0
end
if ARGV[7] == 'lease' then
  local deadline = redis.call('ZSCORE', G .. ':leases', grant)
  if deadline and tonumber(deadline) > now then return 0 end
end
redis.call('HDEL', sess, grant)
redis.call('ZREM', G .. ':leases', grant)
redis.call('HDEL', G .. ':grants', grant)
redis.call('DEL', P .. ':st:' .. grant)
local v = redis.call('HGET', users, user)
local n, rest = nil, nil
if v then n, rest = string.match(v, '^(%d+)(|.*)$') end
if not n or tonumber(n) <= 1 then
  redis.call('HDEL', users, user)
  append(P, 'leave', ARGV[5], '', '', grant, ARGV[8], now, tonumber(ARGV[9]), tonumber(ARGV[10]))
  if redis.call('HLEN', users) == 0 then redis.call('DEL', P .. ':meta', P .. ':log', users, sess) end
else
  redis.call('HSET', users, user, (tonumber(n) - 1) .. rest)
  redis.call('PUBLISH', P, 'G\\n' .. grant .. '\\n' .. ARGV[8])
end
return 1
`;

/** ARGV: P, grant, to (or ''), payload, now, kept events, kept ms. Returns {'ok', id}, {'nojoin'} or {'norecipient'}. */
export const SEND_LUA = `${PRELUDE}
local P, grant, to = ARGV[1], ARGV[2], ARGV[3]
if redis.call('HEXISTS', P .. ':sess', grant) == 0 then return {'nojoin'} end
if to ~= '' and redis.call('HEXISTS', P .. ':users', to) == 0 then return {'norecipient'} end
local seq = append(P, 'message', ARGV[4], to, grant, '', '', tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]))
return {'ok', redis.call('HGET', P .. ':meta', 'epoch') .. '.' .. seq}
`;

/**
 * ARGV: P, G, grant, last epoch (or ''), last seq (or ''), now, kept events, kept ms, stream id,
 * max streams, lease deadline. Returns {'nojoin'}, {'replay', epoch, seq, entries} or
 * {'snapshot', epoch, seq, users...}; the stream is registered, and the session's oldest ended
 * when it has too many.
 */
export const OPEN_LUA = `${PRELUDE}
local P, G, grant = ARGV[1], ARGV[2], ARGV[3]
local now = tonumber(ARGV[6])
local user = redis.call('HGET', P .. ':sess', grant)
if not user then return {'nojoin'} end
local meta, log = P .. ':meta', P .. ':log'
local epoch = redis.call('HGET', meta, 'epoch')
local seq = tonumber(redis.call('HGET', meta, 'seq'))
trim(P, seq, now, tonumber(ARGV[7]), tonumber(ARGV[8]))
local since = tonumber(string.match(redis.call('HGET', P .. ':users', user), '^%d+|(%d+)|'))
local entries = false
if ARGV[4] == epoch and ARGV[5] ~= '' then
  local last = tonumber(ARGV[5])
  if last <= seq and last >= since - 1 then
    local first = redis.call('XRANGE', log, '-', '+', 'COUNT', 1)
    local firstKept = seq + 1
    if first[1] then firstKept = tonumber(string.sub(first[1][1], 3)) end
    if last + 1 >= firstKept then entries = redis.call('XRANGE', log, '(0-' .. last, '+') end
  end
end
local st = P .. ':st:' .. grant
redis.call('ZADD', st, redis.call('HINCRBY', meta, 'sc', 1), ARGV[9])
while redis.call('ZCARD', st) > tonumber(ARGV[10]) do
  local oldest = redis.call('ZPOPMIN', st)
  redis.call('PUBLISH', P, 'S\\n' .. grant .. '\\n' .. oldest[1])
end
redis.call('ZADD', G .. ':leases', 'XX', ARGV[11], grant)
if entries then return {'replay', epoch, tostring(seq), entries} end
return {'snapshot', epoch, tostring(seq), redis.call('HGETALL', P .. ':users')}
`;
