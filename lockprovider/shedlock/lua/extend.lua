-- Extend a live Go grant held by the owner (see acquire.lua for the keys).
-- ARGV[1] owner, ARGV[2] atMostFor ms, ARGV[3] atLeastFor ms.
-- Returns {grant, until, atLeastUntil, fence, tick}, or 0 when the owner
-- does not hold the name.
local owner = ARGV[1]
local v = redis.call('GET', KEYS[1])
if not v or string.sub(v, -#owner - 1) ~= ':' .. owner or redis.call('HGET', KEYS[2], 'o') ~= owner then
  return 0
end
local tm = redis.call('TIME')
local now = tonumber(tm[1]) * 1000 + math.floor(tonumber(tm[2]) / 1000)
local untilMs = now + tonumber(ARGV[2])
local least = now + tonumber(ARGV[3])
redis.call('PEXPIREAT', KEYS[1], untilMs)
redis.call('HSET', KEYS[2], 'a', least)
local m = redis.call('HMGET', KEYS[2], 'g', 'f', 't')
return {tonumber(m[1]), untilMs, least, tonumber(m[2]), tonumber(m[3] or '0')}
