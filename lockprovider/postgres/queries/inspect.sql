-- Inspect one name. $1 name.
SELECT t.name, t.lock_until > clock_timestamp(), t.locked_by, t.locked_at, t.lock_until, t.fence, t.last_tick, t.at_least_until
FROM {{.Locks}} t
WHERE t.name = $1
