-- Read a job's run records, newest claim first, and its last success.
-- KEYS[1] run list, KEYS[2] last success (see ledger_release.lua)
return {redis.call('LRANGE', KEYS[1], 0, -1), redis.call('GET', KEYS[2])}
