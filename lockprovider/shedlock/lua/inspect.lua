-- Read one name (see acquire.lua for the keys).
-- Returns {value or false, expiry ms, owner, grant, fence, tick}, the last
-- four false where the hash has none.
-- pcall: the key may be another name's hash (a name ending in ":baton"),
-- which GET refuses; it then holds no lock.
local v = redis.pcall('GET', KEYS[1])
if type(v) == 'table' then v = false end
local m = redis.call('HMGET', KEYS[2], 'o', 'g', 'f', 't')
return {v or false, redis.call('PEXPIRETIME', KEYS[1]), m[1] or false, m[2] or false, m[3] or false, m[4] or false}
