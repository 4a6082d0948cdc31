-- Ledger tail of an acquire: appended after lock_acquire.lua or
-- lock_acquire_tick.lua, wrapped as the function acquire (see ops.go), so
-- the lease logic is the plain scripts' own. A new grant ({fence, expiry})
-- also pushes the run's start record onto the job's run list, newest
-- first. A list, not a stream: its commands cost a fraction of XADD's,
-- and the claim must stay cheap.
--
-- The list expires (a job no longer claimed loses it) the retention age
-- plus a sixteenth after the last claim that set its expiry. A client
-- asks for that only once in a sixteenth of the age (see listTTLs in
-- ops.go), so every record it pushes in between still lives at least the
-- age; a new list always gets its expiry. So most claims make one call.
--
-- The list holds two kinds of records, both "token\nstarted ms\nrest":
-- a start record, rest built by the client as "tick ms\nflags\nlockedBy",
-- and the end record ledger_release.lua pushes, the whole run with
-- "\nfinished ms\noutcome\nerror" more. A force-release of a run's lease
-- adds a third kind, "token\nreleased ms\nby" (admin.lua), whose second
-- field is a time too, so the age cut below reads every kind alike. A
-- run is in the ledger while its start record is (see readRuns in
-- ops.go).
--
-- Retention counts records, amortised (lockprovider.RetentionSlack, 16).
-- A claim that finds the list's new length at least max records + 16
-- cuts it to the newest max records; one that finds it 0 or 1 modulo 16
-- (a run adds one or two records, so some claim among any 16 does) or
-- cuts also pops up to 64 of the oldest records that started more than
-- the age ago. Cutting only 16 records over max keeps a list at its
-- limit from being cut at every claim.
--
-- KEYS as the wrapped script, then the run list last.
-- ARGV as the wrapped script, then four more, counted from the end:
-- rest, max records (2 × MaxRuns - 1: the newest MaxRuns runs when each
-- has its two), max age ms, the list's expiry ms, negated when the
-- client set it lately (then only a new list gets it).
local r = acquire()
if type(r) == 'table' and #r == 2 then
  local n = #ARGV
  local s = KEYS[#KEYS]
  local now = r[2] - ARGV[2] -- the grant time
  local len = redis.call('LPUSH', s, string.format('%d\n%d\n', r[1], now) .. ARGV[n - 3])
  local max = tonumber(ARGV[n - 2])
  local full = len >= max + 16
  if full or len % 16 < 2 then
    if full then redis.call('LTRIM', s, 0, max - 1) end
    local cut = now - ARGV[n - 1]
    for _ = 1, 64 do
      local tail = redis.call('LINDEX', s, -1)
      if tonumber(string.match(tail, '^[^\n]*\n([^\n]*)')) >= cut then break end
      redis.call('RPOP', s)
    end
  end
  local ttl = ARGV[n]
  if string.byte(ttl, 1) ~= 45 then -- not '-'
    redis.call('PEXPIRE', s, ttl)
  elseif len == 1 then
    redis.call('PEXPIRE', s, string.sub(ttl, 2))
  end
end
return r
