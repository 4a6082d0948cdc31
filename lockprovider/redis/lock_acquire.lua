-- Acquire the lease on one name: the plain path. Every redis.call costs, so
-- the grant takes three (SET NX PX, INCR, PEXPIRETIME) and no TIME: the
-- grant time is the key's expiry minus the lease length.
--
-- KEYS[1] lease, the value built by the client (see lease.go):
--         "<owner>\n<atLeast> <grant> <tick ms or 0>\n<lockedBy>"
-- KEYS[2] fencing counter; TTL set when it is created, never refreshed
-- ARGV[1] lease value (it starts with the owner and a newline),
-- ARGV[2] atMostFor ms, ARGV[3] counter TTL ms
-- Returns {fence, expiry ms} for a new grant, {fence, value, expiry ms}
-- when the owner already holds the lease, 0 when another owner does.
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local f = redis.call('INCR', KEYS[2])
  if f == 1 then
    -- The counter was missing: restart from server time in microseconds,
    -- above every token issued before it was lost.
    local tm = redis.call('TIME')
    f = tm[1] * 1000000 + tm[2]
    redis.call('SET', KEYS[2], f, 'PX', ARGV[3])
  end
  return {f, redis.call('PEXPIRETIME', KEYS[1])}
end
-- Held: by the same owner if the values' first lines match.
local v = redis.call('GET', KEYS[1])
local n = string.find(ARGV[1], '\n', 1, true)
if string.sub(v, 1, n) ~= string.sub(ARGV[1], 1, n) then return 0 end
-- The counter moves only on grants, so while the owner holds the lease it
-- still carries the owner's token.
return {redis.call('GET', KEYS[2]), v, redis.call('PEXPIRETIME', KEYS[1])}
