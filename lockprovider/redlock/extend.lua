-- Extend a lease on one master if the caller holds it here.
--
-- KEYS[1] lease
-- ARGV[1] owner, ARGV[2] lease length ms, ARGV[3] AtLeastFor ms,
-- ARGV[4] until, ARGV[5] atLeastUntil (client ms)
-- Returns the new value, or 0 when the caller does not hold the lease here.
local v = redis.call('GET', KEYS[1])
if not v or string.sub(v, 1, #ARGV[1] + 1) ~= ARGV[1] .. '\n' then return 0 end
local _, e, tok, _, g, _, _, tk = string.find(v, '^(%d+) (%d+) (%d+) (%d+) (%d+) (%d+)', #ARGV[1] + 2)
local a = 0
if ARGV[3] ~= '0' then
  local tm = redis.call('TIME')
  a = tm[1] * 1000 + math.floor(tm[2] / 1000) + tonumber(ARGV[3])
end
local nv = ARGV[1] .. '\n' .. tok .. ' ' .. a .. ' ' .. g .. ' ' .. ARGV[4] .. ' ' .. ARGV[5] .. ' ' .. tk .. string.sub(v, e + 1)
redis.call('SET', KEYS[1], nv, 'PX', ARGV[2])
return nv
