-- Acquire for a scheduled tick: lock_acquire.lua plus the tick check, kept
-- apart so that plain acquires do not pay for it.
--
-- KEYS[1] lease, KEYS[2] fencing counter (as in lock_acquire.lua)
-- KEYS[3] newest tick granted (ms); TTL refreshed on every tick grant
-- ARGV[1..3] as in lock_acquire.lua, ARGV[4] tick ms
-- Returns as lock_acquire.lua, or -1 when the tick is not newer than the
-- newest granted.
local v = redis.call('GET', KEYS[1])
if v then
  local n = string.find(ARGV[1], '\n', 1, true)
  if string.sub(v, 1, n) ~= string.sub(ARGV[1], 1, n) then return 0 end
  return {redis.call('GET', KEYS[2]), v, redis.call('PEXPIRETIME', KEYS[1])}
end
local k = redis.call('GET', KEYS[3])
if k and tonumber(k) >= tonumber(ARGV[4]) then return -1 end
local tm = redis.call('TIME')
-- Integers go to Redis as strings: a Lua number would be formatted as a
-- double, which costs more.
local un = tm[1] * 1000 + math.floor(tm[2] / 1000) + ARGV[2]
local u = string.format('%d', un)
redis.call('SET', KEYS[1], ARGV[1], 'PXAT', u)
-- The token as in lock_acquire.lua.
local n = tm[1] * 1000000 + tm[2]
local f = string.format('%d', n)
local c = redis.call('SET', KEYS[2], f, 'KEEPTTL', 'GET')
if not c then
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
elseif tonumber(c) >= n then
  n = tonumber(c) + 1
  f = string.format('%d', n)
  redis.call('SET', KEYS[2], f, 'KEEPTTL')
end
redis.call('SET', KEYS[3], ARGV[4], 'PX', ARGV[3])
return {n, un}
