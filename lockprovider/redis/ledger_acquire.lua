-- Ledger tail of an acquire: appended after lock_acquire.lua or
-- lock_acquire_tick.lua, wrapped as the function acquire (see ops.go), so
-- the lease logic is the plain scripts' own. A new grant ({fence, expiry})
-- also pushes a "started" record onto the job's run list, newest first,
-- trimmed to the newest max-runs records and to those younger than the
-- retention age; the list expires when no run was claimed for that age. A list, not a stream: its commands cost
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
  local now = r[2] - ARGV[2] -- the grant time
  redis.call('LPUSH', s, string.format('%d\n%s\n%s\n%d\n%s', r[1], tick, ARGV[n - 3], now, ARGV[n - 2]))
  redis.call('LTRIM', s, 0, ARGV[n - 1] - 1)
  -- Drop records that started more than the age ago, oldest first, a few
  -- per claim (the claims of an active job keep up).
  local cut = now - ARGV[n]
  for _ = 1, 4 do
    local tail = redis.call('LINDEX', s, -1)
    if tonumber(string.match(tail, '^[^\n]*\n[^\n]*\n[^\n]*\n([^\n]*)')) >= cut then break end
    redis.call('RPOP', s)
  end
  redis.call('PEXPIRE', s, ARGV[n])
end
return r
