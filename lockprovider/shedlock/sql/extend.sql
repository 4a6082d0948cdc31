-- Extend: one UPDATE of a live lease held by the owner (see acquire.sql
-- for the holder check). Liveness is checked when the row is locked
-- (clock_timestamp() in WHERE, not c.ts, the statement's start): one that
-- waited behind the owner's release must find the lease ended, not
-- revive it.
-- $1 name, $2 owner, $3 at_most_for, $4 at_least_for.
UPDATE {{.Table}} AS t SET
    lock_until     = {{until "c.ts" "$3::interval"}},
    at_least_until = c.ts + $4::interval
FROM (SELECT clock_timestamp() AS ts) c
WHERE t.name = $1 AND t.owner = $2 AND right(t.locked_by, length($2) + 1) = '#' || $2
  AND {{inst "t.lock_until"}} > clock_timestamp()
RETURNING {{inst "t.locked_at"}}, {{inst "t.lock_until"}}, t.at_least_until, t.fence, t.last_tick
