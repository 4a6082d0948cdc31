-- Read a fenced hash: {value, fence}, or nil when the key does not exist.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return false
end
return redis.call('HMGET', KEYS[1], 'value', 'fence')
