-- Token bucket, one limit (see rate.lua for the general case and the
-- notation). ARGV: n, max delay µs, C = capacity·p, p, q. Reply as
-- rate.lua's. State: "tokens:last" (1 token = p units), PX until full.
local floor = math.floor
local tm = redis.call('TIME')
local now = tm[1] * 1000000 + tm[2]
local n, maxd, C, p, q = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local k = KEYS[1]
local tok = C
local v = redis.call('GET', k)
if v then
  local c = string.find(v, ':', 1, true)
  local last = tonumber(string.sub(v, c + 1))
  tok = tonumber(string.sub(v, 1, c - 1))
  local el = now - last
  if el < 0 then el = 0 end
  local need = C - tok
  if need <= 0 or el >= floor((need + q - 1) / q) then tok = C else tok = tok + el * q end
end
local req = n * p
local d = 0
if tok < req then d = floor((req - tok + q - 1) / q) end
local ok = d <= maxd and d <= floor(1125899906842624 / q)
if ok and n > 0 then
  local cap = C - d * q
  if tok < cap then cap = tok end
  tok = cap - req
  local reset = floor((C - tok + q - 1) / q)
  redis.call('SET', k, string.format('%d:%d', tok, now), 'PX', floor((reset + 999) / 1000))
end
local rem = floor(tok / p)
if rem < 0 then rem = 0 end
local reset = floor((C - tok + q - 1) / q)
-- A peek (n = 0) reports no retry of its own.
local dd = d
if n == 0 then dd = 0 end
return {ok and 1 or 0, now, dd, rem, d, reset}
