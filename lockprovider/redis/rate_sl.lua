-- Sliding log, one limit (see rate.lua for the general case). ARGV: n,
-- limit, period µs. Reply as rate.lua's. State: a sorted set of admission
-- times, PEXPIRE one period after the newest.
--
-- The admissions in the window (scores above now - period) are counted
-- with ZCOUNT, so entries that slid out need not be removed first: one
-- decision in 16 removes them, which bounds the set at a little more than
-- the window's entries and saves a redis.call on the others. rate.lua
-- removes them on every decision; both read the same state.
local tm = redis.call('TIME')
local now = tm[1] * 1000000 + tm[2]
local n, lim, per = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local k = KEYS[1]
local from = string.format('(%d', now - per)
if tm[2] % 16 == 0 then redis.call('ZREMRANGEBYSCORE', k, '-inf', string.sub(from, 2)) end
local c = redis.call('ZCOUNT', k, from, '+inf')
local d = 0
if c + n > lim then
  local o = redis.call('ZRANGE', k, from, '+inf', 'BYSCORE', 'LIMIT', c + n - lim - 1, 1, 'WITHSCORES')
  d = tonumber(o[2]) + per - now
  if d < 1 then d = 1 end
end
local reset = 0
if d == 0 and n > 0 then
  -- Members are unique: the time's digits (seconds, then microseconds, as
  -- TIME gave them), a dash, and the position in the log.
  local stamp = tm[1] .. tm[2] .. '-'
  if n == 1 then
    redis.call('ZADD', k, string.format('%d', now), stamp .. (c + 1))
  else
    local m = {}
    for u = 1, n do
      m[#m + 1] = now
      m[#m + 1] = stamp .. (c + u)
      if #m >= 1000 then
        redis.call('ZADD', k, unpack(m))
        m = {}
      end
    end
    if #m > 0 then redis.call('ZADD', k, unpack(m)) end
  end
  redis.call('PEXPIRE', k, string.format('%d', math.floor((per + 999) / 1000)))
  c = c + n
  reset = per
elseif c > 0 then
  local o = redis.call('ZRANGE', k, -1, -1, 'WITHSCORES')
  reset = tonumber(o[2]) + per - now
  if reset < 0 then reset = 0 end
end
local rem = lim - c
if rem < 0 then rem = 0 end
-- A peek (n = 0) reports no retry of its own.
local dd = d
if n == 0 then dd = 0 end
return {(d == 0) and 1 or 0, now, dd, rem, d, reset}
