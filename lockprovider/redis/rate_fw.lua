-- Fixed window, one limit (see rate.lua for the general case). ARGV: n,
-- limit, period µs. Reply as rate.lua's. State: "window:count", PX until
-- the window ends.
local tm = redis.call('TIME')
local now = tm[1] * 1000000 + tm[2]
local n, lim, per = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local k = KEYS[1]
local w = math.floor(now / per)
local wid, cnt = w, 0
local v = redis.call('GET', k)
if v then
  local c = string.find(v, ':', 1, true)
  wid, cnt = tonumber(string.sub(v, 1, c - 1)), tonumber(string.sub(v, c + 1))
  if wid < w then wid, cnt = w, 0 end
end
local e = (wid + 1) * per - now
local d = 0
if cnt + n > lim then d = e end
if d == 0 and n > 0 then
  cnt = cnt + n
  -- Window index and count are below 1e14, so Lua prints them exactly.
  redis.call('SET', k, wid .. ':' .. cnt, 'PX', math.floor((e + 999) / 1000))
end
local rem = lim - cnt
if rem < 0 then rem = 0 end
local reset = 0
if cnt > 0 then reset = e end
-- A peek (n = 0) reports no retry of its own.
local dd = d
if n == 0 then dd = 0 end
return {(d == 0) and 1 or 0, now, dd, rem, d, reset}
