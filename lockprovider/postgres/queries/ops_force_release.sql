-- Force-release: end the live lease on $1 whoever holds it, notify waiters
-- as release.sql does, and report the freed lease. The row stays, so the
-- next grant's fence is larger. $2 token: unless 0, only the lease with
-- that fence is freed. The run row of the freed lease (the ledger's row
-- of job $1 with token fence), if there is one, records the operator $3
-- and the time: the CTE run, by primary key, in the same statement.
WITH cur AS MATERIALIZED (
    SELECT t.name, t.locked_by, t.locked_at, t.lock_until, t.fence, t.last_tick, t.at_least_until
    FROM {{.Locks}} t
    WHERE t.name = $1 AND t.lock_until > clock_timestamp() AND ($2::bigint = 0 OR t.fence = $2)
    FOR UPDATE
), run AS (
    UPDATE {{.Runs}} AS r SET
        released_by = $3::text,
        released_at = clock_timestamp()
    FROM cur
    WHERE r.job = cur.name AND r.token = cur.fence
)
UPDATE {{.Locks}} AS t SET
    lock_until     = clock_timestamp(),
    at_least_until = clock_timestamp()
FROM cur
WHERE t.name = cur.name
RETURNING cur.locked_by, cur.locked_at, cur.lock_until, cur.fence, cur.last_tick, cur.at_least_until,
    CASE WHEN EXISTS (SELECT 1 FROM {{.Waiters}} w WHERE w.name = t.name AND w.until > clock_timestamp())
    THEN pg_notify('baton_release:' || t.tableoid::text, t.name) END IS NULL
