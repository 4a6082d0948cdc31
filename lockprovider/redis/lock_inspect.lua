-- Read the state of one name.
--
-- KEYS[1] lease, KEYS[2] fencing counter, KEYS[3] newest tick (as in
-- lock_acquire.lua and lock_acquire_tick.lua)
-- Returns {value or nil, expiry ms or -2, fence or nil, tick or nil}.
return {redis.call('GET', KEYS[1]), redis.call('PEXPIRETIME', KEYS[1]),
  redis.call('GET', KEYS[2]), redis.call('GET', KEYS[3])}
