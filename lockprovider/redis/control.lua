-- Cluster-wide control of scheduled jobs, selected by ARGV[1]. KEYS[1] set:
-- paused jobs, KEYS[2] hash: request id -> "requested\nuntil\njob\nby\nid"
-- (times in ms), KEYS[3] sorted set: request id by expiry ms, KEYS[4] hash:
-- paused job -> ms its pause began, KEYS[5] hash: job -> "from\nuntil" ms of
-- its latest ended pause. ARGV[#ARGV] is the channel announcing changes
-- (sharded pub/sub, same slot as the keys).
-- Every key expires: the flags and their starts RecordTTL after the last
-- pause, the ended pauses RecordTTL after the last resume, the requests
-- with the longest-lived one.
--
-- 'pause' ARGV[2] job, ARGV[3] '1' or '0', ARGV[4] record TTL ms -> 1
-- 'req'   ARGV[2] id, ARGV[3] "job\nby\nid", ARGV[4] ttl ms -> {now, until}
-- 'claim' ARGV[2] id -> the stored request, or 0 if none is pending
-- 'state' -> {now, #paused, paused..., #spans, "job\nfrom\nuntil"...,
--             requests...}: until is empty for a job paused now
local tm = redis.call('TIME')
local now = tm[1] * 1000 + math.floor(tm[2] / 1000)
local op = ARGV[1]
local channel = ARGV[#ARGV]
if op == 'pause' then
  if ARGV[3] == '1' then
    -- A new flag starts a pause; a set one keeps its start (a flag set
    -- by an older version, without one, starts now).
    if redis.call('SADD', KEYS[1], ARGV[2]) == 1 then
      redis.call('HSET', KEYS[4], ARGV[2], now)
    else
      redis.call('HSETNX', KEYS[4], ARGV[2], now)
    end
    redis.call('PEXPIRE', KEYS[1], ARGV[4])
    redis.call('PEXPIRE', KEYS[4], ARGV[4])
  elseif redis.call('SREM', KEYS[1], ARGV[2]) == 1 then
    local from = redis.call('HGET', KEYS[4], ARGV[2])
    redis.call('HDEL', KEYS[4], ARGV[2])
    if from then
      redis.call('HSET', KEYS[5], ARGV[2], from .. '\n' .. now)
      redis.call('PEXPIRE', KEYS[5], ARGV[4])
    end
  end
  redis.call('SPUBLISH', channel, 'p')
  return 1
end
if op == 'req' then
  local u = now + tonumber(ARGV[4])
  redis.call('HSET', KEYS[2], ARGV[2], now .. '\n' .. u .. '\n' .. ARGV[3])
  redis.call('ZADD', KEYS[3], u, ARGV[2])
  local top = redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')
  redis.call('PEXPIREAT', KEYS[2], top[2])
  redis.call('PEXPIREAT', KEYS[3], top[2])
  redis.call('SPUBLISH', channel, 'r')
  return {now, u}
end
if op == 'claim' then
  local v = redis.call('HGET', KEYS[2], ARGV[2])
  if not v then return 0 end
  redis.call('HDEL', KEYS[2], ARGV[2])
  local u = redis.call('ZSCORE', KEYS[3], ARGV[2])
  redis.call('ZREM', KEYS[3], ARGV[2])
  if not u or tonumber(u) <= now then return 0 end
  return v
end
-- 'state'
local old = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)
for _, id in ipairs(old) do redis.call('HDEL', KEYS[2], id) end
if #old > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now) end
local paused = redis.call('SMEMBERS', KEYS[1])
local out = {now, #paused}
for _, j in ipairs(paused) do out[#out + 1] = j end
local spans = {}
local ended = redis.call('HGETALL', KEYS[5])
for i = 1, #ended, 2 do spans[#spans + 1] = ended[i] .. '\n' .. ended[i + 1] end
for _, j in ipairs(paused) do
  local from = redis.call('HGET', KEYS[4], j)
  if from then spans[#spans + 1] = j .. '\n' .. from .. '\n' end
end
out[#out + 1] = #spans
for _, v in ipairs(spans) do out[#out + 1] = v end
for _, v in ipairs(redis.call('HVALS', KEYS[2])) do out[#out + 1] = v end
return out
