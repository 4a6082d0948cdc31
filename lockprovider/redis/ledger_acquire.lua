-- Ledger tail of an acquire: appended after lock_acquire.lua or
-- lock_acquire_tick.lua, wrapped as the function acquire (see ops.go), so
-- the lease logic is the plain scripts' own. A new grant ({fence, expiry})
-- also pushes a "started" record onto the job's run list, newest first,
-- trimmed to the newest max-runs records; the list expires when no run was
-- recorded for the retention age. A list, not a stream: its commands cost
-- a fraction of XADD's, and the claim must stay cheap.
--
-- A record is "token\ntick ms\nlockedBy\nstarted ms\nflags", and once the
-- run ended "\nfinished ms\noutcome\nerror" more (see ledger_release.lua).
--
-- KEYS as the wrapped script, then the run list last.
-- ARGV as the wrapped script, then four more, counted from the end:
-- lockedBy, flags ("c" catch-up, "m" manual), max runs, max age ms.
local r = acquire()
if type(r) == 'table' and #r == 2 then
  local n = #ARGV
  local s = KEYS[#KEYS]
  local tick = '0'
  if #KEYS == 4 then tick = ARGV[4] end
  redis.call('LPUSH', s, string.format('%d\n%s\n%s\n%d\n%s', r[1], tick, ARGV[n - 3], r[2] - ARGV[2], ARGV[n - 2]))
  redis.call('LTRIM', s, 0, ARGV[n - 1] - 1)
  redis.call('PEXPIRE', s, ARGV[n])
end
return r
