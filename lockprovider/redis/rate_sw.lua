-- Sliding window counter, one limit (see rate.lua for the general case).
-- ARGV: n, limit, period µs. Reply as rate.lua's. State:
-- "window:current:previous", PX until the current window has slid out.
local floor = math.floor
local tm = redis.call('TIME')
local now = tm[1] * 1000000 + tm[2]
local n, lim, per = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local k = KEYS[1]
local w = floor(now / per)
local wid, cur, prev = w, 0, 0
local v = redis.call('GET', k)
if v then
  -- find and sub: cheaper than a pattern match with captures.
  local i = string.find(v, ':', 1, true)
  local j = string.find(v, ':', i + 1, true)
  wid, cur, prev = tonumber(string.sub(v, 1, i - 1)), tonumber(string.sub(v, i + 1, j - 1)), tonumber(string.sub(v, j + 1))
  if wid == w - 1 then
    wid, cur, prev = w, 0, cur
  elseif wid < w - 1 then
    wid, cur, prev = w, 0, 0
  end
end
local el = now - wid * per
if el < 0 then el = 0 end
local est = prev * (per - el) / per
local d = 0
if est + (cur + n) > lim then
  if cur + n <= lim then
    d = per - floor((lim - cur - n) * per / prev) - el
    if d < 1 then d = 1 end
  else
    local ep = 0
    if cur > 0 then
      ep = per - floor((lim - n) * per / cur)
      if ep < 0 then ep = 0 end
    end
    d = per - el + ep
  end
end
if d == 0 and n > 0 then cur = cur + n end
local reset = 0
if cur > 0 then
  reset = 2 * per - el
elseif prev > 0 then
  reset = per - el
end
if d == 0 and n > 0 then
  -- Window index and counts are below 1e14, so Lua prints them exactly.
  redis.call('SET', k, wid .. ':' .. cur .. ':' .. prev, 'PX', string.format('%d', floor((reset + 999) / 1000)))
end
local rem = floor(lim - est - cur)
if rem < 0 then rem = 0 end
-- A peek (n = 0) reports no retry of its own.
local dd = d
if n == 0 then dd = 0 end
return {(d == 0) and 1 or 0, now, dd, rem, d, reset}
