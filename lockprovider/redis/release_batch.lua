-- Release many leases in one call (ReleaseBatch): lock_release.lua, the
-- function release before this text, for each item with its own KEYS and
-- ARGV, so every item is answered, shortened to its at-least bound and
-- announced exactly as by the single script.
--
-- KEYS the leases; ARGV their owners, in the same order.
-- Returns one reply per item, each what lock_release.lua returns.
local out = {}
for i = 1, #KEYS do
  out[i] = release({KEYS[i]}, {ARGV[i]})
end
return out
