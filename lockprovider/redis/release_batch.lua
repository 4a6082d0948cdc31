-- Release many leases in one call (ReleaseBatch, ReleaseRunBatch): the
-- function release before this text is lock_release.lua (or, with the
-- ledger, ReleaseRun's script: lock_release.lua with ledger_release.lua's
-- tail) taking its own KEYS and ARGV, called for each item, so every item
-- is answered, shortened to its at-least bound, announced and recorded
-- exactly as by the single script.
--
-- ARGV[1] the keys per item: 1 (the lease), or 2 (the lease and its run
-- list) with the ledger. Then per item the single script's KEYS, and its
-- ARGV after ARGV[1]: the owner, or with the ledger the four arguments of
-- ledger_release.lua.
-- Returns one reply per item, each what the single script returns.
local nk = tonumber(ARGV[1])
local na = nk == 1 and 1 or 4
local out = {}
for i = 0, #KEYS / nk - 1 do
  local keys, argv = {}, {}
  for k = 1, nk do keys[k] = KEYS[nk * i + k] end
  for a = 1, na do argv[a] = ARGV[1 + na * i + a] end
  out[i + 1] = release(keys, argv)
end
return out
