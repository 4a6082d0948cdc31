-- Acquire many names in one call: the tail of the batch script, after the
-- functions plain (lock_acquire.lua), ticked (lock_acquire_tick.lua) and
-- ledger (ledger_acquire.lua), each the single script's own text wrapped
-- with KEYS and ARGV as parameters (see batch.go), so every item runs
-- exactly the single acquire's logic.
--
-- KEYS  per item: lease, fencing counter, newest tick (the lease key again
--       for an item without a tick), and with the ledger the run list.
-- ARGV[1] record TTL ms, ARGV[2] keys per item (3, or 4 with the ledger),
-- ARGV[3] run flags, ARGV[4] max runs, ARGV[5] max age ms (ledger only);
-- then per item: lease value, atMostFor ms, tick ms or 0, lockedBy.
-- Returns one reply per item, each what the single script returns.
local ttl, stride = ARGV[1], tonumber(ARGV[2])
local out = {}
for i = 0, #KEYS / stride - 1 do
  local k, a = stride * i, 5 + 4 * i
  local tick = ARGV[a + 3]
  local fn, keys, argv
  if tick == '0' then
    fn, keys, argv = plain, {KEYS[k + 1], KEYS[k + 2]}, {ARGV[a + 1], ARGV[a + 2], ttl}
  else
    fn, keys, argv = ticked, {KEYS[k + 1], KEYS[k + 2], KEYS[k + 3]}, {ARGV[a + 1], ARGV[a + 2], ttl, tick}
  end
  if stride == 4 then
    keys[#keys + 1] = KEYS[k + 4]
    argv[#argv + 1] = ARGV[a + 4]
    argv[#argv + 1] = ARGV[3]
    argv[#argv + 1] = ARGV[4]
    argv[#argv + 1] = ARGV[5]
    out[i + 1] = ledger(keys, argv, fn)
  else
    out[i + 1] = fn(keys, argv)
  end
end
return out
