-- A release that also completes the run row: release.sql's UPDATE as the
-- CTE rel (see ops.go), and an upsert of the run (inserted whole, as the
-- newest, if its row is gone), whatever rel found: a run whose lease was
-- lost still gets its outcome. The answer is whether rel released.
-- $1 name, $2 owner (release.sql), $3 token, $4 tick, $5 locked_by,
-- $6 started, $7 outcome, $8 error, $9 catch_up, $10 manual.
, run AS (
    INSERT INTO {{.Runs}} AS r (job, token, seq, tick, locked_by, started_at, finished_at, outcome, error, catch_up, manual)
    SELECT $1, $3::bigint, COALESCE((SELECT s.seq FROM {{.Runs}} s WHERE s.job = $1 ORDER BY s.token DESC LIMIT 1), 0) + 1,
        $4::timestamptz, $5::text, $6::timestamptz, clock_timestamp(), $7::text, $8::text, $9::boolean, $10::boolean
    ON CONFLICT (job, token) DO UPDATE SET
        finished_at = excluded.finished_at,
        outcome     = excluded.outcome,
        error       = excluded.error
)
SELECT count(*) FROM rel
