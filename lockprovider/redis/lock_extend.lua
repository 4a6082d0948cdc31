-- Move the end of a held lease, longer or shorter, and its at-least bound.
-- The value is rewritten with absolute times (see lease.go), since the
-- grant time can no longer be derived from the expiry.
--
-- KEYS[1] lease, KEYS[2] fencing counter (as in lock_acquire.lua)
-- ARGV[1] owner, ARGV[2] atMostFor ms, ARGV[3] atLeastFor ms
-- Returns {fence, value, expiry ms}, or 0 when the owner does not hold it.
local v = redis.call('GET', KEYS[1])
if not v or string.byte(v, #ARGV[1] + 1) ~= 10 or string.sub(v, 1, #ARGV[1]) ~= ARGV[1] then return 0 end
local _, e, a, g = string.find(v, '^(%S+) (%S+)', #ARGV[1] + 2)
if string.byte(g, 1) == 43 then -- '+': granted = expiry - atMostFor at grant
  g = redis.call('PEXPIRETIME', KEYS[1]) - tonumber(string.sub(g, 2))
end
local tm = redis.call('TIME')
local now = tm[1] * 1000 + math.floor(tm[2] / 1000)
a = now + tonumber(ARGV[3])
local u = now + tonumber(ARGV[2])
v = ARGV[1] .. '\n' .. a .. ' ' .. g .. string.sub(v, e + 1)
redis.call('SET', KEYS[1], v, 'PXAT', u)
return {redis.call('GET', KEYS[2]), v, u}
