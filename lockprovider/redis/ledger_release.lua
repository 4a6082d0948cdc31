-- Ledger tail of a release: appended after lock_release.lua, wrapped as the
-- function release (see ops.go). Whatever the release answered (a lost
-- lease still gets its outcome), the run's "started" record is replaced by
-- the complete one, so there is one record per run and the claim's LTRIM
-- bounds the runs kept. The run is almost always the newest record; if a
-- later run started first, the newest eight are searched, and a run not
-- found (trimmed) is pushed anew. Trimming by age and the list's expiry
-- are the claim's work (ledger_acquire.lua), which keeps the release lean.
--
-- KEYS[1] lease, KEYS[2] run list
-- ARGV[1] owner, ARGV[2] token, ARGV[3] started ms, ARGV[4] tick ms or 0,
-- ARGV[5] lockedBy, ARGV[6] flags, ARGV[7] outcome, ARGV[8] error text,
-- ARGV[9] max runs
local r = release()
local tm = redis.call('TIME')
local now = tm[1] * 1000 + math.floor(tm[2] / 1000)
local s = KEYS[2]
local rec = string.format('%s\n%s\n%s\n%s\n%s\n%d\n%s\n%s', ARGV[2], ARGV[4], ARGV[5], ARGV[3], ARGV[6], now, ARGV[7], ARGV[8])
local p = ARGV[2] .. '\n'
local head = redis.call('LINDEX', s, 0)
if head and string.sub(head, 1, #p) == p then
  redis.call('LSET', s, 0, rec)
else
  local at = -1
  for i, e in ipairs(redis.call('LRANGE', s, 1, 7)) do
    if string.sub(e, 1, #p) == p then
      at = i
      break
    end
  end
  if at > 0 then
    redis.call('LSET', s, at, rec)
  else
    redis.call('LPUSH', s, rec)
    redis.call('LTRIM', s, 0, ARGV[9] - 1)
  end
end
return r
