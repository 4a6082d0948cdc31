-- Read a job's runs: the stream from ARGV[1] (ms, or '-') on, newest first,
-- and the last success.
-- KEYS[1] run stream, KEYS[2] last success
return {redis.call('XREVRANGE', KEYS[1], '+', ARGV[1]), redis.call('GET', KEYS[2])}
