-- Release a live Go grant held by the owner the way ShedLock unlocks: when
-- the minimum hold is still ahead, the key stays until then (ShedLock
-- re-sets its expiry to the remaining lockAtLeastFor); otherwise it is
-- deleted. See acquire.lua for the keys.
-- ARGV[1] owner. Returns 1, or 0 when the owner does not hold the name.
local owner = ARGV[1]
local v = redis.call('GET', KEYS[1])
if not v or string.sub(v, -#owner - 1) ~= ':' .. owner or redis.call('HGET', KEYS[2], 'o') ~= owner then
  return 0
end
local tm = redis.call('TIME')
local now = tonumber(tm[1]) * 1000 + math.floor(tonumber(tm[2]) / 1000)
local least = tonumber(redis.call('HGET', KEYS[2], 'a') or '0')
if least > now then
  redis.call('PEXPIREAT', KEYS[1], least)
else
  redis.call('DEL', KEYS[1])
end
return 1
