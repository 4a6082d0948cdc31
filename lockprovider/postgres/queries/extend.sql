-- Extend: one UPDATE of a live lease held by the owner.
-- $1 name, $2 owner, $3 at_most_for, $4 at_least_for.
-- The lease must be live when the row is locked, not when the statement
-- began (c.now): an UPDATE that waited behind a force-release re-checks
-- the row as the force-release left it, and against c.now that lease,
-- ended a moment after c.now, still looked live and was revived.
UPDATE {{.Locks}} AS t SET
    lock_until     = c.now + $3::interval,
    at_least_until = c.now + $4::interval
FROM (SELECT clock_timestamp() AS now) c
WHERE t.name = $1 AND t.owner = $2 AND t.lock_until > clock_timestamp()
RETURNING t.locked_at, t.lock_until, t.at_least_until, t.fence, t.last_tick
