-- Ledger tail of a release: appended after lock_release.lua, wrapped as the
-- function release (see ops.go). Whatever the release answered (a lost
-- lease still gets its outcome), the run's "started" record is completed
-- in place, so there is one record per run. The run is almost always the
-- newest record; if a later run started first, the newest eight are
-- searched. A run not found was trimmed as beyond the retention while it
-- ran and is not recorded again (see lockprovider.Retention). Trimming and
-- the list's expiry are the claim's work (ledger_acquire.lua), which keeps
-- the release lean.
--
-- KEYS[1] lease, KEYS[2] run list
-- ARGV[1] owner, ARGV[2] token, ARGV[3] outcome, ARGV[4] error text
local r = release()
local s = KEYS[2]
local p = ARGV[2] .. '\n'
local at, e = 0, redis.call('LINDEX', s, 0)
if not e or string.sub(e, 1, #p) ~= p then
  at = -1
  for i, x in ipairs(redis.call('LRANGE', s, 1, 7)) do
    if string.sub(x, 1, #p) == p then
      at, e = i, x
      break
    end
  end
end
if at >= 0 then
  local tm = redis.call('TIME')
  -- The started part: the first five fields (a repeated release replaces
  -- the end it recorded before).
  local head = string.match(e, '^[^\n]*\n[^\n]*\n[^\n]*\n[^\n]*\n[^\n]*')
  redis.call('LSET', s, at, head .. '\n' .. string.format('%d', tm[1] * 1000 + math.floor(tm[2] / 1000)) .. '\n' .. ARGV[3] .. '\n' .. ARGV[4])
end
return r
