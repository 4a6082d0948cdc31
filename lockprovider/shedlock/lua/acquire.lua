-- Acquire a name on ShedLock's Redis key, with ShedLock's semantics: the
-- key is set only if absent (SET NX with an expiry of atMostFor), so a key
-- of a Java replica, or of any other holder, refuses the grant.
--
-- KEYS[1] ShedLock's key "<prefix>:<env>:<name>"; its value is ShedLock's
--         "ADDED:<ISO-8601 UTC time, ms>@<locked by>:<id>", the id being
--         the owner token for a Go grant.
-- KEYS[2] baton's hash in the same slot, which ShedLock never reads:
--         o owner of the last Go grant, g its grant time (ms), a its
--         minimum-hold bound (ms), f fencing token, t newest tick (ms),
--         j time of the newest Java grant a Go replica found (ms).
-- ARGV[1] owner, ARGV[2] locked by, ARGV[3] atMostFor ms, ARGV[4]
-- atLeastFor ms, ARGV[5] tick ms (0 for none), ARGV[6] hash TTL ms.
-- Returns {1, grant, until, atLeastUntil, fence, tick} for a grant or the
-- owner's current grant, {0} when held by another, {-1} for a stale tick.
local owner = ARGV[1]
local v = redis.call('GET', KEYS[1])
if v then
  -- Held. The owner's own grant ends in ":<owner>" and is recorded in the
  -- hash; a Java value ends in a UUID.
  if string.sub(v, -#owner - 1) == ':' .. owner then
    local m = redis.call('HMGET', KEYS[2], 'o', 'g', 'a', 'f', 't')
    if m[1] == owner then
      return {1, tonumber(m[2]), redis.call('PEXPIRETIME', KEYS[1]), tonumber(m[3]), tonumber(m[4]), tonumber(m[5] or '0')}
    end
  end
  -- Held by someone else. If that is a Java grant (not the last Go
  -- grant), remember its time in 'j': ShedLock deletes its key on unlock,
  -- and a Go replica that fires late must still see that the tick was
  -- served.
  local o = redis.call('HGET', KEYS[2], 'o')
  local y, mo, d, h, mi, se, ms = string.match(v, '^ADDED:(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)%.(%d+)Z@')
  if y and not (o and string.sub(v, -#o - 1) == ':' .. o) then
    -- Days since the epoch of a civil date.
    y, mo = tonumber(y), tonumber(mo)
    if mo <= 2 then y = y - 1 end
    local era = math.floor(y / 400)
    local yoe = y - era * 400
    local mp = (mo + 9) % 12
    local doy = math.floor((153 * mp + 2) / 5) + tonumber(d) - 1
    local doe = yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy
    local days = era * 146097 + doe - 719468
    local at = ((days * 24 + tonumber(h)) * 60 + tonumber(mi)) * 60000 + tonumber(se) * 1000 + tonumber(ms)
    if at > tonumber(redis.call('HGET', KEYS[2], 'j') or '0') then
      redis.call('HSET', KEYS[2], 'j', at)
      if redis.call('PTTL', KEYS[2]) < 0 then redis.call('PEXPIRE', KEYS[2], ARGV[6]) end
    end
  end
  return {0}
end
local tick = tonumber(ARGV[5])
if tick > 0 then
  -- Refuse a tick not newer than the last Go tick, or than the last Java
  -- grant seen (a Java replica that ran at or after the tick's time
  -- served it).
  local m = redis.call('HMGET', KEYS[2], 't', 'j')
  if tonumber(m[1] or '0') >= tick or tonumber(m[2] or '0') >= tick then
    return {-1}
  end
end

local tm = redis.call('TIME')
local now = tonumber(tm[1]) * 1000 + math.floor(tonumber(tm[2]) / 1000)

-- ShedLock's value format, with the grant time in UTC and exactly three
-- fractional digits (civil date from days since the epoch).
local function iso(ms)
  local s = math.floor(ms / 1000)
  local days = math.floor(s / 86400)
  local sod = s - days * 86400
  local z = days + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local d = doy - math.floor((153 * mp + 2) / 5) + 1
  local m = mp < 10 and mp + 3 or mp - 9
  local y = yoe + era * 400
  if m <= 2 then y = y + 1 end
  return string.format('%04d-%02d-%02dT%02d:%02d:%02d.%03dZ', y, m, d,
    math.floor(sod / 3600), math.floor(sod % 3600 / 60), sod % 60, ms % 1000)
end

local untilMs = now + tonumber(ARGV[3])
if not redis.call('SET', KEYS[1], 'ADDED:' .. iso(now) .. '@' .. ARGV[2] .. ':' .. owner, 'NX', 'PXAT', untilMs) then
  return {0}
end
-- Tokens never go below the server time in microseconds, so they keep
-- increasing when the hash was lost (expiry, a restart without
-- persistence) and across a switch to or from baton's native keys.
local us = tonumber(tm[1]) * 1000000 + tonumber(tm[2])
local f = tonumber(redis.call('HGET', KEYS[2], 'f') or '0') + 1
if f < us then f = us end
local least = now + tonumber(ARGV[4])
redis.call('HSET', KEYS[2], 'o', owner, 'g', now, 'a', least, 'f', f)
if tick > 0 then redis.call('HSET', KEYS[2], 't', tick) end
redis.call('PEXPIRE', KEYS[2], ARGV[6])
return {1, now, untilMs, least, f, tick > 0 and tick or tonumber(redis.call('HGET', KEYS[2], 't') or '0')}
