-- Acquire many names in one call (AcquireBatch). Each item gets exactly
-- the answer of lock_acquire.lua (no tick) or lock_acquire_tick.lua (a
-- tick), with fewer commands, since the claims of many jobs at one tick
-- must cost the server little: each command called from Lua costs about
-- as much again as the command itself. TIME once for the batch; with a
-- tick, SET GET of the newest tick both records the item's tick and
-- tells whether it is newer, then one SET NX GET both tests for a lease
-- in force and grants. The rare item that must not be granted after
-- recording its tick (a lease in force, or an older tick than the one
-- recorded) puts the recorded tick back. The answers are those of
-- lock_acquire_tick.lua in every case: a lease in force, by another owner
-- or the same one, decides before a stale tick, and a stale tick refuses
-- a free name. A winner costs three commands (four when its counter is
-- new), a replica that finds the tick taken two. The ledger's tail
-- (ledger_acquire.lua) is the single script's own text, wrapped as the
-- function ledger (see batch.go).
--
-- KEYS  per item: lease, fencing counter, newest tick (the lease key again
--       for an item without a tick), and with the ledger the run list.
-- ARGV[1] record TTL ms, ARGV[2] keys per item (3, or 4 with the ledger),
-- ARGV[3] the run lists' expiry ms, ARGV[4] max records, ARGV[5] max age ms
-- (ledger only, as ledger_acquire.lua takes them; a batch always sets the
-- expiry);
-- then per item: lease value, atMostFor ms, tick ms or 0, and with the
-- ledger the record's rest as ledger_acquire.lua takes it.
-- Returns one reply per item, each what the single script returns.
local tm = redis.call('TIME')
local ms = tm[1] * 1000 + math.floor(tm[2] / 1000)
local us = tm[1] * 1000000 + tm[2]
local ttl, stride = ARGV[1], tonumber(ARGV[2])

-- The reply for a lease in force whose value is v, as the single scripts
-- give it: the grant again for its owner, 0 for anyone else.
local function held(v, value, lease, fence)
  local n = string.find(value, '\n', 1, true)
  if string.sub(v, 1, n) ~= string.sub(value, 1, n) then return 0 end
  return {redis.call('GET', fence), v, redis.call('PEXPIRETIME', lease)}
end

local out = {}
local usf = string.format('%d', us)
local expiry = {} -- formatted grant + atMostFor, by atMostFor
for i = 0, #KEYS / stride - 1 do
  local k, a = stride * i, 5 + 4 * i
  local lease, fence, tk = KEYS[k + 1], KEYS[k + 2], KEYS[k + 3]
  local value, atMost, tick = ARGV[a + 1], ARGV[a + 2], ARGV[a + 3]
  local r, last
  if tick ~= '0' then
    last = redis.call('SET', tk, tick, 'PX', ttl, 'GET')
    if last and tonumber(last) >= tonumber(tick) then
      -- Not newer: put back a newer tick, then answer as for a stale
      -- tick unless a lease is in force.
      if last ~= tick then redis.call('SET', tk, last, 'PX', ttl) end
      local v = redis.call('GET', lease)
      if v then r = held(v, value, lease, fence) else r = -1 end
    end
  end
  if not r then
    local u = expiry[atMost]
    if not u then
      u = string.format('%d', ms + atMost)
      expiry[atMost] = u
    end
    local v = redis.call('SET', lease, value, 'NX', 'PXAT', u, 'GET')
    if v then
      -- A lease in force: this tick was not granted, so the newest
      -- granted tick is what it was.
      if tick ~= '0' then
        if last then redis.call('SET', tk, last, 'PX', ttl) else redis.call('DEL', tk) end
      end
      r = held(v, value, lease, fence)
    else
      -- The token as in lock_acquire.lua: the larger of the last + 1 and
      -- the server time in µs.
      local n = us
      local c = redis.call('SET', fence, usf, 'KEEPTTL', 'GET')
      if not c then
        redis.call('PEXPIRE', fence, ttl)
      elseif tonumber(c) >= n then
        n = tonumber(c) + 1
        redis.call('SET', fence, string.format('%d', n), 'KEEPTTL')
      end
      r = {n, tonumber(u)}
      if stride == 4 then
        local keys, argv = {lease, fence}, {value, atMost, ttl}
        if tick ~= '0' then
          keys[3], argv[4] = tk, tick
        end
        keys[#keys + 1] = KEYS[k + 4]
        argv[#argv + 1] = ARGV[a + 4]
        argv[#argv + 1] = ARGV[4]
        argv[#argv + 1] = ARGV[5]
        argv[#argv + 1] = ARGV[3]
        local grant = r
        r = ledger(keys, argv, function() return grant end)
      end
    end
  end
  out[i + 1] = r
end
return out
