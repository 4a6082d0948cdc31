-- Release a lease on one master if the caller holds it here: delete it and
-- announce the release, or, before its at-least bound (this master's
-- clock), shorten it to end at that bound, owned by nobody.
--
-- KEYS[1] lease
-- ARGV[1] owner, ARGV[2] '1' to delete regardless of the at-least bound
-- (an abandoned acquire: its lease never counted), ARGV[3..] with '1' the
-- ids of the abandoned Acquire call's attempts: only their values are
-- deleted
-- Returns 1, or 0 when the caller does not hold the lease here.
local v = redis.call('GET', KEYS[1])
if not v or string.sub(v, 1, #ARGV[1] + 1) ~= ARGV[1] .. '\n' then return 0 end
if ARGV[2] == '1' then
  local id, mine = string.match(v, '^%d+ %d+ %d+ %d+ %d+ %d+ (%d+)', #ARGV[1] + 2), false
  for i = 3, #ARGV do mine = mine or id == ARGV[i] end
  if not mine then return 0 end
end
local _, _, a = string.find(v, '^%d+ (%d+)', #ARGV[1] + 2)
if a ~= '0' and ARGV[2] ~= '1' then
  local tm = redis.call('TIME')
  if tonumber(a) > tm[1] * 1000 + math.floor(tm[2] / 1000) then
    -- Held until the bound, by nobody: the owner is dropped from the
    -- value, so neither it nor anyone else can extend, release or
    -- re-acquire it as their own.
    redis.call('SET', KEYS[1], string.sub(v, #ARGV[1] + 1), 'PXAT', a)
    return 1
  end
end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', KEYS[1], '')
return 1
