-- Operator actions, selected by ARGV[1].
--
-- 'force': end the lease on KEYS[1] whoever holds it and announce it like
-- lock_release.lua; KEYS[2] fencing counter. The counter moves only on
-- grants, so it still holds the freed lease's token, and the next grant
-- takes a larger one. ARGV[2] token: unless 0, only the lease with that
-- token is freed. Returns {fence, value, expiry ms}, or 0 when no lease
-- (or not that one) is in force. KEYS[3] the name's run list (the
-- ledger): when it exists, a release record "token\nreleased ms\nby"
-- (ARGV[3] the operator) is pushed onto it, which the reader joins to the
-- run with that token (see readRuns in ops.go). A name without a list
-- (a plain lock) gets none: the push would make a list that never expires.
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
  if f and redis.call('EXISTS', KEYS[3]) == 1 then
    local tm = redis.call('TIME')
    redis.call('LPUSH', KEYS[3], string.format('%s\n%d\n', f, tm[1] * 1000 + math.floor(tm[2] / 1000)) .. ARGV[3])
  end
  return {f, v, e}
elseif op == 'del' then
  for _, k in ipairs(KEYS) do redis.call('DEL', k) end
  return #KEYS
elseif op == 'ttl' then
  return redis.call('PEXPIRETIME', KEYS[1])
end
return 1
