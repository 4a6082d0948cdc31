-- Acquire the lease on one name: the plain path, three redis.calls (TIME,
-- SET NX PXAT GET, SET GET of the counter).
--
-- KEYS[1] lease, the value built by the client (see lease.go):
--         "<owner>\n<atLeast> <grant> <tick ms or 0>\n<lockedBy>"
-- KEYS[2] fencing counter: the last token granted; TTL set when created
-- ARGV[1] lease value (it starts with the owner and a newline),
-- ARGV[2] atMostFor ms, ARGV[3] counter TTL ms
-- Returns {token, expiry ms} for a new grant, {token, value, expiry ms}
-- when the owner already holds the lease, 0 when another owner does.
--
-- TIME comes first: the lease then ends exactly at grant + atMostFor
-- (PXAT), which the client computes from the reply without a PEXPIRETIME.
local tm = redis.call('TIME')
-- Integers go to Redis as strings: a Lua number would be formatted as a
-- double, which costs more.
local un = tm[1] * 1000 + math.floor(tm[2] / 1000) + ARGV[2]
local u = string.format('%d', un)
local v = redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PXAT', u, 'GET')
if v then
  -- Held: by the same owner if the values' first lines match. The counter
  -- moves only on grants, so it still carries the owner's token.
  local n = string.find(ARGV[1], '\n', 1, true)
  if string.sub(v, 1, n) ~= string.sub(ARGV[1], 1, n) then return 0 end
  return {redis.call('GET', KEYS[2]), v, redis.call('PEXPIRETIME', KEYS[1])}
end
-- The token is the larger of the last token + 1 and the server time in µs:
-- a counter lost or rolled back (failover to a lagging replica, restart
-- without persistence) cannot repeat a token, and a clock stepped back
-- cannot either.
local n = tm[1] * 1000000 + tm[2]
local f = string.format('%d', n)
local c = redis.call('SET', KEYS[2], f, 'KEEPTTL', 'GET')
if not c then
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
elseif tonumber(c) >= n then
  n = tonumber(c) + 1
  f = string.format('%d', n)
  redis.call('SET', KEYS[2], f, 'KEEPTTL')
end
return {n, un}
