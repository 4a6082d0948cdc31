-- Ledger tail of a release: appended after lock_release.lua, wrapped as the
-- function release (see ops.go). Whatever the release answered (a lost
-- lease still gets its outcome), it pushes the run's end record, the whole
-- run built by the client, onto the job's run list: one call, no lookup.
-- The reader pairs it with the run's start record by token; an end whose
-- start was trimmed (the run fell out of the retention while it ran) is
-- not shown, and goes with a later trim (see ledger_acquire.lua).
-- Trimming and the list's expiry are the claim's work.
--
-- KEYS[1] lease, KEYS[2] run list
-- ARGV[1] owner, ARGV[2] the record up to its finished time, ARGV[3] the
-- finished time in ms, or empty for the server's clock now, ARGV[4] the
-- rest of the record (see releaseRunArgs in ops.go).
local r = release()
local f = ARGV[3]
if f == '' then
  local tm = redis.call('TIME')
  f = string.format('%d', tm[1] * 1000 + math.floor(tm[2] / 1000))
end
redis.call('LPUSH', KEYS[2], ARGV[2] .. f .. ARGV[4])
return r
