-- Acquire many names in one call (AcquireBatch). Each item gets exactly
-- the answer of lock_acquire.lua (no tick) or lock_acquire_tick.lua (a
-- tick), with fewer commands, since the claims of many jobs at one tick
-- must cost the server little: each command called from Lua costs about
-- as much again as the command itself. TIME once for the batch, and one
-- MGET reads every item's lease and newest tick; nothing else runs while
-- a script does, and names are distinct, so what it read for an item
-- holds until the item's own writes. An item
-- whose lease is in force, or whose tick is not newer than the newest
-- granted, is answered from that read alone: the replicas that find a
-- tick taken, most items of most batches with several replicas, cost the
-- server next to nothing. A lease in force, by another owner or the same
-- one, decides before a stale tick, as in lock_acquire_tick.lua. A grant
-- writes the lease, the newest tick and the counter: three commands
-- (four when its counter is new). The ledger's tail (ledger_acquire.lua)
-- is the single script's own text, wrapped as the function ledger (see
-- batch.go).
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
local n = #KEYS / stride
-- Every item's newest tick and lease: item i's at 2i + 1 and 2i + 2.
local names = {}
for i = 0, n - 1 do
  names[2 * i + 1], names[2 * i + 2] = KEYS[stride * i + 3], KEYS[stride * i + 1]
end
local got = redis.call('MGET', unpack(names))
for i = 0, n - 1 do
  local k, a = stride * i, 5 + 4 * i
  local lease, fence, tk = KEYS[k + 1], KEYS[k + 2], KEYS[k + 3]
  local value, atMost, tick = ARGV[a + 1], ARGV[a + 2], ARGV[a + 3]
  local last, v = got[2 * i + 1], got[2 * i + 2]
  local r
  if v then
    r = held(v, value, lease, fence)
  elseif tick ~= '0' and last and tonumber(last) >= tonumber(tick) then
    r = -1
  else
    local u = expiry[atMost]
    if not u then
      u = string.format('%d', ms + atMost)
      expiry[atMost] = u
    end
    redis.call('SET', lease, value, 'PXAT', u)
    if tick ~= '0' then redis.call('SET', tk, tick, 'PX', ttl) end
    -- The token as in lock_acquire.lua: the larger of the last + 1 and
    -- the server time in µs.
    local t = us
    local c = redis.call('SET', fence, usf, 'KEEPTTL', 'GET')
    if not c then
      redis.call('PEXPIRE', fence, ttl)
    elseif tonumber(c) >= t then
      t = tonumber(c) + 1
      redis.call('SET', fence, string.format('%d', t), 'KEEPTTL')
    end
    r = {t, tonumber(u)}
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
  out[i + 1] = r
end
return out
