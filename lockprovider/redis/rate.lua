-- One rate-limit decision (see ratelimit.go and lockprovider.RateLimiter).
-- KEYS[i]: the state of limit i; all keys share the hash tag of the key.
-- ARGV: n, max delay µs, refund (0/1), then six per limit:
--   algorithm (1 fixed window, 2 sliding log, 3 sliding window,
--   4 token bucket, 5 gcra), limit L, period P µs, capacity B,
--   p and q with p/q = P/L reduced (the emission interval in µs).
-- Reply: allowed, now µs, delay-or-retry µs, then per limit remaining,
-- retry µs, reset µs.
--
-- Integers only: every value stays below 2^52 (checked by the caller's
-- validation), so doubles compute them exactly. The sliding window's
-- estimate is the one float, compared the same way by every provider.
-- State strings: fixed "window:count", sliding window "window:cur:prev",
-- token bucket "tokens:last", gcra "tat:fraction"; sliding log a ZSET.
local floor = math.floor
local tm = redis.call('TIME')
local now = tonumber(tm[1]) * 1000000 + tonumber(tm[2])
local n = tonumber(ARGV[1])
local maxd = tonumber(ARGV[2])
local refund = ARGV[3] == '1'
local nk = #KEYS
local DEPTH = 1125899906842624 -- 2^50: how deep a bucket may owe, in units

-- S holds four numbers per limit (state a, b, c and its wait d): one
-- table rather than one per field keeps the script's allocations low.
-- The limits' parameters are read from ARGV again where needed.
local S = {}
local D = 0

for i = 1, nk do
  local j = 3 + (i - 1) * 6
  local a, lim, per, cap, pi, qi = tonumber(ARGV[j + 1]), tonumber(ARGV[j + 2]), tonumber(ARGV[j + 3]),
    tonumber(ARGV[j + 4]), tonumber(ARGV[j + 5]), tonumber(ARGV[j + 6])
  local k = KEYS[i]
  local di = 0
  if a == 2 then
    redis.call('ZREMRANGEBYSCORE', k, '-inf', now - per)
    local c = redis.call('ZCARD', k)
    S[4 * i - 3] = c
    if c + n > lim then
      local o = redis.call('ZRANGE', k, c + n - lim - 1, c + n - lim - 1, 'WITHSCORES')
      di = tonumber(o[2]) + per - now
      if di < 1 then di = 1 end
    end
  else
    local v = redis.call('GET', k)
    if a == 5 then
      local tat, fr = now, 0
      if v then
        -- "tat" or "tat:fraction" (rate_gcra.lua omits a zero fraction)
        tat = tonumber(v) -- nil for "tat:fraction"
        if not tat then
          local c = string.find(v, ':', 1, true)
          tat, fr = tonumber(string.sub(v, 1, c - 1)), tonumber(string.sub(v, c + 1))
        end
        if tat < now then tat, fr = now, 0 end
      end
      S[4 * i - 3], S[4 * i - 2] = tat, fr
      local s = fr + n * pi
      local nt, nf = tat + floor(s / qi), s % qi
      di = nt - now - floor((cap * pi - nf) / qi)
      if di < 0 then di = 0 end
    elseif a == 4 then
      local C = cap * pi
      local tok, last = C, now
      if v then
        local x, y = string.match(v, '^(%-?%d+):(%d+)$')
        tok, last = tonumber(x), tonumber(y)
      end
      local el = now - last
      if el < 0 then el = 0 end
      local need = C - tok
      if need <= 0 or el >= floor((need + qi - 1) / qi) then tok = C else tok = tok + el * qi end
      S[4 * i - 3] = tok
      local req = n * pi
      if tok < req then di = floor((req - tok + qi - 1) / qi) end
    elseif a == 1 then
      local w = floor(now / per)
      local wid, cnt = w, 0
      if v then
        local x, y = string.match(v, '^(%d+):(%d+)$')
        wid, cnt = tonumber(x), tonumber(y)
        if wid < w then wid, cnt = w, 0 end
      end
      S[4 * i - 3], S[4 * i - 2] = wid, cnt
      if cnt + n > lim then di = (wid + 1) * per - now end
    else
      local w = floor(now / per)
      local wid, cur, prev = w, 0, 0
      if v then
        local x, y, z = string.match(v, '^(%d+):(%d+):(%d+)$')
        wid, cur, prev = tonumber(x), tonumber(y), tonumber(z)
        if wid == w - 1 then
          wid, cur, prev = w, 0, cur
        elseif wid < w - 1 then
          wid, cur, prev = w, 0, 0
        end
      end
      S[4 * i - 3], S[4 * i - 2], S[4 * i - 1] = wid, cur, prev
      local el = now - wid * per
      if el < 0 then el = 0 end
      local est = prev * (per - el) / per
      if est + (cur + n) > lim then
        if cur + n <= lim then
          di = per - floor((lim - cur - n) * per / prev) - el
          if di < 1 then di = 1 end
        else
          local ep = 0
          if cur > 0 then
            ep = per - floor((lim - n) * per / cur)
            if ep < 0 then ep = 0 end
          end
          di = per - el + ep
        end
      end
    end
  end
  S[4 * i] = di
  if di > D then D = di end
