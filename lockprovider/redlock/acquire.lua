-- First round of a Redlock acquire on one master: take the lease if the
-- name is free here, and read this master's fencing counter.
--
-- KEYS[1] lease, KEYS[2] fencing counter, KEYS[3] newest tick (ms)
-- ARGV[1] owner, ARGV[2] the rest of the value: "granted until atLeastUntil
-- tick attempt\nlockedBy" (client ms), ARGV[3] lease length ms, ARGV[4]
-- AtLeastFor ms, ARGV[5] tick ms or 0, ARGV[6] counter TTL ms
--
-- The lease value is "owner\ntoken atLeastAt granted until atLeastUntil
-- tick attempt\nlockedBy": token is 0 until the second round commits one,
-- atLeastAt is this master's own clock (ms) for the at-least bound, or 0,
-- and attempt identifies the attempt that wrote or committed the value, so
-- that a failed attempt's clean-up removes nothing a later one committed.
--
-- Returns {0, holder} when another owner holds the lease here, -1 when the tick is not
-- newer than the newest committed here, {1, value, counter} when the caller already
-- holds it (with the counter), or {2, counter} when this call took it.
local v = redis.call('GET', KEYS[1])
if v then
  if string.sub(v, 1, #ARGV[1] + 1) == ARGV[1] .. '\n' then
    return {1, v, redis.call('GET', KEYS[2]) or '0'}
  end
  return {0, string.sub(v, 1, string.find(v, '\n', 1, true) - 1)}
end
if ARGV[5] ~= '0' then
  local k = redis.call('GET', KEYS[3])
  if k and tonumber(k) >= tonumber(ARGV[5]) then return -1 end
end
local c = redis.call('GET', KEYS[2])
if not c then
  -- First use or lost data: start from server time in microseconds, above
  -- every token this master can have seen before.
  local tm = redis.call('TIME')
  c = tm[1] * 1000000 + tm[2]
  redis.call('SET', KEYS[2], c, 'PX', ARGV[6])
end
local a = 0
if ARGV[4] ~= '0' then
  local tm = redis.call('TIME')
  a = tm[1] * 1000 + math.floor(tm[2] / 1000) + tonumber(ARGV[4])
end
redis.call('SET', KEYS[1], ARGV[1] .. '\n0 ' .. a .. ' ' .. ARGV[2], 'PX', ARGV[3])
return {2, c}
