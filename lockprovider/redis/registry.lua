-- The job registry, selected by ARGV[1]. KEYS[1] hash: instance -> JSON
-- (its jobs), KEYS[2] sorted set: live instance by expiry ms, KEYS[3] hash:
-- instance -> last heartbeat ms, KEYS[4] sorted set: departed instance by
-- departure ms, KEYS[5] hash: departed instance -> 1 if it deregistered
-- (left) rather than lapsed (gone). Every write first moves lapsed entries
-- to the departed ones and drops those departed longer than ARGV[5] ms
-- ago; the keys expire the retention after the longest-lived entry, so
-- stopped instances leave nothing behind once it has passed.
--
-- 'reg' ARGV[2] instance, ARGV[3] JSON, ARGV[4] ttl ms -> {now, until}
-- 'hb'  ARGV[2] instance, ARGV[4] ttl ms -> {now, until}, or 0 if unknown
-- 'del' ARGV[2] instance -> 1
-- 'list' -> {now, instance, until, heartbeat, JSON, ...} of live entries
-- 'departed' -> {now, instance, departed, heartbeat, JSON, left, ...}
local tm = redis.call('TIME')
local now = tm[1] * 1000 + math.floor(tm[2] / 1000)
local op = ARGV[1]
local keep = tonumber(ARGV[5] or '0')
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
if op == 'departed' then
  -- Lapsed entries not yet moved by a write are departed too.
  local out = {now}
  local function add(set, from, to, left)
    local ids = redis.call('ZRANGEBYSCORE', set, from, to, 'WITHSCORES')
    for i = 1, #ids, 2 do
      local id = ids[i]
      out[#out + 1] = id
      out[#out + 1] = ids[i + 1]
      out[#out + 1] = redis.call('HGET', KEYS[3], id) or '0'
      out[#out + 1] = redis.call('HGET', KEYS[1], id) or ''
      out[#out + 1] = left and (redis.call('HGET', KEYS[5], id) or '0') or '0'
    end
  end
  add(KEYS[2], '(' .. (now - keep), now, false)
  add(KEYS[4], '(' .. (now - keep), '+inf', true)
  return out
end
-- The keys outlive the latest expiry or departure by the retention: an
-- entry that lapses with no write after it is still read as departed.
local function expire()
  local top = 0
  for _, set in ipairs({KEYS[2], KEYS[4]}) do
    local last = redis.call('ZRANGE', set, -1, -1, 'WITHSCORES')
    if #last > 0 then top = math.max(top, tonumber(last[2])) end
  end
  if top > 0 then
    for i = 1, 5 do redis.call('PEXPIREAT', KEYS[i], top + keep) end
  end
end
local lapsed = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'WITHSCORES')
for i = 1, #lapsed, 2 do
  redis.call('ZADD', KEYS[4], lapsed[i + 1], lapsed[i])
  redis.call('HDEL', KEYS[5], lapsed[i])
end
if #lapsed > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now) end
local old = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now - keep)
for _, id in ipairs(old) do
  redis.call('HDEL', KEYS[1], id)
  redis.call('HDEL', KEYS[3], id)
  redis.call('HDEL', KEYS[5], id)
end
if #old > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now - keep) end
-- Whatever this call returns, the moved entries' keys must expire.
if #lapsed > 0 or #old > 0 then expire() end
local id = ARGV[2]
if op == 'del' then
  if redis.call('ZSCORE', KEYS[2], id) then
    redis.call('ZREM', KEYS[2], id)
    redis.call('ZADD', KEYS[4], now, id)
    redis.call('HSET', KEYS[5], id, '1')
    expire()
  end
  return 1
end
if op == 'reg' then
  redis.call('HSET', KEYS[1], id, ARGV[3])
  redis.call('ZREM', KEYS[4], id)
  redis.call('HDEL', KEYS[5], id)
elseif not redis.call('ZSCORE', KEYS[2], id) then
  return 0
end
local u = now + tonumber(ARGV[4])
redis.call('ZADD', KEYS[2], u, id)
redis.call('HSET', KEYS[3], id, now)
expire()
return {now, u}
