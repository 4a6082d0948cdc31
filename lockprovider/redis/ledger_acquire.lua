-- Ledger tail of an acquire: appended after lock_acquire.lua or
-- lock_acquire_tick.lua, wrapped as the function acquire (see ops.go), so
-- the lease logic is the plain scripts' own. A new grant ({fence, expiry})
-- also pushes a "started" record onto the job's run list, newest first,
-- and refreshes the list's expiry (the retention age: a job no longer
-- claimed loses its list then). A list, not a stream: its commands cost a
-- fraction of XADD's, and the claim must stay cheap.
--
-- Retention is amortised (lockprovider.RetentionSlack, 16): a claim trims
-- only when the list's new length is a multiple of 16 or at least max
-- runs + 16, so some claim among any 16 trims. A trim cuts the list to
-- the newest max runs records, then pops up to 32 of the oldest that
-- started more than the age ago. The other claims make two calls.
--
-- A record is "token\nstarted ms\nrest", rest built by the client as
-- "tick ms\nflags\nlockedBy"; once the run ended it has
-- "\nfinished ms\noutcome\nerror" more (see ledger_release.lua).
--
-- KEYS as the wrapped script, then the run list last.
-- ARGV as the wrapped script, then three more, counted from the end:
-- rest, max runs, max age ms.
local r = acquire()
if type(r) == 'table' and #r == 2 then
  local n = #ARGV
  local s = KEYS[#KEYS]
  local now = r[2] - ARGV[2] -- the grant time
  local len = redis.call('LPUSH', s, string.format('%d\n%d\n', r[1], now) .. ARGV[n - 2])
  local max = tonumber(ARGV[n - 1])
  if len % 16 == 0 or len >= max + 16 then
    if len > max then redis.call('LTRIM', s, 0, max - 1) end
    local cut = now - ARGV[n]
    for _ = 1, 32 do
      local tail = redis.call('LINDEX', s, -1)
      if tonumber(string.match(tail, '^[^\n]*\n([^\n]*)')) >= cut then break end
      redis.call('RPOP', s)
    end
  end
  redis.call('PEXPIRE', s, ARGV[n])
end
return r
