-- Ledger tail of a release: appended after lock_release.lua, wrapped as the
-- function release (see ledger.go). Whatever the release answered (a lost
-- lease still gets its outcome), the run's "started" entry is replaced by
-- a complete one: one entry per run, so MAXLEN bounds the runs kept, and
-- entries older than the age (by their last write) are trimmed. A
-- success is also kept apart as the job's last success.
--
-- KEYS[1] lease, KEYS[2] run stream, KEYS[3] last success
-- ARGV[1] owner, ARGV[2] token, ARGV[3] started ms, ARGV[4] tick ms or 0,
-- ARGV[5] lockedBy, ARGV[6] flags, ARGV[7] outcome, ARGV[8] error text,
-- ARGV[9] max runs, ARGV[10] max age ms
local r = release()
local tm = redis.call('TIME')
local now = tm[1] * 1000 + math.floor(tm[2] / 1000)
-- The started entry's ID is at or after the grant.
for _, e in ipairs(redis.call('XRANGE', KEYS[2], ARGV[3], '+', 'COUNT', 8)) do
  if e[2][2] == ARGV[2] then
    redis.call('XDEL', KEYS[2], e[1])
    break
  end
end
redis.call('XADD', KEYS[2], 'MAXLEN', ARGV[9], '*', 'f', ARGV[2], 't', ARGV[4], 'b', ARGV[5],
  'g', ARGV[3], 'm', ARGV[6], 'e', now, 'o', ARGV[7], 'x', ARGV[8])
redis.call('XTRIM', KEYS[2], 'MINID', now - ARGV[10])
redis.call('PEXPIRE', KEYS[2], ARGV[10])
if ARGV[7] == 'succeeded' then
  redis.call('SET', KEYS[3], table.concat({ARGV[2], ARGV[4], ARGV[5], ARGV[3], ARGV[6], now}, '\n'), 'PX', ARGV[10])
end
return r
