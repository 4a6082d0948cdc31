-- List every name.
SELECT t.name, t.lock_until > clock_timestamp(), t.locked_by, t.locked_at, t.lock_until, t.fence, t.last_tick
FROM {{.Locks}} t
WHERE t.owner <> ''  -- not a waiter placeholder (mark.sql)
ORDER BY t.name
