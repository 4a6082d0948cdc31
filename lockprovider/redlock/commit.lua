-- Second round of a Redlock acquire on one master: record the token chosen
-- from a majority's counters, if the caller still holds the lease here.
--
-- KEYS[1] lease, KEYS[2] fencing counter, KEYS[3] newest tick (ms)
-- ARGV[1] owner, ARGV[2] token, ARGV[3] tick ms or 0, ARGV[4] record TTL ms,
-- ARGV[5] the lease's remaining length in ms, or 0 to keep its expiry,
-- ARGV[6..8] the grant's granted, until and atLeastUntil (client ms),
-- ARGV[9] the committing attempt's id, which replaces the value's (the
-- value may come from an earlier attempt of the same owner)
-- Returns {1, the lease's remaining ms here}, or 0 when the caller does not
-- hold the lease here.
local v = redis.call('GET', KEYS[1])
if not v or string.sub(v, 1, #ARGV[1] + 1) ~= ARGV[1] .. '\n' then return 0 end
local _, e, _, a, _, _, _, tk = string.find(v, '^(%d+) (%d+) (%d+) (%d+) (%d+) (%d+)', #ARGV[1] + 2)
local nl = string.find(v, '\n', e + 1, true)
local nv = ARGV[1] .. '\n' .. ARGV[2] .. ' ' .. a .. ' ' .. ARGV[6] .. ' ' .. ARGV[7] .. ' ' .. ARGV[8] .. ' ' .. tk .. ' ' .. ARGV[9] ..
  (nl and string.sub(v, nl) or '')
if ARGV[5] == '0' then
  redis.call('SET', KEYS[1], nv, 'KEEPTTL')
else
  redis.call('SET', KEYS[1], nv, 'PX', ARGV[5])
end
local c = redis.call('GET', KEYS[2])
if not c then
  redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[4])
elseif tonumber(c) < tonumber(ARGV[2]) then
  redis.call('SET', KEYS[2], ARGV[2], 'KEEPTTL')
end
if ARGV[3] ~= '0' then
  local k = redis.call('GET', KEYS[3])
  if not k or tonumber(k) < tonumber(ARGV[3]) then
    redis.call('SET', KEYS[3], ARGV[3], 'PX', ARGV[4])
  end
end
return {1, redis.call('PTTL', KEYS[1])}
