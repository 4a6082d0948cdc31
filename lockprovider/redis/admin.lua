-- Operator actions, selected by ARGV[1].
--
-- 'force': end the lease on KEYS[1] whoever holds it and announce it like
-- lock_release.lua; KEYS[2] fencing counter. The counter moves only on
-- grants, so it still holds the freed lease's token, and the next grant
-- takes a larger one. ARGV[2] token: unless 0, only the lease with that
-- token is freed. Returns {fence, value, expiry ms}, or 0 when no lease
-- (or not that one) is in force.
-- 'del': delete KEYS (one rate-limit key's limits, all in one slot).
-- 'ttl': the expiry of KEYS[1] in Unix ms (-2 missing, -1 none).
-- 'ping': 1.
local op = ARGV[1]
if op == 'force' then
  local v = redis.call('GET', KEYS[1])
  if not v then return 0 end
  local f = redis.call('GET', KEYS[2])
  if ARGV[2] ~= '0' and f ~= ARGV[2] then return 0 end
  local e = redis.call('PEXPIRETIME', KEYS[1])
  redis.call('DEL', KEYS[1])
  redis.call('SPUBLISH', KEYS[1], '')
  return {f, v, e}
elseif op == 'del' then
  for _, k in ipairs(KEYS) do redis.call('DEL', k) end
  return #KEYS
elseif op == 'ttl' then
  return redis.call('PEXPIRETIME', KEYS[1])
end
return 1
