-- Carry each name's fencing token, newest tick and live hold from the
-- ShedLock table into baton's native table, so that the native provider
-- grants larger tokens and does not take a name held in the ShedLock table
-- before that hold ends. A native row keeps its own lease; only a larger
-- token or tick and, when its lease is over, the carried hold replace it.
-- The carried hold belongs to no owner (owner ''). In the ON CONFLICT
-- clause excluded.at_least_until is the current server time.
INSERT INTO {{.Native}} AS n
    (name, owner, locked_by, locked_at, lock_until, at_least_until, fence, last_tick)
SELECT s.name, '', s.locked_by, {{inst "s.locked_at"}},
    GREATEST(c.ts, {{inst "s.lock_until"}}), c.ts,
    GREATEST(COALESCE(s.fence, 0), (extract(epoch FROM c.ts) * 1000000)::bigint), s.last_tick
FROM {{.Table}} s, (SELECT clock_timestamp() AS ts) c
ON CONFLICT (name) DO UPDATE SET
    fence          = GREATEST(n.fence, excluded.fence),
    last_tick      = GREATEST(n.last_tick, excluded.last_tick),
    owner          = CASE WHEN n.lock_until > excluded.at_least_until THEN n.owner ELSE '' END,
    lock_until     = GREATEST(n.lock_until, excluded.lock_until),
    at_least_until = CASE WHEN n.lock_until > excluded.at_least_until THEN n.at_least_until ELSE excluded.lock_until END
