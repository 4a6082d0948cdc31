-- GCRA, one limit (see rate.lua for the general case and the notation).
-- ARGV: n, max delay µs, tau = capacity·p, p, q. Reply as rate.lua's.
-- State: "tat" or "tat:fraction" (fraction in 1/q µs), PX until empty.
local floor = math.floor
local tm = redis.call('TIME')
local now = tm[1] * 1000000 + tm[2]
local n, maxd, tau, p, q = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local k = KEYS[1]
local tat, fr = now, 0
local v = redis.call('GET', k)
if v then
  tat = tonumber(v) -- nil for "tat:fraction"
  if not tat then
    local c = string.find(v, ':', 1, true)
    tat, fr = tonumber(string.sub(v, 1, c - 1)), tonumber(string.sub(v, c + 1))
  end
  if tat < now then tat, fr = now, 0 end
end
local s = fr + n * p
local d = tat + floor(s / q) - now - floor((tau - s % q) / q)
if d < 0 then d = 0 end
local ok = d <= maxd
if ok and n > 0 then
  local ts = now + d
  if tat < ts then tat, fr = ts, 0 end
  s = fr + n * p
  tat, fr = tat + floor(s / q), s % q
  local reset = tat - now
  if fr > 0 then reset = reset + 1 end
  local ms = floor((reset + 999) / 1000)
  if fr > 0 then
    redis.call('SET', k, string.format('%d:%d', tat, fr), 'PX', ms)
  else
    redis.call('SET', k, tat, 'PX', ms)
  end
end
local dt = tat - now
local rem = 0
if dt <= floor(tau / q) + 1 then
  rem = floor((tau - dt * q - fr) / p)
  if rem < 0 then rem = 0 end
end
local reset = dt
if fr > 0 then reset = reset + 1 end
-- A peek (n = 0) reports no retry of its own.
local dd = d
if n == 0 then dd = 0 end
return {ok and 1 or 0, now, dd, rem, d, reset}
