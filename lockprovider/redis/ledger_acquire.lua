-- Ledger tail of an acquire: appended after lock_acquire.lua or
-- lock_acquire_tick.lua, wrapped as the function acquire (see ledger.go), so
-- the lease logic is the plain scripts' own. A new grant ({fence, expiry})
-- also appends a "started" entry to the job's run stream, trimmed to the
-- newest MAXLEN entries; the stream expires when no run was recorded for
-- the retention age.
--
-- KEYS as the wrapped script, then the run stream last.
-- ARGV as the wrapped script, then four more, counted from the end:
-- lockedBy, flags ("c" catch-up, "m" manual), max runs, max age ms.
local r = acquire()
if type(r) == 'table' and #r == 2 then
  local n = #ARGV
  local s = KEYS[#KEYS]
  local tick = '0'
  if #KEYS == 4 then tick = ARGV[4] end
  redis.call('XADD', s, 'MAXLEN', ARGV[n - 1], '*', 'f', r[1], 't', tick, 'b', ARGV[n - 3],
    'g', r[2] - ARGV[2], 'm', ARGV[n - 2])
  redis.call('PEXPIRE', s, ARGV[n])
end
return r
