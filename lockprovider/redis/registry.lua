-- The job registry, selected by ARGV[1]. KEYS[1] hash: instance -> JSON
-- (its jobs), KEYS[2] sorted set: instance by expiry ms, KEYS[3] hash:
-- instance -> last heartbeat ms. Every write first drops expired entries,
-- and the keys expire with the longest-lived entry, so stopped instances
-- leave nothing behind.
--
-- 'reg' ARGV[2] instance, ARGV[3] JSON, ARGV[4] ttl ms -> {now, until}
-- 'hb'  ARGV[2] instance, ARGV[4] ttl ms -> {now, until}, or 0 if unknown
-- 'del' ARGV[2] instance -> 1
-- 'list' -> {now, instance, until, heartbeat, JSON, ...} of live entries
local tm = redis.call('TIME')
local now = tm[1] * 1000 + math.floor(tm[2] / 1000)
local op = ARGV[1]
if op == 'list' then
  local out = {now}
  local live = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. now, '+inf', 'WITHSCORES')
  for i = 1, #live, 2 do
    local id = live[i]
    out[#out + 1] = id
    out[#out + 1] = live[i + 1]
    out[#out + 1] = redis.call('HGET', KEYS[3], id) or '0'
    out[#out + 1] = redis.call('HGET', KEYS[1], id) or ''
  end
  return out
end
local old = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
for _, id in ipairs(old) do
  redis.call('HDEL', KEYS[1], id)
  redis.call('HDEL', KEYS[3], id)
end
if #old > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now) end
local id = ARGV[2]
if op == 'del' then
  redis.call('ZREM', KEYS[2], id)
  redis.call('HDEL', KEYS[1], id)
  redis.call('HDEL', KEYS[3], id)
  return 1
end
if op == 'reg' then
  redis.call('HSET', KEYS[1], id, ARGV[3])
elseif not redis.call('ZSCORE', KEYS[2], id) then
  return 0
end
local u = now + tonumber(ARGV[4])
redis.call('ZADD', KEYS[2], u, id)
redis.call('HSET', KEYS[3], id, now)
local top = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
for i = 1, 3 do redis.call('PEXPIREAT', KEYS[i], top[2]) end
return {now, u}