end

local allowed = D <= maxd
for i = 1, nk do
  local j = 3 + (i - 1) * 6
  if ARGV[j + 1] == '4' and D > floor(DEPTH / tonumber(ARGV[j + 6])) then allowed = false end
end
local charge = allowed and n > 0
if refund then allowed, charge, D = true, false, 0 end

local out = {allowed and 1 or 0, now, D}
if n == 0 then out[3] = 0 end

for i = 1, nk do
  local j = 3 + (i - 1) * 6
  local a, lim, per, cap, pi, qi = tonumber(ARGV[j + 1]), tonumber(ARGV[j + 2]), tonumber(ARGV[j + 3]),
    tonumber(ARGV[j + 4]), tonumber(ARGV[j + 5]), tonumber(ARGV[j + 6])
  local k = KEYS[i]
  local rem, reset = 0, 0
  if a == 5 then
    local tat, fr = S[4 * i - 3], S[4 * i - 2]
    local write = false
    if charge then
      local ts = now + D
      if tat < ts then tat, fr = ts, 0 end
      local s = fr + n * pi
      tat, fr = tat + floor(s / qi), s % qi
      write = true
    elseif refund then
      local s = fr - n * pi
      tat, fr = tat + floor(s / qi), s % qi
      if tat < now then tat, fr = now, 0 end
      write = true
    end
    local dt = tat - now
    local tau = cap * pi
    if dt <= floor(tau / qi) + 1 then rem = floor((tau - dt * qi - fr) / pi) end
    reset = dt
    if fr > 0 then reset = reset + 1 end
    if write then
      if reset > 0 then
        if fr > 0 then
          redis.call('SET', k, string.format('%d:%d', tat, fr), 'PX', floor((reset + 999) / 1000))
        else
          redis.call('SET', k, tat, 'PX', floor((reset + 999) / 1000))
        end
      else
        redis.call('DEL', k)
      end
    end
  elseif a == 4 then
    local C = cap * pi
    local tok = S[4 * i - 3]
    local write = false
    if charge then
      local top = C - D * qi
      if tok < top then top = tok end
      tok = top - n * pi
      write = true
    elseif refund then
      tok = tok + n * pi
      if tok > C then tok = C end
      write = true
    end
    rem = floor(tok / pi)
    reset = floor((C - tok + qi - 1) / qi)
    if write then
      if reset > 0 then
        redis.call('SET', k, string.format('%d:%d', tok, now), 'PX', floor((reset + 999) / 1000))
      else
        redis.call('DEL', k)
      end
    end
  elseif a == 1 then
    local wid, cnt = S[4 * i - 3], S[4 * i - 2]
    local e = (wid + 1) * per - now
    if charge then
      cnt = cnt + n
      -- Window index and count are below 1e14, so Lua prints them exactly.
      redis.call('SET', k, wid .. ':' .. cnt, 'PX', floor((e + 999) / 1000))
    end
    rem = lim - cnt
    if cnt > 0 then reset = e end
  elseif a == 2 then
    local c = S[4 * i - 3]
    if charge then
      local m = {}
      local stamp = tm[1] .. tm[2] .. '-' -- as rate_sl.lua
      for u = 1, n do
        m[#m + 1] = now
        m[#m + 1] = stamp .. (c + u)
        if #m >= 1000 then
          redis.call('ZADD', k, unpack(m))
          m = {}
        end
      end
      if #m > 0 then redis.call('ZADD', k, unpack(m)) end
      redis.call('PEXPIRE', k, floor((per + 999) / 1000))
      c = c + n
      reset = per
    elseif c > 0 then
      local o = redis.call('ZRANGE', k, -1, -1, 'WITHSCORES')
      reset = tonumber(o[2]) + per - now
      if reset < 0 then reset = 0 end
    end
    rem = lim - c
  else
    local wid, cur, prev = S[4 * i - 3], S[4 * i - 2], S[4 * i - 1]
    local el = now - wid * per
    if el < 0 then el = 0 end
    if charge then cur = cur + n end
    rem = floor(lim - prev * (per - el) / per - cur)
    if cur > 0 then
      reset = 2 * per - el
    elseif prev > 0 then
      reset = per - el
    end
    if charge then
      redis.call('SET', k, wid .. ':' .. cur .. ':' .. prev, 'PX', floor((reset + 999) / 1000))
    end
  end
  if rem < 0 then rem = 0 end
  out[#out + 1] = rem
  out[#out + 1] = S[4 * i]
  out[#out + 1] = reset
end
return out
