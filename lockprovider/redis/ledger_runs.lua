-- Read a job's run records, newest claim first (see ledger_acquire.lua).
-- KEYS[1] run list
return redis.call('LRANGE', KEYS[1], 0, -1)
