-- A release that also completes the run row: release.sql's UPDATE as the
-- CTE rel (see ops.go), and an upsert of the run (inserted whole if its
-- row is gone), whatever rel found: a run whose lease was lost still gets
-- its outcome. The answer is whether rel released.
-- $1 name, $2 owner (release.sql), $3 token, $4 tick, $5 locked_by,
-- $6 started, $7 outcome, $8 error, $9 catch_up, $10 manual.
, run AS (
    INSERT INTO {{.Runs}} AS r (job, token, tick, locked_by, started_at, finished_at, outcome, error, catch_up, manual)
    VALUES ($1, $3, $4, $5, $6, clock_timestamp(), $7, $8, $9, $10)
    ON CONFLICT (job, token) DO UPDATE SET
        finished_at = excluded.finished_at,
        outcome     = excluded.outcome,
        error       = excluded.error
)
SELECT count(*) FROM rel
